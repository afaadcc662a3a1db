"""A saved model evaluated on a split of its run's data, or on a labelled file as a whole; a text
model on every split, in nats per character and perplexity.

The run's split is rebuilt from its config (same seed, same fractions) after checking the model
file's record of what defined it: a data file that changed since training is refused, since its
"test" rows may now include training rows. Inputs are preprocessed with the model file's own
statistics, never fitted again. Then the loss and predictions are computed: with the confusion
matrix for a classifier, with MSE, RMSE, MAE and R² per target for regression.

D = features, C = classes, K = regression targets, T = context, V = vocabulary.
"""

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..config import load_config
from ..datasets.csvfile import CsvOptions, read_csv
from ..datasets.dataset import Dataset, target_labels
from ..datasets.load import LOADERS, dataset_label
from ..datasets.split_record import SplitRecord
from ..datasets.vocabulary import BOUNDARY
from ..errors import ConfigError, DataError, MLPManualError
from ..layers.user_modules import check_user_layers
from ..losses import LOSSES, LossSpec
from ..model import Model
from ..predict.model_file import read_model
from ..predict.model_info import ModelInfo
from ..training.evaluation import (
    Evaluation,
    RegressionEvaluation,
    count_correct,
    evaluate_classes,
    evaluate_regression,
    model_outputs,
)
from ..training.experiment import run_data, run_loss


@dataclass(frozen=True)
class SplitEvaluation:
    dataset: str  # dataset_label: the config's data.name; for csv, the file's name
    split: str  # "train", "val" or "test"
    class_names: list[str] | None  # (C,); None for regression
    result: Evaluation | RegressionEvaluation
    target_names: list[str] | None = None  # (K,) for regression

    @property
    def classification(self) -> bool:
        return isinstance(self.result, Evaluation)


@dataclass(frozen=True)
class TextSplit:
    """A text model's results on one split: loss in nats per character (the boundary token that
    ends each word counts as one), its perplexity exp(loss), and next-character accuracy."""

    split: str
    words: int
    characters: int  # examples: every character of every word, and the end of each word
    loss: float
    accuracy: float

    @property
    def perplexity(self) -> float:
        return math.exp(self.loss)


@dataclass(frozen=True)
class RunData:
    """A model file and its run's data, rebuilt as in training after checking the split record."""

    model: Model
    info: ModelInfo
    data: Dataset  # preprocessed with the model file's statistics, targets as the loss wants them
    label: str  # dataset_label of the run's data
    loss: LossSpec
    part_files: dict  # split -> the file it was read from, for a split with a file of its own

    def split(self, split: str):
        """X (N, D) and y of ``split``; DataError when the config holds no such split."""
        X, y = getattr(self.data, f"X_{split}"), getattr(self.data, f"y_{split}")
        if X is None:
            held = splits_held(self.data)
            raise DataError(f"{self.label} has no {split} split with this config "
                            f"(data.{split}_fraction is 0); its splits: {', '.join(held)}")
        return X, y


def splits_held(data: Dataset) -> list[str]:
    """The splits a dataset has: train, then val and test when the config holds them out."""
    return [part for part in ("train", "val", "test") if getattr(data, f"X_{part}") is not None]


