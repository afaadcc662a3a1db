"""Early stopping: watch one metric per epoch, keep the best epoch's weights, and stop after
``patience`` epochs in which it did not improve by more than ``min_delta``.

Without a validation set the training loss is watched. The state is saved in checkpoints
under the ``__meta__`` keys ``best``, ``best_value``, ``bad_epochs``, ``stopped_early`` and the
arrays ``best/<model state name>``.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..devices import to_numpy
from ..errors import ConfigError
from .state_checks import is_count, is_number


@dataclass(frozen=True)
class StopRule:
    """What to watch and how long to wait (training.early_stopping: its keys and defaults)."""

    monitor: str  # val_loss or val_acc
    patience: int  # epochs without improvement; 0 turns early stopping off
    min_delta: float  # the least change that counts as an improvement
    restore_best: bool  # end with the best epoch's weights


class EarlyStopping:
    """Decides after each epoch whether training goes on, and remembers the best epoch.

    ``best_value`` is the best watched value times ``sign`` (-1 for accuracies, 1 for losses),
    so that lower is always better.
    """

    META_CHECKS = {
        "bad_epochs": (is_count, "a count"),
        "best_value": (lambda v: v is None or is_number(v), "a number or null"),
        "best": (lambda v: v is None or (isinstance(v, dict) and is_count(v.get("epoch"))
                                         and isinstance(v.get("metrics"), dict)), "null or the best epoch"),
        "stopped_early": (lambda v: isinstance(v, bool), "true or false"),
    }

    def __init__(self, monitor: str = "val_loss", patience: int = 0, min_delta: float = 0.0,
                 restore_best: bool = True):
        self.monitor, self.patience, self.min_delta, self.restore_best = monitor, patience, min_delta, restore_best
        self.best_value = np.inf
        self.bad_epochs = 0
        self.best_epoch: int | None = None
        self.best_metrics: dict = {}
        self.best_weights: dict[str, np.ndarray] = {}  # the model's state at the best epoch
        self.stopped = False

    @classmethod
    def chosen(cls, rule: StopRule, classification: bool) -> "EarlyStopping":
        """Early stopping by ``rule`` for a loss that reports accuracy (``classification``) or not."""
        if rule.monitor.endswith("_acc") and not classification:
            raise ConfigError(f"training.early_stopping.monitor is {rule.monitor}, but this loss reports no "
                              "accuracy; watch val_loss")
        return cls(rule.monitor, rule.patience, rule.min_delta, rule.restore_best)

    def watched(self, row: dict) -> str:
        """The metric watched in an epoch's ``row``: the monitor, or train_loss without validation."""
        return self.monitor if self.monitor in row else "train_loss"

    def update(self, row: dict, model) -> bool:
        """Take an epoch's metrics ``row`` and the ``model`` after it; return whether to stop."""
        metric = self.watched(row)
        sign = -1.0 if metric.endswith("acc") else 1.0
        value = sign * row[metric]
        if value < self.best_value - self.min_delta:
            self.best_value, self.bad_epochs = value, 0
            self.best_epoch, self.best_metrics = row["epoch"], dict(row)
            self.best_weights = {k: to_numpy(v).copy() for k, v in model.state().items()}  # on the host
        else:
            self.bad_epochs += 1
        self.stopped = bool(self.patience) and self.bad_epochs >= self.patience
        return self.stopped

    @property
    def restores(self) -> bool:
        """Whether ``restore`` puts the best epoch's weights back: early stopping is on
        (patience > 0), ``restore_best`` is set, and an epoch has been seen."""
        return bool(self.restore_best and self.patience and self.best_weights)

    def restore(self, model) -> None:
        """Put the best epoch's weights back into ``model`` when ``restores``."""
        if self.restores:
            model.load_state(self.best_weights)

    def stop_message(self, row: dict) -> str:
        """The line that reports a stop after the epoch of metrics ``row``, e.g. ``early stopping at
        epoch 40: val_loss has not improved by min_delta (0) for 15 epochs; best epoch 25, weights
        restored``."""
        kept = "weights restored" if self.restores else "final weights kept (restore_best is false)"
        return (f"early stopping at epoch {row['epoch']}: {self.watched(row)} has not improved by min_delta "
                f"({self.min_delta:g}) for {self.bad_epochs} epochs; best epoch {self.best_epoch}, {kept}")

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(checkpoint ``__meta__`` entries, checkpoint arrays) of this object."""
        best = None if self.best_epoch is None else {"epoch": self.best_epoch, "metrics": self.best_metrics}
        meta = {"best": best, "best_value": float(self.best_value) if np.isfinite(self.best_value) else None,
                "bad_epochs": self.bad_epochs, "stopped_early": self.stopped}
        return meta, {f"best/{k}": v for k, v in self.best_weights.items()}

    def check_state(self, meta: dict, history: dict[str, list]) -> None:
        """Raise ValueError unless ``meta`` (passed ``META_CHECKS``) is the state this object has
        after the epochs of ``history`` (a checked history of ``meta["epoch"]`` rows): the best
        epoch one of them, its metrics that epoch's row, the best value its watched metric, and
        the epochs without improvement those after it."""
        epochs, best = meta["epoch"], meta["best"]
        if best is None:
            if meta["best_value"] is not None or meta["bad_epochs"] != epochs:
                raise ValueError("no best epoch, but a best value or a count of epochs without improvement "
                                 "that does not fit")
            return
        if not 1 <= best["epoch"] <= epochs:
            raise ValueError(f"best epoch {best['epoch']} is not one of the {epochs} epochs run")
        row = {k: column[best["epoch"] - 1] for k, column in history.items()}
        if best["metrics"].keys() != row.keys() or not all(_same(best["metrics"][k], v) for k, v in row.items()):
            raise ValueError(f"the best epoch's metrics are not those of epoch {best['epoch']} in the history")
        metric = self.watched(row)
        if not _same(meta["best_value"], (-1.0 if metric.endswith("acc") else 1.0) * row[metric]):
            raise ValueError(f"best value {meta['best_value']} is not the {metric} of the best epoch")
        if meta["bad_epochs"] != epochs - best["epoch"]:
            raise ValueError(f"{meta['bad_epochs']} epochs without improvement, but the best epoch "
                             f"{best['epoch']} is {epochs - best['epoch']} epochs back")

    def load_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        """Inverse of ``state``, from a checkpoint whose ``meta`` passed ``META_CHECKS``."""
        self.bad_epochs, self.stopped = meta["bad_epochs"], meta["stopped_early"]
        self.best_value = np.inf if meta["best_value"] is None else meta["best_value"]
        best = meta["best"] or {"epoch": None, "metrics": {}}
        self.best_epoch, self.best_metrics = best["epoch"], best["metrics"]
        self.best_weights = {k[5:]: v for k, v in arrays.items() if k.startswith("best/")} if meta["best"] else {}


def _same(a, b) -> bool:
    """Equal numbers, NaN equal to NaN (a JSON round trip keeps every other float exact)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
