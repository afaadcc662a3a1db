"""The training loop: batches, forward, loss, backward in reverse, optimizer step, metrics.

It also keeps everything a checkpoint needs to resume bit for bit (epoch, step, position in
the epoch, early-stopping state), stops cleanly when asked to, and stops with the name of the
layer at fault when the loss or a gradient stops being finite.

N = samples, B = batch size, D = features, K = output units.
"""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NoReturn

import numpy as np

from ..core import Optimizer, clip_grad_norm, grad_norm
from ..core.namespace import like, namespace
from ..devices import HOST, Device, device, move_model, move_optimizer_state, to_numpy
from ..errors import DataError, TrainingDiverged, TrainingInterrupted
from ..losses import LossSpec
from ..model import Model
from ..schedules import Schedule
from .diagnostics import Recorder, forward_watched, locate_nonfinite
from .early_stopping import EarlyStopping, StopRule
from .epoch_position import EpochPosition
from .evaluation import count_correct, evaluate
from .fast_paths import backward_without_data_grad, fast_optimizer
from .fast_paths import grad_norm as fast_grad_norm
from .history import History


def batch_bounds(n: int, batch_size: int) -> list[tuple[int, int]]:
    """(start, stop) of each batch; a last batch of one row joins the one before it, so that
    batch statistics (BatchNorm) always see at least two rows."""
    bounds = [(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] == 1:
        bounds[-2:] = [(bounds[-2][0], n)]
    return bounds


@dataclass(frozen=True)
class TrainingPlan:
    """What the trainer is asked to do, as plain values (a run config's hand-over:
    ``training/experiment.py: training_plan``). The keys' meanings and defaults are the config's."""

    epochs: int  # training.epochs
    batch_size: int  # training.batch_size
    shuffle: bool  # training.shuffle
    lr: float  # optimizer.lr, the schedule's base rate
    optimizer: str  # optimizer.name, with its options (optimizers.py)
    optimizer_options: dict
    weight_decay: float  # optimizer.weight_decay
    clip_norm: float | None  # optimizer.clip_norm
    accumulate: int  # optimizer.accumulate: micro-batches per step
    schedule: str  # schedule.name, with its options (schedules.py)
    schedule_options: dict
    early_stopping: StopRule  # training.early_stopping
    checkpoint_seconds: float  # training.checkpoint_seconds
    checkpoint_every: int  # training.checkpoint_every
    diagnostics_every: int  # diagnostics.every: steps between records, 0 once an epoch
    device: str = "cpu"  # device: where the steps compute (devices.py)


# (epoch, steps done in the epoch, its steps, mean training loss of the epoch so far), after every step
StepCallback = Callable[[int, int, int, float], None]
# (batch (B, D), epoch, batch index) -> the batch as trained on (datasets/augment.py)
Augment = Callable[[np.ndarray, int, int], np.ndarray]


def _no_report(epoch: int, done: int, steps: int, loss: float) -> None:
    """The StepCallback of a trainer nobody watches (a module function, so trainers pickle)."""


class Trainer:
    """Runs the training ``plan`` (a TrainingPlan) of ``model`` with ``loss`` on (train, val) arrays.

    ``on_epoch(row)`` is called after each epoch with its metrics, ``on_step`` (a StepCallback)
    after every step. ``on_checkpoint()`` is called after a step or an epoch once
    ``training.checkpoint_seconds`` of training have passed since the last call, at every
    ``training.checkpoint_every``-th epoch, when training ends and when it is interrupted. Set
    ``stop_requested`` (e.g. from a signal handler) to stop after the current step with
    TrainingInterrupted; set ``halted`` to a reason (e.g. from ``on_epoch``: a sweep pruning the
    run) to end training after the current epoch as if it were the last. ``halted`` is not saved
    in a checkpoint: a resumed run trains on to its configured end.

    What a checkpoint saves: ``epoch``, ``step_count``, ``history``, the optimizer, the
    ``early_stopping`` object and ``position`` (the EpochPosition of an epoch under way).
    A checkpoint written after the last epoch (``finished``) holds a complete training.
    """

    def __init__(self, model: Model, loss: LossSpec, plan: TrainingPlan, rng: np.random.Generator,
                 on_epoch: Callable[[dict], None] | None = None,
                 on_checkpoint: Callable[[], None] | None = None,
                 recorder: Recorder | None = None, on_step: StepCallback | None = None):
        self.model, self.loss, self.plan, self.rng = model, loss, plan, rng
        self.device: Device = device(plan.device)
        self.optimizer: Optimizer = fast_optimizer(plan.optimizer, plan.optimizer_options, plan.weight_decay,
                                                   numpy=self.device.on_host)
        self.on_epoch = on_epoch or (lambda row: None)
        self.on_checkpoint = on_checkpoint or (lambda: None)
        self.on_step = on_step or _no_report
        self.recorder = recorder
        self.history = History()
        self.epoch = 0  # completed epochs
        self.step_count = 0
        self.position: EpochPosition | None = None  # where an interrupted epoch stopped
        self.last_checkpoint = time.perf_counter()
        self.early_stopping = EarlyStopping.chosen(plan.early_stopping, loss.classification)
        self.stop_requested = False
        self.halted: str | None = None  # why training was ended early from outside (on_epoch)

    @property
    def finished(self) -> bool:
        """Whether training is over: every epoch done, or stopped by early stopping while the
        plan has it on (``plan`` may be replaced between ``fit`` calls, early stopping's state
        is not), or ``halted``."""
        stopped = self.early_stopping.stopped and self.plan.early_stopping.patience > 0
        return stopped or self.halted is not None or (self.epoch >= self.plan.epochs and self.position is None)

    def train_step(self, Xb: np.ndarray, yb: np.ndarray, lr: float, watch=None) -> tuple[float, int]:
        """One optimizer update on a batch, accumulated over ``optimizer.accumulate`` micro-batches.

        Each micro-batch's loss gradient is weighted by its share of the batch, so the summed
        gradients equal those of the whole batch at once. Raises TrainingDiverged, before any
        weight changes, when the loss or a gradient is not finite.
        Returns (mean loss, correct predictions).
        """
        model, n = self.model, Xb.shape[0]
        parts = min(self.plan.accumulate, n)
        if parts == 1:
            total, correct = self._forward_backward(Xb, yb, watch)
        else:
            total, correct, summed = 0.0, 0, None
            cuts = [i * (n // parts) + min(i, n % parts) for i in range(parts + 1)]  # np.array_split's sizes
            for i, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
                share = (hi - lo) / n
                value, right = self._forward_backward(Xb[lo:hi, ...], yb[lo:hi, ...], watch if i == 0 else None, share)
                total, correct = total + value * share, correct + right
                grads = [g for _, _, g in model.parameters()]
                summed = [x + 0.0 for x in grads] if summed is None else [s + x for s, x in zip(summed, grads)]
            for (_, _, g), s in zip(model.parameters(), summed):
                g[...] = s
        with np.errstate(over="ignore", invalid="ignore"):
            norm = (fast_grad_norm if self.device.on_host else grad_norm)(g for _, _, g in model.parameters())
        if not (math.isfinite(total) and math.isfinite(norm)):
            if not self.device.on_host:
                move_model(model, HOST)  # the search for the layer at fault reads numpy
            where = locate_nonfinite(model, self.loss.fn, to_numpy(Xb), to_numpy(yb))
            raise TrainingDiverged(self.step_count, where)
        if self.plan.clip_norm:
            clip_grad_norm([g for _, _, g in model.parameters()], self.plan.clip_norm, norm)
        self.optimizer.step(model.parameters(), lr)
        self.step_count += 1
        return total, correct

    def _forward_backward(self, X: np.ndarray, y: np.ndarray, watch, share: float = 1.0) -> tuple[float, int]:
        """Forward, loss and backward on one (micro-)batch whose loss gradient is weighted by its
        ``share`` of the whole batch. Returns (mean loss, correct predictions)."""
        out = self.model.forward(X) if watch is None else forward_watched(self.model, X, watch)  # (B, K)
        value, dout = self.loss.fn(out, y)
        if share != 1.0:
            dout *= share
        backward_without_data_grad(self.model, dout)
        return value, count_correct(self.loss, out, y) if self.loss.classification else 0

    def fit(self, X: np.ndarray, y: np.ndarray, X_val: np.ndarray | None = None,
            y_val: np.ndarray | None = None, augment: Augment | None = None) -> History:
        """Train from the current epoch to the configured last one (or until early stopping);
        nothing is left to train when ``finished``. ``augment`` (Experiment.augment) changes each
        training batch before the step: ``augment(Xb, epoch, batch index)``."""
        self._check_training_data(X)
        on_device = [self.device.put(a) for a in (X, y, X_val, y_val)]  # the data moves to the device once
        try:
            if not self.device.on_host:
                move_model(self.model, self.device)
                move_optimizer_state(self.optimizer, self.device)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # non-finite values are caught per step
                self._epochs(*on_device, augment)
        finally:  # the model and the optimizer's state come back as numpy arrays, however training ended
            if not self.device.on_host:
                move_model(self.model, HOST)
                move_optimizer_state(self.optimizer, HOST)
        self.early_stopping.restore(self.model)
        return self.history

    def _epochs(self, X, y, X_val, y_val, augment: Augment | None) -> None:
        """``fit``'s loop over epochs and batches, on arrays of the device."""
        bounds = batch_bounds(X.shape[0], self.plan.batch_size)
        schedule = Schedule(self.plan.schedule, self.plan.schedule_options, self.plan.lr, len(bounds), self.plan.epochs)
        self.model.train()
        self.last_checkpoint = time.perf_counter()
        while not self.finished:
            started = time.perf_counter()
            position = self._start_epoch(X.shape[0])
            lr = schedule.lr(max(self.step_count - 1, 0))  # the last step's, if no batch is left
            for lo, hi in bounds[position.next_batch:]:
                lr = schedule.lr(self.step_count)
                Xb, yb = self._batch(X, y, position.order[lo:hi], augment, position.next_batch)  # (B, D), (B,)
                loss, correct = self._train_batch(Xb, yb, lr, len(bounds))
                position.add_batch(loss, hi - lo, correct)
                self.on_step(self.epoch + 1, position.next_batch, len(bounds), position.loss_sum / hi)
                if self.stop_requested:
                    self._interrupt(position, started)
                if self._checkpoint_due():
                    self._checkpoint(position, started)
                    self.position = None  # only saved: the epoch goes on
            row = self._epoch_metrics(self.epoch + 1, lr, position, started, X_val, y_val)
            self._end_epoch(row)

    def _batch(self, X, y, rows: np.ndarray, augment: Augment | None, index: int) -> tuple:
        """The training batch of ``rows`` (B,) of X and y, its images changed by ``augment``
        (which draws and shifts on the CPU)."""
        if self.device.on_host:
            Xb = X[rows]  # (B, D)
            return (Xb if augment is None else augment(Xb, self.epoch, index)), y[rows]
        xp, rows = namespace(X), like(X, rows)
        Xb = xp.take(X, rows, axis=0)  # (B, D)
        if augment is not None:
            Xb = self.device.put(augment(to_numpy(Xb), self.epoch, index))
        return Xb, xp.take(y, rows, axis=0)

    def _check_training_data(self, X: np.ndarray) -> None:
        if X.shape[0] == 0:
            raise DataError("there are no training samples")
        if self.position is not None and len(self.position.order) != X.shape[0]:
            raise DataError(f"the interrupted epoch's batch order covers {len(self.position.order)} samples, "
                            f"the training data has {X.shape[0]}")

    def _start_epoch(self, n: int) -> EpochPosition:
        """The interrupted epoch to finish, or a new epoch over ``n`` rows, shuffled by ``rng``
        when ``training.shuffle``."""
        position, self.position = self.position, None
        if position is None:
            position = EpochPosition(self.rng.permutation(n) if self.plan.shuffle else np.arange(n))
        return position

    def _train_batch(self, Xb: np.ndarray, yb: np.ndarray, lr: float, steps_per_epoch: int) -> tuple[float, int]:
        """``train_step``, recording diagnostics every ``diagnostics.every`` steps (0: once an epoch)."""
        step, every = self.step_count, self.plan.diagnostics_every or steps_per_epoch
        if self.recorder is None or (step + 1) % every != 0:
            return self.train_step(Xb, yb, lr)
        before = {name: to_numpy(p) + 0 for name, p, _ in self.model.parameters()}  # copies, on the host
        result = self.train_step(Xb, yb, lr, self.recorder.record_activations(step))
        self.recorder.record_step(step, self.model, before)
        return result

    def _interrupt(self, position: EpochPosition, started: float) -> NoReturn:
        """Write a checkpoint with the position inside the epoch, keep that position, and stop."""
        self._checkpoint(position, started)
        raise TrainingInterrupted()

    def _checkpoint_due(self) -> bool:
        """Whether ``training.checkpoint_seconds`` (0: never) have passed since the last checkpoint."""
        seconds = self.plan.checkpoint_seconds
        return bool(seconds) and time.perf_counter() - self.last_checkpoint >= seconds

    def _checkpoint(self, position: EpochPosition | None = None, started: float = 0.0) -> None:
        """Call ``on_checkpoint``; inside an epoch with the epoch's ``position`` and its time so far."""
        if position is not None:
            self.position = replace(position, seconds=position.seconds + time.perf_counter() - started)
        self.on_checkpoint()
        self.last_checkpoint = time.perf_counter()

    def _epoch_metrics(self, epoch: int, lr: float, position: EpochPosition, started: float,
                       X_val: np.ndarray | None, y_val: np.ndarray | None) -> dict:
        """The epoch's row of the history: epoch, lr, train and validation metrics, seconds."""
        row = {"epoch": epoch, "lr": lr, **position.train_metrics(self.loss.classification)}
        if X_val is not None:
            row.update({f"val_{k}": v for k, v in evaluate(self.model, self.loss, X_val, y_val).items()})
        row["seconds"] = position.seconds + time.perf_counter() - started
        return row

    def metric_names(self, validation: bool) -> list[str]:
        """The history's columns, in the order ``_epoch_metrics`` writes them, for training with
        or without a ``validation`` set."""
        measured = ["loss", "acc"] if self.loss.classification else ["loss"]
        return ["epoch", "lr", *(f"train_{m}" for m in measured), *(f"val_{m}" for m in measured if validation),
                "seconds"]

    def _end_epoch(self, row: dict) -> None:
        """Record the epoch, report it, update early stopping, and write a checkpoint when due
        (always after the last epoch, so that a finished training is on disk)."""
        self.history.append(row)
        self.epoch = row["epoch"]
        self.on_epoch(row)
        self.early_stopping.update(row, self.model)
        every = self.plan.checkpoint_every
        if self.finished or (every and self.epoch % every == 0) or self._checkpoint_due():
            self._checkpoint()
