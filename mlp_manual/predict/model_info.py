"""What a model file says about the data its model was trained on: everything prediction needs
besides the weights. It is stored as keys of the model file's JSON spec (never pickle) and
checked against the model when the file is loaded.

D = model inputs, R = raw feature columns (a categorical column is one of R, one per category of D),
C = classes, K = regression targets.
"""

import math
from dataclasses import dataclass

from ..datasets.dataset import Dataset
from ..datasets.preprocessing import Preprocessing
from ..datasets.split_record import SplitRecord
from ..datasets.vocabulary import Vocabulary
from ..errors import ModelFileError
from ..layers.registry import row_of
from ..losses import LOSSES
from ..model import Model
from ..options import is_integer

TASKS = ("classification", "regression")


@dataclass(frozen=True)
class ModelInfo:
    """The data side of a trained model.

    ``preprocessing`` is None for a file written before model files carried it (or saved
    without a description): its inputs are then used as they are.
    """

    task: str | None  # "classification", "regression", or None when the file does not say
    loss: str | None  # a name in ``losses.LOSSES``
    n_features: int | None  # D, the model's inputs
    preprocessing: Preprocessing | None
    classes: tuple | None = None  # (C,) class labels as in the data: text, or integers 0..C-1
    feature_names: tuple[str, ...] | None = None  # (R,) the training CSV's feature columns
    target_names: tuple[str, ...] | None = None  # (K,) regression targets, or (1,) the label column
    input_shape: tuple[int, ...] | None = None  # (H, W) of image data; H * W = D
    version: str | None = None  # the mlp-manual version that wrote the file
    split: SplitRecord | None = None  # what defines the run's splits; None outside a run or in older files
    vocabulary: Vocabulary | None = None  # text data: the characters of indices 1..V-1 (0 is the boundary)
    # regression trained on standardized targets (data.target_preprocess): outputs are inverted by it
    target_preprocessing: Preprocessing | None = None

    @property
    def raw_features(self) -> int | None:
        """R, the columns of a raw row: the model's inputs, but a categorical column is one."""
        if self.n_features is None or self.preprocessing is None:
            return self.n_features
        return self.preprocessing.raw_width(self.n_features)

    @property
    def text(self) -> bool:
        """A model of text: its inputs are character indices, its classes the next character."""
        return self.vocabulary is not None

    @classmethod
    def from_dataset(cls, data: Dataset, loss: str, split: SplitRecord | None = None) -> "ModelInfo":
        """The description of a model trained with ``loss`` on ``data`` (preprocessed), whose
        splits ``split`` defines."""
        from .. import __version__

        classes = None
        if data.classification:
            classes = tuple(data.class_names) if data.class_names else tuple(range(data.n_classes))
        return cls("classification" if data.classification else "regression", loss, data.n_features,
                   data.preprocessing or Preprocessing(), classes, data.feature_names, data.target_names,
                   data.image_shape, __version__, split, data.vocabulary, data.target_preprocessing)

    def to_json(self) -> dict:
        """The keys this description adds to a model file's spec."""
        listed = (lambda v: None if v is None else list(v))
        return {"task": self.task, "loss": self.loss, "n_features": self.n_features,
                "preprocess": self.preprocessing.to_json(), "classes": listed(self.classes),
                "feature_names": listed(self.feature_names), "target_names": listed(self.target_names),
                "input_shape": listed(self.input_shape), "mlp_manual_version": self.version,
                **({"split": self.split.to_json()} if self.split else {}),
                "vocabulary": self.vocabulary.to_json() if self.vocabulary else None,
                **({"target_preprocess": self.target_preprocessing.to_json()} if self.target_preprocessing else {})}


