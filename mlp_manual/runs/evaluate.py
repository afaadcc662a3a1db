"""A saved model evaluated on a split of its run's data. The data is loaded and preprocessed from
the run's config exactly as in training (same seed, so the held-out split is the same), the
model is checked against the data and the loss, then its loss and predictions are computed:
with the confusion matrix for a classifier, with MSE, RMSE, MAE and R² per target for regression,
and for a text model the loss per character and perplexity of every split.

D = features, C = classes, K = regression targets, T = context, V = vocabulary.
"""

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import load_config
from ..datasets.dataset import target_labels
from ..datasets.load import dataset_label
from ..datasets.vocabulary import BOUNDARY
from ..errors import ConfigError, DataError
from ..model import Model
from ..training.evaluation import (
    Evaluation,
    RegressionEvaluation,
    count_correct,
    evaluate_classes,
    evaluate_regression,
    model_outputs,
)
from ..training.experiment import Experiment, prepare
from .model_file import read_model
from .model_info import ModelInfo


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
class SavedRun:
    """A model file and the experiment its run's config prepares: the data split as in training."""

    path: Path
    exp: Experiment
    model: Model  # in evaluation mode, in the run's dtype
    info: ModelInfo

    @property
    def label(self) -> str:
        return dataset_label(self.exp.cfg.data.name, self.exp.cfg.data.path)

    def split(self, split: str):
        """X (N, D) and y (targets as the loss wants them) of ``split``, after the model file is
        checked against the data; DataError when the config holds no such split."""
        d = self.exp.data
        X, y = getattr(d, f"X_{split}"), getattr(d, f"y_{split}")
        if X is None:
            raise DataError(f"{self.label} has no {split} split with this config "
                            f"(data.{split}_fraction is 0); its splits: {', '.join(splits_held(d))}")
        check_saved_model(self.model, str(self.path), self.exp, self.info)
        return X, y


def load_saved_run(model_path, *, config_path=None, dataset: str | None = None,
                   data_dir: str | None = None) -> SavedRun:
    """The model file at ``model_path`` and the data its run's config describes. ``config_path``
    defaults to config.yaml beside the model; ``dataset`` and ``data_dir`` override the config's
    data.name and data.data_dir."""
    model_path = Path(model_path)
    config_path = Path(config_path) if config_path else model_path.with_name("config.yaml")
    if not config_path.is_file():
        raise ConfigError(f"{config_path}: no run config beside the model; pass --config")
    overrides = [f"data.name={dataset}"] if dataset else []
    if data_dir:
        overrides.append(f"data.data_dir={data_dir}")
    cfg = load_config(config_path, overrides)
    exp = prepare(cfg)
    model, info = read_model(model_path)
    return SavedRun(model_path, exp, model.astype(np.dtype(cfg.dtype)), info)


def splits_held(data) -> list[str]:
    """The splits a dataset has: train, then val and test when the config holds them out."""
    return [part for part in ("train", "val", "test") if getattr(data, f"X_{part}") is not None]


def evaluate_saved_model(model_path, split: str = "test", *, config_path=None, dataset: str | None = None,
                         data_dir: str | None = None) -> SplitEvaluation:
    """Evaluate the model file at ``model_path`` on ``split`` of the data its run's config
    describes; arguments as for ``load_saved_run``."""
    return evaluate_split(load_saved_run(model_path, config_path=config_path, dataset=dataset, data_dir=data_dir),
                          split)


def evaluate_split(run: SavedRun, split: str) -> SplitEvaluation:
    """The saved model's results on ``split``: per class, or per target for regression."""
    X, y = run.split(split)  # (N, D), targets as the loss wants them
    exp, model, d = run.exp, run.model, run.exp.data
    if not exp.loss.classification:
        return SplitEvaluation(run.label, split, None, evaluate_regression(model, exp.loss, X, y),
                               target_labels(d.target_names, d.target_width))
    result = evaluate_classes(model, exp.loss, X, y, d.n_classes)
    names = list(d.class_names_or_numbers)
    return SplitEvaluation(run.label, split, names, result)


def evaluate_text(run: SavedRun, splits=None) -> list[TextSplit]:
    """A text model's loss per character, perplexity and accuracy on ``splits`` (default: every
    split the run's config holds out)."""
    results = []
    for split in splits or splits_held(run.exp.data):
        X, y = run.split(split)  # (N, T) contexts, (N,) next characters
        out = model_outputs(run.model, X)  # (N, V)
        loss, _ = run.exp.loss.fn(out, y)
        correct = count_correct(run.exp.loss, out, y)
        results.append(TextSplit(split, int((y == BOUNDARY).sum()), len(y), float(loss), correct / len(y)))
    return results


def check_saved_model(model: Model, name: str, exp: Experiment, info: ModelInfo | None = None) -> None:
    """Raise DataError unless the saved ``model`` (called ``name`` in messages) takes the
    experiment's features and has the output units its data and loss need; with the model file's
    ``info``, a text model must also have the data's vocabulary."""
    d, data = exp.data, dataset_label(exp.cfg.data.name, exp.cfg.data.path)
    if model.input_width() not in (None, d.n_features):
        raise DataError(f"{name} takes {model.input_width()} features, {data} has {d.n_features}")
    exp.loss.check_fit(data, d.n_classes, d.target_width, model.output_width(d.n_features), model=name)
    if info is not None and d.text and info.vocabulary != d.vocabulary:
        model_chars = info.vocabulary.describe() if info.vocabulary else "none (it was not trained on text)"
        raise DataError(f"{name} was trained on the characters {model_chars}, but the training words of {data} "
                        f"have {d.vocabulary.describe()}")
