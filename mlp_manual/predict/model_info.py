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

    A model file saved without a description (``save_model`` without ``info``) says only its
    inputs: task, loss and ``preprocessing`` are None, and its inputs are used as they are.
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
    split: SplitRecord | None = None  # what defines the run's splits; None outside a run
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
    """Read and check the description in a model file's spec against its ``model``; a spec
    without one (no ``task``) gives only the model's inputs. Raises ModelFileError naming the
    damaged key."""
    if "task" not in spec:
        return ModelInfo(None, None, model.input_width(), None)
    check = SpecCheck(spec, path)
    task, loss = spec["task"], spec.get("loss")
    if task not in TASKS:
        raise check.damaged("task", f"expected one of {', '.join(TASKS)}")
    if not isinstance(loss, str) or loss not in LOSSES or LOSSES[loss].classification != (task == "classification"):
        raise check.damaged("loss", f"expected a {task} loss, one of {', '.join(LOSSES)}")
    n = spec.get("n_features")
    if not _count(n) or model.input_width() not in (None, n):
        raise check.damaged("n_features", f"the model takes {model.input_width()} features")
    preprocessing = check.parsed("preprocess", lambda v: Preprocessing.from_json(v, n))
    outputs = model.output_width(n)
    check.classes(task, LOSSES[loss], outputs)
    check.names({"feature_names": preprocessing.raw_width(n), "target_names": outputs if task == "regression" else 1})
    shape = spec.get("input_shape")
    if shape is not None and not (isinstance(shape, list) and shape and all(_count(d) for d in shape)
                                  and math.prod(shape) == n):
        raise check.damaged("input_shape", f"expected dimensions whose product is {n}")
    version = spec.get("mlp_manual_version")
    if not isinstance(version, str):
        raise check.damaged("mlp_manual_version", "expected a version string")
    split = check.parsed("split", SplitRecord.from_json) if "split" in spec else None
    vocabulary = check.vocabulary(task, model, outputs)
    targets = check.target_preprocessing(task, outputs)
    as_tuple = (lambda v: None if v is None else tuple(v))
    return ModelInfo(task, loss, n, preprocessing, as_tuple(spec.get("classes")), as_tuple(spec.get("feature_names")),
                     as_tuple(spec.get("target_names")), as_tuple(shape), version, split, vocabulary, targets)


class SpecCheck:
    """The checks of the keys of a model file's ``spec`` (at ``path``) that need more than a
    line: each raises ModelFileError naming the damaged key."""

    def __init__(self, spec: dict, path):
        self.spec, self.path = spec, path

    def damaged(self, key: str, why: str) -> ModelFileError:
        shown = repr(self.spec.get(key))
        return ModelFileError(f"{self.path}: damaged model spec ({key}{' ' + shown if len(shown) <= 40 else ''}: {why})")

    def parsed(self, key: str, parse):
        """``parse(spec[key])``; its ValueError says what is damaged."""
        try:
            return parse(self.spec.get(key))
        except ValueError as e:
            raise self.damaged(key, str(e)) from None

    def classes(self, task: str, loss, outputs: int) -> None:
        classes = self.spec.get("classes")
        if task == "regression" and classes is not None:
            raise self.damaged("classes", "a regression model has no classes")
        if task == "classification" and not _labels(classes, loss, outputs):
            raise self.damaged("classes", f"expected distinct labels (all text or all integers) for {outputs} "
                                          f"output{'s' if outputs != 1 else ''} with {loss.name}")

    def names(self, lengths: dict[str, int]) -> None:
        """Each key of ``lengths`` (feature_names, target_names) null, or that many distinct names."""
        for key, length in lengths.items():
            v = self.spec.get(key)
            if v is not None and not (isinstance(v, list) and len(v) == length and all(isinstance(s, str) for s in v)
                                      and len(set(v)) == length):
                raise self.damaged(key, f"expected {length} distinct names")

    def vocabulary(self, task: str, model: Model, outputs: int) -> Vocabulary | None:
        """A text model's characters: one per output but the boundary's, and an embedding row each."""
        if self.spec.get("vocabulary") is None:
            return None
        vocabulary = self.parsed("vocabulary", Vocabulary.from_json)
        first = model.layers[0] if model.layers else None
        rows = first.config().get("vocab") if first is not None and row_of(first).takes_indices else None
        if task != "classification" or outputs != vocabulary.size or rows != vocabulary.size:
            raise self.damaged("vocabulary", f"expected {outputs - 1} characters, one per output but the boundary's, "
                                             "and an embedding with a row for each")
        return vocabulary

    def target_preprocessing(self, task: str, outputs: int) -> Preprocessing | None:
        """The standardization of regression targets (data.target_preprocess), when stored."""
        if "target_preprocess" not in self.spec:
            return None
        targets = self.parsed("target_preprocess", lambda v: Preprocessing.from_json(v, outputs))
        if task != "regression" or targets.kind != "standardize" or targets.fill is not None or targets.categories:
            raise self.damaged("target_preprocess", "expected the standardization of regression targets")
        return targets


def _count(v) -> bool:
    return is_integer(v, 1)


def _labels(classes, loss, outputs: int) -> bool:
    """Distinct class labels, all text or all integers >= 0, as many as the outputs need."""
    if not isinstance(classes, list) or len(classes) < 2 or loss.output_width(len(classes), 1) != outputs:
        return False
    text = all(isinstance(c, str) for c in classes)
    integers = all(is_integer(c, 0) for c in classes)
    return (text or integers) and len(set(classes)) == len(classes)
