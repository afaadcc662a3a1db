"""Checkpoints: everything needed to continue a run exactly where it stopped.

``checkpoint.npz`` holds the model (``model/<name>``), the optimizer state (``optim/<key>``),
the best weights so far (``best/<name>``), the order of an interrupted epoch, and a JSON
``__meta__`` entry with the epoch, step, position, history, early-stopping state and the
states of every random generator. It is written atomically, loaded with allow_pickle=False.
"""

import json
import os

import numpy as np

from ..datasets.split_record import SplitRecord
from ..devices import to_numpy
from ..errors import DataError, ModelFileError, short_repr
from ..files import read_npz, write_npz
from ..optimizers import load_state_arrays, row_of, state_arrays, used_slots
from ..training.early_stopping import EarlyStopping
from ..training.epoch_position import EpochPosition
from ..training.history import History
from ..training.state_checks import is_count
from ..training.trainer import Trainer, batch_bounds

FORMAT = "mlp-manual-checkpoint/1"


def _generators(trainer: Trainer) -> dict[str, np.random.Generator]:
    gens = {"shuffle": trainer.rng}
    for name, layer in trainer.model.named_layers():  # a block's inner layers too (dropout in a residual)
        rng = getattr(layer, "rng", None)
        if isinstance(rng, np.random.Generator):
            gens[name] = rng
    return gens


def save_checkpoint(path: str | os.PathLike, trainer: Trainer, split: SplitRecord | None = None) -> None:
    """Write the trainer's complete state to ``path`` atomically, with the ``split`` record of the
    data it trains on (``refuse_other_data`` compares it on resume)."""
    arrays = {f"model/{k}": to_numpy(v) for k, v in trainer.model.state().items()}  # numpy on disk, whatever the device
    arrays.update({f"optim/{k}": to_numpy(v) for k, v in state_arrays(trainer.optimizer).items()})
    meta = {
        "format": FORMAT,
        "epoch": trainer.epoch,
        "step": trainer.step_count,
        "epoch_state": None,  # between epochs: no position to save
        "history": trainer.history.columns,
        "rng": {name: g.bit_generator.state for name, g in _generators(trainer).items()},
    }
    for part in (trainer.early_stopping, trainer.position):
        if part is not None:
            part_meta, part_arrays = part.state()
            meta.update(part_meta)
            arrays.update(part_arrays)
    if split is not None:
        meta["split"] = split.to_json()
    arrays["__meta__"] = np.array(json.dumps(meta))
    write_npz(path, arrays)


def refuse_other_data(ckpt: dict, now: SplitRecord | None, path) -> None:
    """DataError when the data a resume is about to train on is not the data the checkpoint at
    ``path`` was trained on (a data file changed, another seed or fractions): its splits would
    differ, and the resumed run would not be the run. A checkpoint saved without a record
    (``save_checkpoint`` without ``split``) is not compared."""
    if now is None or "split" not in ckpt["meta"]:
        return
    try:
        record = SplitRecord.from_json(ckpt["meta"]["split"])
    except ValueError as e:
        raise ModelFileError(f"{path}: damaged checkpoint (__meta__ split: {e})") from None
    difference = record.difference(now)
    if difference:
        raise DataError(f"{path}: cannot resume on other data: {difference}. Put the run's data back, or start a "
                        "new run")


def load_checkpoint(path: str | os.PathLike) -> dict:
    """Read a checkpoint into {"meta": dict, "arrays": dict}; ModelFileError if it is not one."""
    arrays = read_npz(path, "checkpoint")
    raw = arrays.pop("__meta__", None)
    if raw is None and "__spec__" in arrays:
        raise ModelFileError(f"{path}: this is a model file, not a checkpoint")
    try:
        if raw is None or raw.shape != () or raw.dtype.kind != "U":
            raise ValueError
        meta = json.loads(str(raw))
    except (ValueError, RecursionError):
        raise ModelFileError(f"{path}: not an mlp-manual checkpoint (no readable __meta__ entry)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not an mlp-manual checkpoint")
    _check_meta(meta, path)
    return {"meta": meta, "arrays": arrays}