def info_from_spec(spec: dict, model: Model, path) -> ModelInfo:
    """Read and check the description in a model file's spec against its ``model``.

    A spec without ``task`` (a file written before descriptions were stored) gives what its
    old keys say, with no preprocessing. Raises ModelFileError naming the damaged key.
    """
    if "task" not in spec:
        return _legacy_info(spec, model)

    def damaged(key: str, why: str):
        shown = repr(spec.get(key))
        return ModelFileError(f"{path}: damaged model spec ({key}{' ' + shown if len(shown) <= 40 else ''}: {why})")

    task, loss = spec["task"], spec.get("loss")
    if task not in TASKS:
        raise damaged("task", f"expected one of {', '.join(TASKS)}")
    if not isinstance(loss, str) or loss not in LOSSES or LOSSES[loss].classification != (task == "classification"):
        raise damaged("loss", f"expected a {task} loss, one of {', '.join(LOSSES)}")
    n = spec.get("n_features")
    if not _count(n) or model.input_width() not in (None, n):
        raise damaged("n_features", f"the model takes {model.input_width()} features")
    try:
        preprocessing = Preprocessing.from_json(spec.get("preprocess"), n)
    except ValueError as e:
        raise damaged("preprocess", str(e)) from None
    outputs = model.output_width(n)
    classes = spec.get("classes")
    if task == "regression" and classes is not None:
        raise damaged("classes", "a regression model has no classes")
    if task == "classification" and not _labels(classes, LOSSES[loss], outputs):
        raise damaged("classes", f"expected distinct labels (all text or all integers) for {outputs} "
                                 f"output{'s' if outputs != 1 else ''} with {loss}")
    names = {"feature_names": preprocessing.raw_width(n), "target_names": outputs if task == "regression" else 1}
    for key, length in names.items():
        v = spec.get(key)
        if v is not None and not (isinstance(v, list) and len(v) == length and all(isinstance(s, str) for s in v)
                                  and len(set(v)) == length):
            raise damaged(key, f"expected {length} distinct names")
    shape = spec.get("input_shape")
    if shape is not None and not (isinstance(shape, list) and shape and all(_count(d) for d in shape)
                                  and math.prod(shape) == n):
        raise damaged("input_shape", f"expected dimensions whose product is {n}")
    version = spec.get("mlp_manual_version")
    if not isinstance(version, str):
        raise damaged("mlp_manual_version", "expected a version string")
    split = None
    if "split" in spec:
        try:
            split = SplitRecord.from_json(spec["split"])
        except ValueError as e:
            raise damaged("split", str(e)) from None
    vocabulary = spec.get("vocabulary")
    if vocabulary is not None:
        try:
            vocabulary = Vocabulary.from_json(vocabulary)
        except ValueError as e:
            raise damaged("vocabulary", str(e)) from None
        first = model.layers[0] if model.layers else None
        rows = first.config().get("vocab") if first is not None and row_of(first).takes_indices else None
        if task != "classification" or outputs != vocabulary.size or rows != vocabulary.size:
            raise damaged("vocabulary", f"expected {outputs - 1} characters, one per output but the boundary's, "
                                        "and an embedding with a row for each")
    targets = None
    if "target_preprocess" in spec:
        try:
            targets = Preprocessing.from_json(spec["target_preprocess"], outputs)
        except ValueError as e:
            raise damaged("target_preprocess", str(e)) from None
        if task != "regression" or targets.kind != "standardize" or targets.fill is not None or targets.categories:
            raise damaged("target_preprocess", "expected the standardization of regression targets")
    as_tuple = (lambda v: None if v is None else tuple(v))
    return ModelInfo(task, loss, n, preprocessing, as_tuple(classes), as_tuple(spec.get("feature_names")),
                     as_tuple(spec.get("target_names")), as_tuple(shape), version, split, vocabulary, targets)


def _count(v) -> bool:
    return is_integer(v, 1)


def _labels(classes, loss, outputs: int) -> bool:
    """Distinct class labels, all text or all integers >= 0, as many as the outputs need."""
    if not isinstance(classes, list) or len(classes) < 2 or loss.output_width(len(classes), 1) != outputs:
        return False
    text = all(isinstance(c, str) for c in classes)
    integers = all(is_integer(c, 0) for c in classes)
    return (text or integers) and len(set(classes)) == len(classes)


def _legacy_info(spec: dict, model: Model) -> ModelInfo:
    """What a file without a description still tells: its loss (run folders wrote it), hence
    the task and, for classification, integer classes 0..C-1."""
    loss = spec.get("loss") if isinstance(spec.get("loss"), str) and spec["loss"] in LOSSES else None
    n = model.input_width()
    if loss is None or not LOSSES[loss].classification:
        return ModelInfo("regression" if loss else None, loss, n, None)
    n_classes = spec.get("n_classes")
    if not _count(n_classes) or n is None or LOSSES[loss].output_width(n_classes, 1) != model.output_width(n):
        return ModelInfo(None, loss, n, None)
    return ModelInfo("classification", loss, n, None, tuple(range(n_classes)))
