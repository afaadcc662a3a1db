"""From a validated config to everything a run needs: data, model, loss, and random generators.

One seed drives three independent generators (data, init and dropout, shuffling), and a fourth
stream for the augmentation of training images (datasets/augment.py), so changing the batch
order never changes the initial weights, and one seed reproduces a run bit for bit.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..config import Config
from ..config.memory import check_memory
from ..datasets import Dataset, load_dataset
from ..datasets.augment import RandomAugment
from ..datasets.load import LOADERS, dataset_label
from ..datasets.preprocessing import Preprocessing
from ..datasets.synthetic import Generated
from ..datasets.split_record import SplitRecord
from ..errors import ConfigError
from ..layers.registry import LAYERS, all_specs
from ..layers.user_modules import check_user_layers
from ..losses import LOSSES, LossSpec, class_weights
from ..model import Model, build_model
from .early_stopping import StopRule
from .trainer import TrainingPlan


@dataclass
class Experiment:
    cfg: Config
    data: Dataset  # X arrays in the run's dtype; y as the loss wants them
    model: Model
    loss: LossSpec
    train_rng: np.random.Generator  # batch order
    split: SplitRecord | None = None  # what defines the data's splits, for the model file
    augment: RandomAugment | None = None  # what changes the training batches' images (data.augment_*)


def run_generators(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """The three independent generators one seed gives: data (splits), init (weights and
    dropout), training (batch order)."""
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))


def training_plan(cfg: Config) -> TrainingPlan:
    """The config's keys the trainer reads, handed over as plain values."""
    t, o, s, stop = cfg.training, cfg.optimizer, cfg.schedule, cfg.training.early_stopping
    return TrainingPlan(
        epochs=t.epochs, batch_size=t.batch_size, shuffle=t.shuffle, lr=o.lr, optimizer=o.name,
        optimizer_options=dict(o.options), weight_decay=o.weight_decay, clip_norm=o.clip_norm,
        accumulate=o.accumulate, schedule=s.name, schedule_options=dict(s.options),
        early_stopping=StopRule(stop.monitor, stop.patience, stop.min_delta, stop.restore_best),
        checkpoint_seconds=t.checkpoint_seconds, checkpoint_every=t.checkpoint_every,
        diagnostics_every=cfg.diagnostics.every, device=cfg.device)


def run_loss(cfg: Config, data: Dataset, label: str) -> LossSpec:
    """The loss a run of ``cfg`` minimises and reports on ``data`` (called ``label``): the loss
    named by loss.name, checked against the data, with loss.label_smoothing and
    loss.class_weights (weights from the training split)."""
    loss = LOSSES[cfg.loss.name]
    loss.check_fit(label, data.n_classes, data.target_width, task_key=data.task_key)
    if cfg.loss.label_smoothing:
        loss = loss.with_label_smoothing(cfg.loss.label_smoothing)
    if cfg.loss.class_weights is not None:
        if not loss.classification:
            raise ConfigError(f"loss.class_weights weighs classes, but {cfg.loss.name} fits real-valued targets")
        weights = class_weights(cfg.loss.class_weights, data.y_train, data.n_classes, data.class_names_or_numbers)
        loss = loss.with_class_weights(weights.astype(np.dtype(cfg.dtype)))
    return loss