META_CHECKS = {
    "epoch": (is_count, "a count"),
    "step": (is_count, "a count"),
    "history": (lambda v: isinstance(v, dict) and all(isinstance(c, list) for c in v.values()),
                "a mapping of metric lists"),
    "rng": (lambda v: isinstance(v, dict) and all(isinstance(s, dict) for s in v.values()),
            "a mapping of generator states"),
    **EarlyStopping.META_CHECKS,
    **EpochPosition.META_CHECKS,
}


def _check_meta(meta: dict, path) -> None:
    """Every ``__meta__`` entry present with the JSON type ``save_checkpoint`` writes."""
    for key, (ok, what) in META_CHECKS.items():
        if key not in meta or not ok(meta[key]):
            raise ModelFileError(f"{path}: damaged checkpoint (__meta__ {key} is {short_repr(meta.get(key))}, "
                                 f"expected {what})")


def _check_arrays(trainer: Trainer, meta: dict, arrays: dict, path) -> None:
    """The checkpoint's arrays are exactly those of the run's model and optimizer: every name,
    shape and dtype, finite values, and second moments that are not negative."""
    expected = trainer.model.state()
    params = {name: p for name, p, _ in trainer.model.parameters()}
    optimizer = trainer.optimizer
    t = arrays.get("optim/t")
    if t is None or t.shape != () or t.dtype.kind not in "iu" or int(t) != meta["step"]:
        shown = "missing" if t is None else f"{short_repr(t.item())}" if t.shape == () else f"of shape {t.shape}"
        raise ModelFileError(f"{path}: damaged checkpoint (the optimizer's step count optim/t is {shown}, "
                             f"the checkpoint's step {short_repr(meta['step'])})")
    wanted = {f"model/{k}": v for k, v in expected.items()}
    wanted.update({f"best/{k}": v for k, v in expected.items() if meta["best"]})
    wanted.update({f"optim/{s}/{k}": v for s in (used_slots(optimizer) if t > 0 else ()) for k, v in params.items()})
    strange = [k for k in arrays if k not in wanted and k not in ("optim/t", "epoch_order")]
    foreign = [k for k in strange if k.startswith("optim/") and k.split("/")[1] not in optimizer.slots]
    if foreign:
        raise ModelFileError(f"{path}: the checkpoint's optimizer state does not match the run's optimizer "
                             f"{trainer.plan.optimizer} ({short_repr(foreign[0])})")
    kept = [k for k in strange if k.startswith("optim/")]
    if kept:
        raise ModelFileError(f"{path}: damaged checkpoint (optimizer state {short_repr(kept[0])} "
                             f"{'before the first step' if t == 0 else 'that this optimizer never keeps'})")
    if strange:
        raise ModelFileError(f"{path}: damaged checkpoint (unexpected array {short_repr(strange[0])})")
    for name, like in wanted.items():
        a = arrays.get(name)
        if a is None and name.startswith("optim/"):
            raise ModelFileError(f"{path}: damaged checkpoint (the optimizer state {name} is missing)")
        if a is None or a.shape != like.shape:
            raise ModelFileError(f"{path}: the checkpoint does not match the model of the run's config "
                                 f"({name}: {None if a is None else a.shape} vs {like.shape})")
        if a.dtype != like.dtype or not np.all(np.isfinite(a)):
            raise ModelFileError(f"{path}: damaged checkpoint ({name} is not finite {like.dtype})")
        if name.split("/")[1] in row_of(optimizer).non_negative and np.any(a < 0):
            raise ModelFileError(f"{path}: damaged checkpoint ({name}, a running average of squares, "
                                 "has negative entries)")


