"""A saved model evaluated on a split of its run's data. The data is loaded and preprocessed from
the run's config exactly as in training (same seed, so the held-out split is the same), the
model is checked against the data and the loss, then its loss and predictions are computed:
with the confusion matrix for a classifier, with MSE, RMSE, MAE and R² per target for regression.

D = features, C = classes, K = regression targets.
"""

from dataclasses import dataclass
from pathlib import Path

from ..config import load_config
from ..datasets.dataset import target_labels
from ..datasets.load import dataset_label
from ..errors import ConfigError, DataError
from ..model import Model
from ..training.evaluation import (
    Evaluation,
    RegressionEvaluation,
    evaluate_classes,
    evaluate_regression,
)
from ..training.experiment import Experiment, prepare
from .model_file import load_model


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


def evaluate_saved_model(model_path, split: str = "test", *, config_path=None, dataset: str | None = None,
                         data_dir: str | None = None) -> SplitEvaluation:
    """Evaluate the model file at ``model_path`` on ``split`` of the data its run's config
    describes. ``config_path`` defaults to config.yaml beside the model; ``dataset`` and
    ``data_dir`` override the config's data.name and data.data_dir."""
    model_path = Path(model_path)
    config_path = Path(config_path) if config_path else model_path.with_name("config.yaml")
    if not config_path.is_file():
        raise ConfigError(f"{config_path}: no run config beside the model; pass --config")
    overrides = [f"data.name={dataset}"] if dataset else []
    if data_dir:
        overrides.append(f"data.data_dir={data_dir}")
    cfg = load_config(config_path, overrides)
    exp = prepare(cfg)
    model = load_model(model_path)
    d, label = exp.data, dataset_label(cfg.data.name, cfg.data.path)
    X, y = getattr(d, f"X_{split}"), getattr(d, f"y_{split}")  # (N, D), targets as the loss wants them
    if X is None:
        held = [part for part in ("train", "val", "test") if getattr(d, f"X_{part}") is not None]
        raise DataError(f"{label} has no {split} split with this config "
                        f"(data.{split}_fraction is 0); its splits: {', '.join(held)}")
    check_saved_model(model, str(model_path), exp)
    model = model.astype(X.dtype)
    if not exp.loss.classification:
        return SplitEvaluation(label, split, None, evaluate_regression(model, exp.loss, X, y),
                               target_labels(d.target_names, d.target_width))
    result = evaluate_classes(model, exp.loss, X, y, d.n_classes)
    names = list(d.class_names_or_numbers)
    return SplitEvaluation(label, split, names, result)


def check_saved_model(model: Model, name: str, exp: Experiment) -> None:
    """Raise DataError unless the saved ``model`` (called ``name`` in messages) takes the
    experiment's features and has the output units its data and loss need."""
    d, data = exp.data, dataset_label(exp.cfg.data.name, exp.cfg.data.path)
    if model.input_width() not in (None, d.n_features):
        raise DataError(f"{name} takes {model.input_width()} features, {data} has {d.n_features}")
    exp.loss.check_fit(data, d.n_classes, d.target_width, model.output_width(d.n_features), model=name)
