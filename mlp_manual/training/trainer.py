"""The training loop: batches, forward, loss, backward in reverse, optimizer step, metrics.

It also keeps everything a checkpoint needs to resume bit for bit (epoch, step, position in
the epoch, early-stopping state), stops cleanly when asked to, and stops with the name of the
layer at fault when the loss or a gradient stops being finite.

N = samples, B = batch size, D = features, K = output units.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..config import Config
from ..errors import DataError, TrainingDiverged, TrainingInterrupted
from ..losses import LossSpec
from ..model import Model
from ..optimizers import Optimizer, clip_grad_norm, grad_norm, make_optimizer
from ..schedules import Schedule
from .diagnostics import Recorder, forward_watched, locate_nonfinite
from .evaluation import class_labels, model_outputs


def evaluate(model: Model, loss: LossSpec, X: np.ndarray, y: np.ndarray) -> dict:
    """Mean loss (and accuracy for classification) over (X, y) in evaluation mode.

    Inputs: X (N, D); y as ``loss.targets`` makes it. Returns: {"loss": .., "acc": ..}.
    """
    out = model_outputs(model, X)  # (N, K)
    metrics = {"loss": loss.fn(out, y)[0]}
    if loss.classification:
        metrics["acc"] = count_correct(loss, out, y) / len(X)
    return metrics


def count_correct(loss: LossSpec, out: np.ndarray, y: np.ndarray) -> int:
    """Correct class predictions in a batch of outputs (N, K)."""
    return int((loss.predict(out) == class_labels(y)).sum())


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


class Trainer:
    """Runs the configured training of ``model`` with ``loss`` on (train, val) arrays.

    ``on_epoch(row)`` is called after each epoch with its metrics, before ``on_checkpoint()``,
    which is called at every ``training.checkpoint_every``-th epoch and when training is
    interrupted. Set ``stop_requested`` (e.g. from a signal handler) to stop after the
    current step with TrainingInterrupted.
    """

    def __init__(self, model: Model, loss: LossSpec, cfg: Config, rng: np.random.Generator,
                 on_epoch: Callable[[dict], None] | None = None,
                 on_checkpoint: Callable[[], None] | None = None,
                 recorder: Recorder | None = None):
        self.model, self.loss, self.cfg, self.rng = model, loss, cfg, rng
        self.optimizer: Optimizer = make_optimizer(cfg.optimizer)
        self.on_epoch = on_epoch or (lambda row: None)
        self.on_checkpoint = on_checkpoint or (lambda: None)
        self.recorder = recorder
        self.history = History()
        self.epoch = 0  # completed epochs
        self.step_count = 0
        self.epoch_state: dict | None = None  # position inside an interrupted epoch
        self.best: dict = {}
        self.best_value, self.bad_epochs = np.inf, 0
        self.stopped_early = False
        self.stop_requested = False

    def train_step(self, Xb: np.ndarray, yb: np.ndarray, lr: float, watch=None) -> tuple[float, int]:
        """One optimizer update on a batch, accumulated over ``optimizer.accumulate`` micro-batches.

        Each micro-batch's loss gradient is weighted by its share of the batch, so the summed
        gradients equal those of the whole batch at once. Raises TrainingDiverged, before any
        weight changes, when the loss or a gradient is not finite.
        Returns (mean loss, correct predictions).
        """
        model, n = self.model, len(Xb)
        parts = min(self.cfg.optimizer.accumulate, n)
        if parts == 1:
            total, correct = self._forward_backward(Xb, yb, watch)
        else:
            total, correct, summed = 0.0, 0, None
            for i, idx in enumerate(np.array_split(np.arange(n), parts)):
                share = len(idx) / n
                value, right = self._forward_backward(Xb[idx], yb[idx], watch if i == 0 else None, share)
                total, correct = total + value * share, correct + right
                grads = [g[k] for _, _, g, k in model.named_params()]
                summed = [x.copy() for x in grads] if summed is None else [s + x for s, x in zip(summed, grads)]
            for (_, _, g, k), s in zip(model.named_params(), summed):
                g[k] = s
        with np.errstate(over="ignore", invalid="ignore"):
            norm = grad_norm(model)
        if not (np.isfinite(total) and np.isfinite(norm)):
            raise TrainingDiverged(self.step_count, locate_nonfinite(model, self.loss.fn, Xb, yb))
        if self.cfg.optimizer.clip_norm:
            clip_grad_norm(model, self.cfg.optimizer.clip_norm, norm)
        self.optimizer.step(model, lr)
        self.step_count += 1
        return total, correct

    def _forward_backward(self, X: np.ndarray, y: np.ndarray, watch, share: float = 1.0) -> tuple[float, int]:
        """Forward, loss and backward on one (micro-)batch whose loss gradient is weighted by its
        ``share`` of the whole batch. Returns (mean loss, correct predictions)."""
        out = self.model.forward(X) if watch is None else forward_watched(self.model, X, watch)  # (B, K)
        value, dout = self.loss.fn(out, y)
        if share != 1.0:
            dout *= dout.dtype.type(share)
        self.model.backward(dout, input_grad=False)
        return value, count_correct(self.loss, out, y) if self.loss.classification else 0

    def _record_every(self, steps_per_epoch: int) -> int:
        every = self.cfg.diagnostics.every
        return every if every > 0 else steps_per_epoch

    def fit(self, X: np.ndarray, y: np.ndarray, X_val: np.ndarray | None = None,
            y_val: np.ndarray | None = None) -> History:
        """Train from the current epoch to the configured last one (or until early stopping)."""
        tcfg, es = self.cfg.training, self.cfg.training.early_stopping
        if len(X) == 0:
            raise DataError("there are no training samples")
        if self.epoch_state is not None and len(self.epoch_state["order"]) != len(X):
            raise DataError(f"the interrupted epoch's batch order covers {len(self.epoch_state['order'])} samples, "
                            f"the training data has {len(X)}")
        bounds = batch_bounds(len(X), tcfg.batch_size)
        schedule = Schedule(self.cfg.schedule, self.cfg.optimizer.lr, len(bounds), tcfg.epochs)
        monitor = es.monitor if X_val is not None else "train_loss"
        sign = -1.0 if monitor.endswith("acc") else 1.0  # minimise sign * metric
        every = self._record_every(len(bounds))
        # every batch is gathered into this one array: no batch-sized allocation per step
        batch = np.empty((max(hi - lo for lo, hi in bounds), *X.shape[1:]), dtype=X.dtype)  # (B, D)
        self.model.train()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # non-finite values are caught per step
            for epoch in range(self.epoch + 1, tcfg.epochs + 1):
                start = time.perf_counter()
                state = self.epoch_state or {"order": self.rng.permutation(len(X)) if tcfg.shuffle else np.arange(len(X)),
                                             "next_batch": 0, "loss_sum": 0.0, "correct": 0, "seconds": 0.0}
                self.epoch_state = None
                order = state["order"]
                lr = schedule.lr(max(self.step_count - 1, 0))
                for b in range(state["next_batch"], len(bounds)):
                    lo, hi = bounds[b]
                    idx = order[lo:hi]
                    lr = schedule.lr(self.step_count)
                    step = self.step_count
                    record = self.recorder is not None and (step + 1) % every == 0
                    before = {name: p[k].copy() for name, p, _, k in self.model.named_params()} if record else None
                    Xb = np.take(X, idx, axis=0, out=batch[:hi - lo], mode="clip")  # idx is always in range
                    value, right = self.train_step(Xb, y[idx], lr,
                                                   self.recorder.record_activations(step) if record else None)
                    if record:
                        self.recorder.record_step(step, self.model, before)
                    state["loss_sum"] += value * (hi - lo)
                    state["correct"] += right
                    if self.stop_requested:
                        state.update(next_batch=b + 1, seconds=state["seconds"] + time.perf_counter() - start)
                        self.epoch_state = state
                        self.on_checkpoint()
                        raise TrainingInterrupted()
                row = {"epoch": epoch, "lr": lr, "train_loss": state["loss_sum"] / len(X)}
                if self.loss.classification:
                    row["train_acc"] = state["correct"] / len(X)
                if X_val is not None:
                    row.update({f"val_{k}": v for k, v in evaluate(self.model, self.loss, X_val, y_val).items()})
                row["seconds"] = state["seconds"] + time.perf_counter() - start
                self.history.append(row)
                self.epoch = epoch
                self.on_epoch(row)
                value = sign * row[monitor]
                if value < self.best_value - es.min_delta:
                    self.best_value, self.bad_epochs = value, 0
                    self.best = {"epoch": epoch, "metrics": dict(row),
                                 "state": {k: v.copy() for k, v in self.model.state().items()}}
                else:
                    self.bad_epochs += 1
                self.stopped_early = bool(es.patience) and self.bad_epochs >= es.patience
                if tcfg.checkpoint_every and (epoch % tcfg.checkpoint_every == 0 or self.stopped_early
                                              or epoch == tcfg.epochs):
                    self.on_checkpoint()
                if self.stopped_early:
                    break
        if es.restore_best and es.patience and self.best:
            self.model.load_state(self.best["state"])
        return self.history
