"""From a validated config to everything a run needs: data, model, loss, and random generators.

One seed drives three independent generators (data, init and dropout, shuffling),
so changing the batch order never changes the initial weights, and one seed reproduces a
run bit for bit.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..config import Config
from ..datasets import Dataset, load_dataset
from ..errors import ConfigError, DataError
from ..losses import LOSSES, LossSpec
from ..model import Model, build_model


@dataclass
class Experiment:
    cfg: Config
    data: Dataset  # X arrays in the run's dtype; y as the loss wants them
    model: Model
    loss: LossSpec
    train_rng: np.random.Generator  # batch order


def run_generators(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """The three independent generators one seed gives: data (splits), init (weights and
    dropout), training (batch order)."""
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))


def prepare(cfg: Config) -> Experiment:
    """Load the data, build the model for it, and check that data, model and loss fit together."""
    dtype = np.dtype(cfg.dtype)
    data_rng, init_rng, train_rng = run_generators(cfg.seed)
    data = load_dataset(cfg.data, data_rng, dtype)
    loss = LOSSES[cfg.loss]
    if loss.classification and not data.classification:
        raise DataError(f"{cfg.loss} needs class labels, but {cfg.data.name} is a regression dataset; use mse")
    if cfg.loss == "bce_with_logits" and data.n_classes != 2:
        raise DataError(f"bce_with_logits needs 2 classes, {cfg.data.name} has {data.n_classes}; "
                        "use softmax_cross_entropy")
    if cfg.training.batch_size > len(data.X_train):
        raise ConfigError(f"training.batch_size {cfg.training.batch_size} is larger than the "
                          f"{len(data.X_train)} training samples")
    if any(s["type"] == "batchnorm" for s in cfg.model.layers):
        rows = cfg.training.batch_size // cfg.optimizer.accumulate  # the smallest micro-batch
        if rows < 2:
            raise ConfigError(f"batchnorm needs at least 2 rows per batch, but training.batch_size "
                              f"{cfg.training.batch_size} split over optimizer.accumulate {cfg.optimizer.accumulate} "
                              f"gives {rows}")
    out_width = loss.output_width(data.n_classes, data.target_width)
    model = build_model(list(cfg.model.layers), data.n_features, out_width,
                        init_rng, dtype, cfg.model.init)
    width = model.output_width(data.n_features)
    loss.check_output(width)
    if not loss.classification and width != data.target_width:
        raise DataError(f"the model has {width} outputs but {cfg.data.name} has {data.target_width} "
                        f"target column{'s' if data.target_width != 1 else ''}")
    if loss.classification and cfg.loss == "softmax_cross_entropy" and width != data.n_classes:
        raise DataError(f"the model has {width} outputs but {cfg.data.name} has {data.n_classes} classes")
    targets = {f"y_{p}": None if getattr(data, f"y_{p}") is None else loss.targets(getattr(data, f"y_{p}"), dtype)
               for p in ("train", "val", "test")}
    return Experiment(cfg, replace(data, **targets), model, loss, train_rng)
