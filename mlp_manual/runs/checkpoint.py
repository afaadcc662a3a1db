"""Checkpoints: everything needed to continue a run exactly where it stopped.

``checkpoint.npz`` holds the model (``model/<name>``), the optimizer state (``optim/<key>``),
the best weights so far (``best/<name>``), the order of an interrupted epoch, and a JSON
``__meta__`` entry with the epoch, step, position, history, early-stopping state and the
states of every random generator. It is written atomically, loaded with allow_pickle=False.
"""

import json
import os

import numpy as np

from ..errors import ModelFileError
from ..files import write_npz
from ..training.early_stopping import EarlyStopping
from ..training.epoch_position import EpochPosition
from ..training.state_checks import is_count
from ..training.trainer import History, Trainer
from .model_file import read_npz

FORMAT = "mlp-manual-checkpoint/1"


def _generators(trainer: Trainer) -> dict[str, np.random.Generator]:
    gens = {"shuffle": trainer.rng}
    for name, layer in trainer.model.named_layers():  # a block's inner layers too (dropout in a residual)
        rng = getattr(layer, "rng", None)
        if isinstance(rng, np.random.Generator):
            gens[name] = rng
    return gens


def save_checkpoint(path: str | os.PathLike, trainer: Trainer) -> None:
    """Write the trainer's complete state to ``path`` atomically."""
    arrays = {f"model/{k}": v for k, v in trainer.model.state().items()}
    arrays.update({f"optim/{k}": v for k, v in trainer.optimizer.state_arrays().items()})
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
    arrays["__meta__"] = np.array(json.dumps(meta))
    write_npz(path, arrays)


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
            raise ModelFileError(f"{path}: damaged checkpoint (__meta__ {key} is {meta.get(key)!r}, expected {what})")


def _check_arrays(trainer: Trainer, meta: dict, arrays: dict, path) -> None:
    """The checkpoint's arrays fit the run's model and optimizer, before any of them is used."""
    expected = trainer.model.state()
    params = {name: p[k] for name, p, _, k in trainer.model.named_params()}
    wanted = [("model", expected)] + ([("best", expected)] if meta["best"] else [])
    wanted += [(f"optim/{s}", params) for s in trainer.optimizer.slots]
    for prefix, like in wanted:
        for k, v in like.items():
            a = arrays.get(f"{prefix}/{k}")
            if prefix.startswith("optim/") and a is None:
                continue  # slots are created on first use
            if a is None or a.shape != v.shape:
                raise ModelFileError(f"{path}: the checkpoint does not match the model of the run's config "
                                     f"({prefix}/{k}: {None if a is None else a.shape} vs {v.shape})")
            if not np.issubdtype(a.dtype, np.floating) or not np.all(np.isfinite(a)):
                raise ModelFileError(f"{path}: damaged checkpoint ({prefix}/{k} is not finite floating point)")
    known = {"optim/t"} | {f"optim/{s}/{k}" for s in trainer.optimizer.slots for k in params}
    strange = [k for k in arrays if k.startswith("optim/") and k not in known]
    if strange:
        raise ModelFileError(f"{path}: the checkpoint's optimizer state does not match the run's optimizer "
                             f"{trainer.cfg.optimizer.name} ({strange[0]})")
    t = arrays.get("optim/t")
    if t is None or t.shape != () or t.dtype.kind not in "iu" or t < 0:
        raise ModelFileError(f"{path}: damaged checkpoint (optimizer step count optim/t is missing or invalid)")


def restore(trainer: Trainer, ckpt: dict, path, n_train: int | None = None) -> None:
    """Put a loaded checkpoint's state into a freshly built trainer of the same config.

    Everything is checked first; ``n_train`` (the number of training rows) lets the order of
    an interrupted epoch be checked too.
    """
    meta, arrays = ckpt["meta"], ckpt["arrays"]
    _check_arrays(trainer, meta, arrays, path)
    try:
        position = EpochPosition.from_state(meta, arrays, n_train)
    except ValueError as e:
        raise ModelFileError(f"{path}: {e}") from None
    expected = trainer.model.state()
    trainer.model.load_state({k: arrays[f"model/{k}"] for k in expected})
    trainer.optimizer.load_state_arrays({k[6:]: v for k, v in arrays.items() if k.startswith("optim/")})
    trainer.epoch, trainer.step_count = meta["epoch"], meta["step"]
    trainer.history = History({k: list(v) for k, v in meta["history"].items()})
    trainer.early_stopping.load_state(meta, arrays)
    trainer.position = position
    gens = _generators(trainer)
    for name, state in meta["rng"].items():
        if name in gens:
            try:
                gens[name].bit_generator.state = state
            except (TypeError, ValueError, KeyError, OverflowError):
                raise ModelFileError(f"{path}: damaged checkpoint (random generator state {name!r})") from None