def load_run_data(model_path, *, config_path=None, dataset: str | None = None, data_dir: str | None = None,
                  split: str = "test") -> RunData:
    """The model file at ``model_path`` and its run's data. ``config_path`` defaults to config.yaml
    beside the model; ``dataset`` and ``data_dir`` override the config's data.name and
    data.data_dir. Raises DataError when the run's data files are no longer the ones it split
    (see ``SplitRecord``; ``split`` names the split asked for, in the message)."""
    model_path = Path(model_path)
    overrides = [f"data.name={dataset}"] if dataset else []
    if data_dir:
        overrides.append(f"data.data_dir={data_dir}")
    cfg = load_config(_run_config(model_path, config_path), overrides)
    model, info = read_model(model_path)
    label = dataset_label(cfg.data.name, cfg.data.path)
    d = run_data(cfg, info.preprocessing, info.target_preprocessing)  # a missing data file is named by its loader
    check_user_layers(model, d.X_train)
    if info.split is not None and not dataset:  # another dataset, asked for by name, has its own split
        difference = info.split.difference(SplitRecord.of(cfg.seed, cfg.data))
        if difference:
            raise DataError(f"{model_path}: cannot rebuild the run's {split} split of {label}: {difference}. "
                            f"To evaluate a file as it is now, as a whole, pass it with --data FILE")
    loss = run_loss(cfg, d, label)  # the loss the run reported, smoothed or weighted as it was
    check_saved_model(model, str(model_path), d, label, loss)
    if d.text and info.vocabulary != d.vocabulary:
        model_chars = info.vocabulary.describe() if info.vocabulary else "none (it was not trained on text)"
        raise DataError(f"{model_path} was trained on the characters {model_chars}, but the training words of "
                        f"{label} have {d.vocabulary.describe()}")
    parts = {part: getattr(cfg.data, f"{part}_path", None) for part in ("train", "val", "test")}
    model = model.astype(np.dtype(cfg.dtype))
    return RunData(model, info, d, label, loss, {k: v for k, v in parts.items() if v})


def is_text_model(model_path, config_path=None) -> bool:
    """Whether the run of the model file at ``model_path`` trained on text (its config's data.name
    is a text dataset); False when its config cannot be read (the evaluation then says why)."""
    try:
        cfg = load_config(_run_config(Path(model_path), config_path))
    except MLPManualError:
        return False
    return getattr(LOADERS[cfg.data.name], "text", False)


def evaluate_saved_model(model_path, split: str = "test", *, config_path=None, dataset: str | None = None,
                         data_dir: str | None = None) -> SplitEvaluation:
    """Evaluate the model file at ``model_path`` on ``split`` of the data its run's config
    describes; arguments as for ``load_run_data``."""
    run = load_run_data(model_path, config_path=config_path, dataset=dataset, data_dir=data_dir, split=split)
    X, y = run.split(split)  # (N, D), targets as the loss wants them
    part_file = run.part_files.get(split)  # a split read from a file of its own
    return _evaluate(run.model.astype(X.dtype), run.loss, Path(part_file).name if part_file else run.label, split,
                     X, y, run.data)


def evaluate_text(run: RunData, splits=None) -> list[TextSplit]:
    """A text model's loss per character, perplexity and accuracy on ``splits`` (default: every
    split the run's config holds out)."""
    results = []
    for split in splits or splits_held(run.data):
        X, y = run.split(split)  # (N, T) contexts, (N,) next characters
        out = model_outputs(run.model, X)  # (N, V)
        loss, _ = run.loss.fn(out, y)
        results.append(TextSplit(split, int((y == BOUNDARY).sum()), len(y), float(loss),
                                 count_correct(run.loss, out, y) / len(y)))
    return results