def prepare(cfg: Config) -> Experiment:
    """Load the data, build the model for it, and check that data, model and loss fit together."""
    dtype = np.dtype(cfg.dtype)
    data_rng, init_rng, train_rng = run_generators(cfg.seed)
    split = SplitRecord.of(cfg.seed, cfg.data)  # the files as they are read now
    generated = isinstance(LOADERS[cfg.data.name], Generated)
    if generated:  # its size is the config's: estimated before it is made
        check_memory(cfg, cfg.source)
    data = load_dataset(cfg.data, data_rng, dtype)
    label = dataset_label(cfg.data.name, cfg.data.path)
    loss = run_loss(cfg, data, label)
    if cfg.training.batch_size > len(data.X_train):
        raise ConfigError(f"training.batch_size {cfg.training.batch_size} is larger than the "
                          f"{len(data.X_train)} training samples of {label}")
    rows = cfg.training.batch_size // cfg.optimizer.accumulate  # the smallest micro-batch
    for spec in all_specs(cfg.model.layers):
        if rows < (need := LAYERS[spec["type"]].min_train_rows):
            raise ConfigError(f"{spec['type']} needs at least {need} rows per batch, but training.batch_size "
                              f"{cfg.training.batch_size} split over optimizer.accumulate {cfg.optimizer.accumulate} "
                              f"gives {rows}")
    check_indices(cfg, data, label)
    out_width = loss.output_width(data.n_classes, data.target_width)
    if not generated:  # a file's size is known once it is read (its reader refuses what cannot be read)
        splits = [a for a in (data.X_train, data.y_train, data.X_val, data.y_val, data.X_test, data.y_test)
                  if a is not None]
        check_memory(cfg, cfg.source, data.n_features, out_width, len(data.X_train),
                     loaded=(sum(a.nbytes for a in splits), max(len(a) for a in splits)))
    model = build_model(list(cfg.model.layers), data.n_features, out_width,
                        init_rng, dtype, cfg.model.init, data.vocabulary.size if data.text else None)
    loss.check_fit(label, data.n_classes, data.target_width, model.output_width(data.n_features))
    check_user_layers(model, data.X_train)
    return Experiment(cfg, loss_targets(data, loss, dtype), model, loss, train_rng, split, augmenter(cfg, data))


def augmenter(cfg: Config, data: Dataset) -> RandomAugment | None:
    """The random shifts and flips of training images that ``data.augment_shift`` and
    ``data.augment_flip`` ask for (datasets/augment.py; only image datasets declare them), or None."""
    shift, flip = cfg.data.augment_shift, cfg.data.augment_flip
    if not (shift or flip):
        return None
    raw_empty = np.zeros((1, data.n_features))  # an image of background only, before preprocessing
    background = raw_empty if data.preprocessing is None else data.preprocessing.apply(raw_empty)
    return RandomAugment(shift, flip, data.image_shape, background[0], cfg.seed)


def loss_targets(data: Dataset, loss: LossSpec, dtype) -> Dataset:
    """``data`` with every split's targets as ``loss`` wants them."""
    targets = {f"y_{p}": None if getattr(data, f"y_{p}") is None else loss.targets(getattr(data, f"y_{p}"), dtype)
               for p in ("train", "val", "test")}
    return replace(data, **targets)


def run_data(cfg: Config, fitted: Preprocessing | None = None, fitted_targets: Preprocessing | None = None) -> Dataset:
    """The run's data as ``prepare`` loads it, the same splits from the same seed, with the targets
    the loss wants; preprocessed with ``fitted`` (a model file's statistics) when given, and its
    targets with ``fitted_targets``, instead of statistics fitted again on the training split."""
    dtype = np.dtype(cfg.dtype)
    data = load_dataset(cfg.data, run_generators(cfg.seed)[0], dtype, fitted, fitted_targets)
    return loss_targets(data, LOSSES[cfg.loss.name], dtype)


def check_indices(cfg: Config, data: Dataset, label: str) -> None:
    """ConfigError unless the model's first layer takes indices (an embedding) exactly when the
    data is text, whose inputs are character indices."""
    first = cfg.model.layers[0]["type"] if cfg.model.layers else None
    takes_indices = first is not None and LAYERS[first].takes_indices
    if data.text and not takes_indices:
        raise ConfigError(f"{label} gives character indices (a context of {data.n_features} per example); the "
                          f"model's first layer must turn them into vectors, an embedding such as "
                          f"{{type: embedding, dim: 10}}, but model.layers[0] is {first or 'missing'}")
    if takes_indices and not data.text:
        raise ConfigError(f"model.layers[0] ({first}) looks up characters: it needs a text dataset (data.name "
                          f"names or text), but {label} gives numbers")
