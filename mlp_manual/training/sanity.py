"""Checks worth running before trusting a training run: the initial loss against ln(C), whether
the model can memorise one small batch, and a learning-rate sweep.

N = samples, D = features, K = output units.
"""

import math
import warnings

import numpy as np

from ..errors import TrainingDiverged, TrainingWarning
from ..readable import readable
from .evaluation import evaluate
from .experiment import Experiment
from .trainer import Trainer, batch_bounds


def check_initial_loss(exp: Experiment, rows: int = 1024) -> None:
    """A fresh model should score about the loss of uniform guesses, ln(C) for softmax
    cross-entropy (``LossSpec.untrained_loss``; losses without one are not checked).
    Warns (TrainingWarning of kind ``initial_loss``) when the loss on the first ``rows`` training
    rows is off by more than max(1, expected) nats: a scale that ordinary inits stay inside and
    unscaled data does not."""
    if exp.loss.untrained_loss is None:
        return
    d = exp.data
    loss = evaluate(exp.model, exp.loss, d.X_train[:rows], d.y_train[:rows])["loss"]
    expected, formula = exp.loss.untrained_loss(d.n_classes)
    if abs(loss - expected) > max(1.0, expected):
        warnings.warn(TrainingWarning(
            "initial_loss", f"WARNING initial loss {readable(loss, 3)} is far from {formula} = {expected:.3f}, the loss of "
            "uniform guesses: check the data scaling (data.preprocess), the init, and the labels"))


def overfit_batch(exp: Experiment, n: int, max_steps: int, echo) -> bool:
    """Train on one fixed batch of ``n`` training examples until its loss falls below 1% of a
    reference, or ``max_steps`` run out. The reference is the loss of predicting the targets'
    mean (their variance, for mse: the fit then explains 99% of it) when the loss spec knows
    it, else the initial loss; a classifier must also classify every example right.
    Returns whether the batch was memorised."""
    d = exp.data
    n = min(n, len(d.X_train))
    idx = np.sort(exp.train_rng.permutation(len(d.X_train))[:n])
    X, y = d.X_train[idx], d.y_train[idx]  # (n, D), labels
    trainer = Trainer(exp.model, exp.loss, exp.cfg, exp.train_rng)
    exp.model.train()
    reference = exp.loss.constant_loss(y) if exp.loss.constant_loss else None
    first, loss, right = None, None, 0
    for step in range(1, max_steps + 1):
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                loss, right = trainer.train_step(X, y, exp.cfg.optimizer.lr)
        except TrainingDiverged as e:
            echo(f"could not memorise {n} examples: {e}. Try a lower learning rate (optimizer.lr).")
            return False
        first = loss if first is None else first
        goal = 0.01 * (reference or first)  # a batch of equal targets has variance 0: use the initial loss
        done = loss < goal and (not exp.loss.classification or right == n)
        if done or step == max_steps or step % 100 == 0:
            acc = f", accuracy {right / n:.3f}" if exp.loss.classification else ""
            echo(f"step {step}: loss {readable(loss)}{acc}")
        than = f"the targets' variance {readable(reference)}" if reference else f"the initial loss {readable(first)}"
        if done:
            echo(f"memorised {n} examples in {step} steps: loss {readable(loss)}, below 1% of {than}")
            return True
    echo(f"could not memorise {n} examples in {max_steps} steps: loss {readable(loss)}, not below 1% of {than}. "
         "A model that cannot fit one small batch has a bug (check the backward pass with mlp-gradcheck) "
         "or a learning rate far from right (try mlp-train --find-lr).")
    return False


def find_lr(exp: Experiment, lo: float = 1e-6, hi: float = 1.0, steps: int = 100):
    """Train with the learning rate rising exponentially from ``lo`` to ``hi`` over ``steps``
    steps (stopping once the loss explodes). Returns (lrs, smoothed losses, suggested lr):
    the suggestion is where the smoothed loss falls fastest against log(lr)."""
    d, cfg = exp.data, exp.cfg
    trainer = Trainer(exp.model, exp.loss, cfg, exp.train_rng)
    bounds = batch_bounds(len(d.X_train), cfg.training.batch_size)
    order = exp.train_rng.permutation(len(d.X_train))
    lrs, losses, avg, best = [], [], 0.0, math.inf
    exp.model.train()
    for step in range(steps):
        lr = lo * (hi / lo) ** (step / max(steps - 1, 1))
        a, b = bounds[step % len(bounds)]
        if step and step % len(bounds) == 0:
            order = exp.train_rng.permutation(len(d.X_train))
        with np.errstate(all="ignore"):
            try:
                loss, _ = trainer.train_step(d.X_train[order[a:b]], d.y_train[order[a:b]], lr)
            except TrainingDiverged:  # a diverged step ends the sweep; that is what a sweep is for
                break
        avg = 0.9 * avg + 0.1 * loss
        smooth = avg / (1 - 0.9 ** (step + 1))
        lrs.append(lr)
        losses.append(smooth)
        best = min(best, smooth)
        if not math.isfinite(smooth) or smooth > 4 * best:
            break
    if len(losses) < 3:
        return lrs, losses, lo
    slopes = np.gradient(np.array(losses), np.log(np.array(lrs)))
    cut = int(np.argmin(losses)) + 1  # only look before the loss turns up
    return lrs, losses, float(lrs[int(np.argmin(slopes[:cut]))])