def evaluate_file(model_path, path, *, config_path=None) -> SplitEvaluation:
    """Evaluate the model file at ``model_path`` on every row of the labelled CSV ``path``, read
    with the run config's column settings (data.target, header, delimiter) and preprocessed with
    the model file's statistics; its class labels must be among the model's."""
    model_path = Path(model_path)
    cfg = load_config(_run_config(model_path, config_path))
    if not Path(path).is_file():
        raise DataError(f"{path}: no such file")
    model, info = read_model(model_path)
    if info.task is None or info.preprocessing is None:
        raise DataError(f"{model_path}: this model file does not describe its data (it was saved without a "
                        "description), so a file cannot be evaluated with it; evaluate its run's split instead")
    p = info.preprocessing
    options = CsvOptions(target=cfg.data.target, header=cfg.data.header, delimiter=cfg.data.delimiter,
                         decimal=p.decimal, task=info.task, columns=cfg.data.columns, drop=cfg.data.drop,
                         missing=cfg.data.missing, missing_values=p.missing_values or (), unseen_category=p.unseen)
    by_name = {}
    if info.feature_names and cfg.data.header:  # the model's features, by name, as mlp-predict matches them
        options, by_name = replace(options, columns=info.feature_names, drop=()), {"columns_from": str(model_path)}
    table = read_csv(path, options, every_class=False, known=p.categories, **by_name)
    name = Path(path).name
    if table.X.shape[1] != info.raw_features:
        raise DataError(f"{path}: has {table.X.shape[1]} feature columns, {model_path} takes {info.raw_features}")
    if info.feature_names and table.feature_names and table.feature_names != info.feature_names:
        raise DataError(f"{path}: its feature columns {', '.join(table.feature_names)} are not the model's "
                        f"({', '.join(info.feature_names)})")
    y = _model_classes(table, info, path) if info.task == "classification" else table.y
    dtype = model.dtype
    X = p.apply(table.X.astype(np.float64), dtype)  # (N, D)
    check_user_layers(model, X)
    loss = LOSSES[info.loss]
    n_classes = len(info.classes) if info.classes else None
    targets = info.target_preprocessing
    if targets is not None:  # the file's targets in the units the model was trained on
        y = targets.apply(y)
    d = Dataset(name, X, y, n_classes=n_classes, class_names=tuple(map(str, info.classes)) if info.classes else None,
                target_names=info.target_names, target_preprocessing=targets)
    return _evaluate(model, loss, name, "whole file", X, loss.targets(y, dtype), d)


def _run_config(model_path: Path, config_path) -> Path:
    if config_path:
        return Path(config_path)  # a missing or unreadable file is named when it is read
    config_path = model_path.with_name("config.yaml")
    if not config_path.is_file():
        raise ConfigError(f"{config_path}: no run config beside the model; pass --config")
    return config_path


def _model_classes(table, info: ModelInfo, path) -> np.ndarray:
    """The file's labels (N,) as indices into the model's classes; DataError for one it lacks."""
    labels = table.class_names if table.class_names is not None else None
    classes = list(info.classes)
    if labels is not None:  # text labels, numbered by the file's own sorted order
        if not all(isinstance(c, str) for c in classes):
            raise DataError(f"{path}: has text class labels, the model's classes are {_shown(classes)}")
        missing = sorted(set(labels[i] for i in np.unique(table.y)) - set(classes))
        if missing:
            raise DataError(f"{path}: class label {missing[0]!r} is not one of the model's classes ({_shown(classes)})")
        return np.array([classes.index(labels[i]) for i in table.y], dtype=np.int64)
    if not all(isinstance(c, int) for c in classes):
        raise DataError(f"{path}: has integer class labels, the model's classes are {_shown(classes)}")
    unknown = sorted(set(table.y.tolist()) - set(classes))
    if unknown:
        raise DataError(f"{path}: class label {unknown[0]} is not one of the model's classes ({_shown(classes)})")
    return np.array([classes.index(v) for v in table.y.tolist()], dtype=np.int64)


def _shown(classes) -> str:
    return ", ".join(map(str, classes[:6])) + (", ..." if len(classes) > 6 else "")


def _evaluate(model: Model, loss, label: str, split: str, X, y, d: Dataset) -> SplitEvaluation:
    if not loss.classification:
        return SplitEvaluation(label, split, None, evaluate_regression(model, loss, X, y, d.target_preprocessing),
                               target_labels(d.target_names, d.target_width))
    return SplitEvaluation(label, split, list(d.class_names_or_numbers), evaluate_classes(model, loss, X, y, d.n_classes))


def check_saved_model(model: Model, name: str, d: Dataset, data: str, loss: LossSpec) -> None:
    """Raise DataError unless the saved ``model`` (called ``name`` in messages) takes the features
    of ``d`` (called ``data``) and has the output units its data and ``loss`` need."""
    if model.input_width() not in (None, d.n_features):
        raise DataError(f"{name} takes {model.input_width()} features, {data} has {d.n_features}")
    loss.check_fit(data, d.n_classes, d.target_width, model.output_width(d.n_features), model=name)
