"""The training loop: batches, forward, loss, backward in reverse, optimizer step, metrics.

N = samples, B = batch size, D = features, K = output units.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .config import Config
from .losses import LossSpec
from .model import Model
from .optimizers import Optimizer, clip_grad_norm, make_optimizer
from .schedules import Schedule


def evaluate(model: Model, loss: LossSpec, X: np.ndarray, y: np.ndarray, batch_size: int = 2048) -> dict:
    """Mean loss (and accuracy for classification) over (X, y) in evaluation mode.

    Inputs: X (N, D); y as ``loss.targets`` makes it. Returns: {"loss": .., "acc": ..}.
    """
    was_training = [layer.training for layer in model.layers]
    model.eval()
    total, correct = 0.0, 0
    for i in range(0, len(X), batch_size):
        out = model.forward(X[i:i + batch_size])  # (B, K)
        yb = y[i:i + batch_size]
        value, _ = loss.fn(out, yb)
        total += value * len(out)
        if loss.classification:
            labels = yb if yb.ndim == 1 else yb[:, 0]
            correct += int((loss.predict(out) == labels).sum())
    for layer, mode in zip(model.layers, was_training):
        layer.train(mode)
    metrics = {"loss": total / len(X)}
    if loss.classification:
        metrics["acc"] = correct / len(X)
    return metrics


def batch_bounds(n: int, batch_size: int) -> list[tuple[int, int]]:
    """(start, stop) of each batch; a last batch of one row joins the one before it, so that
    batch statistics (BatchNorm) always see at least two rows."""
    bounds = [(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] == 1:
        bounds[-2:] = [(bounds[-2][0], n)]
    return bounds


@dataclass
class History:
    """One list per metric, one entry per epoch (plain lists, easy to plot)."""

    columns: dict[str, list] = field(default_factory=dict)

    def append(self, row: dict) -> None:
        for k, v in row.items():
            self.columns.setdefault(k, []).append(v)

    def __getitem__(self, key: str) -> list:
        return self.columns[key]

    def rows(self) -> list[dict]:
        keys = list(self.columns)
        return [dict(zip(keys, vals)) for vals in zip(*self.columns.values())]


class Trainer:
    """Runs the configured training of ``model`` with ``loss`` on (train, val) arrays.

    ``on_epoch(row)`` is called after each epoch with that epoch's metrics.
    """

    def __init__(self, model: Model, loss: LossSpec, cfg: Config, rng: np.random.Generator,
                 on_epoch: Callable[[dict], None] | None = None):
        self.model, self.loss, self.cfg, self.rng = model, loss, cfg, rng
        self.optimizer: Optimizer = make_optimizer(cfg.optimizer)
        self.on_epoch = on_epoch or (lambda row: None)
        self.history = History()
        self.step_count = 0
        self.best: dict = {}
        self.stopped_early = False

    def train_step(self, Xb: np.ndarray, yb: np.ndarray, lr: float) -> tuple[float, int]:
        """One optimizer update on a batch, accumulated over ``optimizer.accumulate`` micro-batches.

        Each micro-batch's loss gradient is weighted by its share of the batch, so the summed
        gradients equal those of the whole batch at once. Returns (mean loss, correct predictions).
        """
        model, n = self.model, len(Xb)
        parts = np.array_split(np.arange(n), min(self.cfg.optimizer.accumulate, n))
        total, correct, summed = 0.0, 0, None
        for idx in parts:
            Xm, ym = (Xb, yb) if len(parts) == 1 else (Xb[idx], yb[idx])
            out = model.forward(Xm)  # (B, K)
            value, dout = self.loss.fn(out, ym)
            if len(parts) > 1:
                dout *= dout.dtype.type(len(idx) / n)
            model.backward(dout)
            total += value * len(idx) / n
            if self.loss.classification:
                labels = ym if ym.ndim == 1 else ym[:, 0]
                correct += int((self.loss.predict(out) == labels).sum())
            if len(parts) > 1:
                grads = [g[k] for _, _, g, k in model.named_params()]
                summed = [x.copy() for x in grads] if summed is None else [s + x for s, x in zip(summed, grads)]
        if summed is not None:
            for (_, _, g, k), s in zip(model.named_params(), summed):
                g[k] = s
        if self.cfg.optimizer.clip_norm:
            clip_grad_norm(model, self.cfg.optimizer.clip_norm)
        self.optimizer.step(model, lr)
        self.step_count += 1
        return total, correct

    def fit(self, X: np.ndarray, y: np.ndarray, X_val: np.ndarray | None = None,
            y_val: np.ndarray | None = None) -> History:
        """Train for the configured epochs (or until early stopping) and return the history."""
        tcfg, es = self.cfg.training, self.cfg.training.early_stopping
        bounds = batch_bounds(len(X), tcfg.batch_size)
        schedule = Schedule(self.cfg.schedule, self.cfg.optimizer.lr, len(bounds), tcfg.epochs)
        monitor = es.monitor if X_val is not None else "train_loss"
        sign = -1.0 if monitor.endswith("acc") else 1.0  # minimise sign * metric
        best_value, bad_epochs = np.inf, 0
        self.model.train()
        for epoch in range(1, tcfg.epochs + 1):
            start = time.perf_counter()
            order = self.rng.permutation(len(X)) if tcfg.shuffle else np.arange(len(X))
            lr = schedule.lr(self.step_count)
            loss_sum, correct = 0.0, 0
            for a, b in bounds:
                idx = order[a:b]
                lr = schedule.lr(self.step_count)
                value, right = self.train_step(X[idx], y[idx], lr)
                loss_sum += value * (b - a)
                correct += right
            row = {"epoch": epoch, "lr": lr, "train_loss": loss_sum / len(X)}
            if self.loss.classification:
                row["train_acc"] = correct / len(X)
            if X_val is not None:
                row.update({f"val_{k}": v for k, v in evaluate(self.model, self.loss, X_val, y_val).items()})
            row["seconds"] = time.perf_counter() - start
            self.history.append(row)
            self.on_epoch(row)
            value = sign * row[monitor]
            if value < best_value - es.min_delta:
                best_value, bad_epochs = value, 0
                self.best = {"epoch": epoch, "metrics": dict(row),
                             "state": {k: v.copy() for k, v in self.model.state().items()}}
            else:
                bad_epochs += 1
                if es.patience and bad_epochs >= es.patience:
                    self.stopped_early = True
                    break
        if es.restore_best and es.patience and self.best:
            self.model.load_state(self.best["state"])
        return self.history
