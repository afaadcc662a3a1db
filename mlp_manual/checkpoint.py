"""Checkpoints: everything needed to continue a run exactly where it stopped.

``checkpoint.npz`` holds the model (``model/<name>``), the optimizer state (``optim/<key>``),
the best weights so far (``best/<name>``), the order of an interrupted epoch, and a JSON
``__meta__`` entry with the epoch, step, position, history, early-stopping state and the
states of every random generator. It is written atomically, loaded with allow_pickle=False.
"""

import json
import os

import numpy as np

from .errors import ModelFileError
from .files import write_npz
from .model_file import read_npz
from .trainer import History, Trainer

FORMAT = "mlp-manual-checkpoint/1"


def _generators(trainer: Trainer) -> dict[str, np.random.Generator]:
    gens = {"shuffle": trainer.rng}
    for i, layer in enumerate(trainer.model.layers):
        rng = getattr(layer, "rng", None)
        if isinstance(rng, np.random.Generator):
            gens[f"layers.{i}"] = rng
    return gens


def save_checkpoint(path: str | os.PathLike, trainer: Trainer) -> None:
    """Write the trainer's complete state to ``path`` atomically."""
    arrays = {f"model/{k}": v for k, v in trainer.model.state().items()}
    arrays.update({f"optim/{k}": v for k, v in trainer.optimizer.state_arrays().items()})
    if trainer.best:
        arrays.update({f"best/{k}": v for k, v in trainer.best["state"].items()})
    epoch_state = None
    if trainer.epoch_state:
        arrays["epoch_order"] = trainer.epoch_state["order"]
        epoch_state = {k: v for k, v in trainer.epoch_state.items() if k != "order"}
    meta = {
        "format": FORMAT,
        "epoch": trainer.epoch,
        "step": trainer.step_count,
        "epoch_state": epoch_state,
        "history": trainer.history.columns,
        "best": {"epoch": trainer.best["epoch"], "metrics": trainer.best["metrics"]} if trainer.best else None,
        "best_value": None if not np.isfinite(trainer.best_value) else float(trainer.best_value),
        "bad_epochs": trainer.bad_epochs,
        "rng": {name: g.bit_generator.state for name, g in _generators(trainer).items()},
    }
    arrays["__meta__"] = np.array(json.dumps(meta))
    write_npz(path, arrays)


def load_checkpoint(path: str | os.PathLike) -> dict:
    """Read a checkpoint into {"meta": dict, "arrays": dict}; ModelFileError if it is not one."""
    arrays = read_npz(path, "checkpoint")
    try:
        meta = json.loads(str(arrays.pop("__meta__")))
    except (KeyError, json.JSONDecodeError):
        raise ModelFileError(f"{path}: not an mlp-manual checkpoint (no readable __meta__ entry)") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not an mlp-manual checkpoint")
    return {"meta": meta, "arrays": arrays}


def restore(trainer: Trainer, ckpt: dict, path) -> None:
    """Put a loaded checkpoint's state into a freshly built trainer of the same config."""
    meta, arrays = ckpt["meta"], ckpt["arrays"]
    expected = trainer.model.state()
    for k, v in expected.items():
        a = arrays.get(f"model/{k}")
        if a is None or a.shape != v.shape:
            raise ModelFileError(f"{path}: the checkpoint does not match the model of the run's config "
                                 f"({k}: {None if a is None else a.shape} vs {v.shape})")
    trainer.model.load_state({k: arrays[f"model/{k}"] for k in expected})
    trainer.optimizer.load_state_arrays({k[6:]: v for k, v in arrays.items() if k.startswith("optim/")})
    trainer.epoch, trainer.step_count = meta["epoch"], meta["step"]
    trainer.history = History({k: list(v) for k, v in meta["history"].items()})
    trainer.bad_epochs = meta["bad_epochs"]
    trainer.best_value = np.inf if meta["best_value"] is None else meta["best_value"]
    if meta["best"]:
        trainer.best = {**meta["best"], "state": {k: arrays[f"best/{k}"] for k in expected}}
    if meta["epoch_state"] is not None:
        trainer.epoch_state = {**meta["epoch_state"], "order": arrays["epoch_order"]}
    gens = _generators(trainer)
    for name, state in meta["rng"].items():
        if name in gens:
            gens[name].bit_generator.state = state