def _check_history(trainer: Trainer, meta: dict, path, validation: bool | None) -> None:
    """One number per epoch run in each of the columns training writes (with or without
    validation when ``validation`` is None), the epoch column counting 1, 2, ..."""
    history, epochs = meta["history"], meta["epoch"]
    names = trainer.metric_names(validation=bool(validation) if validation is not None else "val_loss" in history)
    if epochs == 0:
        names = []
    if list(history) != names:
        raise ModelFileError(f"{path}: damaged checkpoint (history columns {short_repr(list(history))}, "
                             f"expected {short_repr(names)})")
    for name, column in history.items():
        if len(column) != epochs:
            raise ModelFileError(f"{path}: damaged checkpoint (history column {name} has {len(column)} entries "
                                 f"for {epochs} epochs)")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in column):
            raise ModelFileError(f"{path}: damaged checkpoint (history column {name} holds "
                                 f"{short_repr(column)}, not numbers)")
    if history and history["epoch"] != list(range(1, epochs + 1)):
        raise ModelFileError(f"{path}: damaged checkpoint (history epochs {short_repr(history['epoch'])})")


def _check_progress(trainer: Trainer, meta: dict, arrays: dict, path, n_train: int | None,
                    validation: bool | None) -> EpochPosition | None:
    """Epoch, step, history, early stopping and the position inside an epoch agree with each
    other and with the run's config; returns the position (None between epochs)."""
    epochs = trainer.plan.epochs
    if meta["epoch"] > epochs or (meta["epoch"] == epochs and meta["epoch_state"] is not None):
        raise ModelFileError(f"{path}: damaged checkpoint (epoch {meta['epoch']}"
                             f"{' and a position inside the next' if meta['epoch_state'] else ''}, but the run's "
                             f"config has {epochs} epochs)")
    _check_history(trainer, meta, path, validation)
    batches = None if n_train is None else batch_bounds(n_train, trainer.plan.batch_size)
    try:
        trainer.early_stopping.check_state(meta, meta["history"])
        position = EpochPosition.from_state(meta, arrays, n_train, batches)
    except ValueError as e:
        raise ModelFileError(f"{path}: damaged checkpoint ({e})") from None
    if batches is not None:
        steps = meta["epoch"] * len(batches) + (position.next_batch if position else 0)
        if meta["step"] != steps:
            raise ModelFileError(f"{path}: damaged checkpoint (step {short_repr(meta['step'])}, but "
                                 f"{meta['epoch']} epochs of {len(batches)} batches"
                                 f"{' and the batches of the position' if position else ''} make {steps})")
    return position


def _check_generators(trainer: Trainer, meta: dict, path) -> None:
    """A state for exactly the run's random generators, each one its generator accepts."""
    gens = _generators(trainer)
    if set(meta["rng"]) != set(gens):
        raise ModelFileError(f"{path}: damaged checkpoint (random generator states for "
                             f"{short_repr(sorted(meta['rng']))}, the run has {sorted(gens)})")
    for name, state in meta["rng"].items():
        try:
            type(gens[name].bit_generator)().state = state
        except (TypeError, ValueError, KeyError, OverflowError):
            raise ModelFileError(f"{path}: damaged checkpoint (random generator state {name!r})") from None


def restore(trainer: Trainer, ckpt: dict, path, n_train: int | None = None, validation: bool | None = None) -> None:
    """Put a loaded checkpoint's state into a freshly built trainer of the same config.

    Everything is checked before anything changes: the arrays against the model and optimizer,
    the history, early stopping and step count against each other and the config, the random
    generators. ``n_train`` (the number of training rows) lets the position inside an interrupted
    epoch and the step count be checked too; ``validation`` (whether the run has a validation
    set) the history's columns.
    """
    meta, arrays = ckpt["meta"], ckpt["arrays"]
    _check_arrays(trainer, meta, arrays, path)
    position = _check_progress(trainer, meta, arrays, path, n_train, validation)
    _check_generators(trainer, meta, path)
    expected = trainer.model.state()
    trainer.model.load_state({k: arrays[f"model/{k}"] for k in expected})
    load_state_arrays(trainer.optimizer, {k[6:]: v for k, v in arrays.items() if k.startswith("optim/")})
    trainer.epoch, trainer.step_count = meta["epoch"], meta["step"]
    trainer.history = History({k: list(v) for k, v in meta["history"].items()})
    trainer.early_stopping.load_state(meta, arrays)
    trainer.position = position
    for name, generator in _generators(trainer).items():
        generator.bit_generator.state = meta["rng"][name]
