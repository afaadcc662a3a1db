"""Checks worth running before trusting a training run: the initial loss against ln(C), whether
the model can memorise one small batch, and a learning-rate sweep.

N = samples, D = features, K = output units.
"""

import math
import warnings

import numpy as np

from ..errors import TrainingDiverged, TrainingWarning
from ..readable import readable
from .diagnosis import INPUT_SCALE, diagnose
from .evaluation import evaluate
from .experiment import Experiment, training_plan
from .learning_check import run_evidence
from .trainer import Trainer, batch_bounds


def check_initial_loss(exp: Experiment, rows: int = 1024) -> None:
    """A fresh model should score about the loss of uniform guesses, ln(C) for softmax
    cross-entropy (``LossSpec.untrained_loss``; losses without one are not checked).

    Warns (TrainingWarning of kind ``initial_loss``) when the loss on the first ``rows`` training
    rows is off by more than max(1, expected) nats, and names the cause the evidence shows:
    inputs whose mean or spread is beyond INPUT_SCALE (unscaled data), else, on scaled inputs,
    only when it is off by more than max(3, 2 * expected) nats, the init or the labels (an init
    for ReLU layers gives the output layer logits of spread 1 to 2, a loss up to about 1 nat
    above ln(C), which is no fault)."""
    if exp.loss.untrained_loss is None:
        return
    d = exp.data
    X = d.X_train[:rows]  # (N, D)
    loss = evaluate(exp.model, exp.loss, X, d.y_train[:rows])["loss"]
    expected, formula = exp.loss.untrained_loss(d.n_classes)
    off = abs(loss - expected)
    if off <= max(1.0, expected):
        return
    head = f"WARNING initial loss {readable(loss, 3)} is far from {formula} = {expected:.3f}, the loss of uniform guesses"
    mean, spread = np.abs(X.mean(axis=0, dtype=np.float64)), X.std(axis=0, dtype=np.float64)  # (D,)
    j = int(np.argmax(np.maximum(mean, spread)))
    if d.scalable and max(mean[j], spread[j]) > INPUT_SCALE:
        warnings.warn(TrainingWarning("initial_loss", (
            f"{head}: the inputs are not scaled (feature {j} has mean {readable(float(mean[j]))} and spread "
            f"{readable(float(spread[j]))}); set data.preprocess: standardize (or scale, for images)")))
    elif off > max(3.0, 2 * expected):
        warnings.warn(TrainingWarning("initial_loss", (
            f"{head}, though the inputs are {'scaled' if d.scalable else 'character indices'}: check the init "
            "(model.init) and the labels")))


def overfit_batch(exp: Experiment, n: int, max_steps: int, echo) -> bool:
    """Train on one fixed batch of ``n`` training examples until its loss falls below 1% of a
    reference, or ``max_steps`` run out. The reference is the loss of predicting the targets'
    mean (their variance, for mse: the fit then explains 99% of it) when the loss spec knows
    it, else the initial loss; a classifier must also classify every example right. A smoothed
    loss cannot reach 0: it must come within 1% of the way from the reference to its lowest.
    Returns whether the batch was memorised. A batch that is not says why, from the evidence: a
    cause in the network itself (vanishing gradients, dead or saturated units) when the fresh or
    the trained network shows one, else a bug in a backward pass or a rate far from right."""
    d = exp.data
    n = min(n, len(d.X_train))
    idx = np.sort(exp.train_rng.permutation(len(d.X_train))[:n])
    X, y = d.X_train[idx], d.y_train[idx]  # (n, D), labels
    fresh = diagnose(run_evidence(exp, X, y))  # vanishing gradients show best before training
    trainer = Trainer(exp.model, exp.loss, training_plan(exp.cfg), exp.train_rng)
    exp.model.train()
    reference = exp.loss.constant_loss(y) if exp.loss.constant_loss else None
    floor = exp.loss.lowest_loss(y, d.n_classes)  # above 0 for a smoothed loss
    first, loss, right = None, None, 0
    for step in range(1, max_steps + 1):
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                loss, right = trainer.train_step(X, y, exp.cfg.optimizer.lr)
        except TrainingDiverged as e:
            echo(f"could not memorise {n} examples: {e}. Try a lower learning rate (optimizer.lr).")
            return False
        first = loss if first is None else first
        goal = floor + 0.01 * ((reference or first) - floor)  # a batch of equal targets has variance 0: use the initial loss
        done = loss < goal and (not exp.loss.classification or right == n)
        if done or step == max_steps or step % 100 == 0:
            acc = f", accuracy {right / n:.3f}" if exp.loss.classification else ""
            echo(f"step {step}: loss {readable(loss)}{acc}")
        than = f"the targets' variance {readable(reference)}" if reference else f"the initial loss {readable(first)}"
        goal_text = (f"within 1% of the way from {than} to {readable(floor)}, the lowest the smoothed loss can reach"
                     if floor else f"below 1% of {than}")
        if done:
            echo(f"memorised {n} examples in {step} steps: loss {readable(loss)}, {goal_text}")
            return True
    found = fresh if fresh.structural else diagnose(run_evidence(exp, X, y))
    if found.structural:
        why = f"{found.sentence()}"
    else:
        why = ("A model that cannot fit one small batch while its gradients reach every layer may have a bug in a "
               "backward pass (check it with mlp-gradcheck), or a learning rate far from right (try mlp-train "
               "--find-lr).")
    echo(f"could not memorise {n} examples in {max_steps} steps: loss {readable(loss)}, not {goal_text}. {why}")
    return False


def find_lr(exp: Experiment, lo: float = 1e-6, hi: float = 1.0, steps: int = 100):
    """Train with the learning rate rising exponentially from ``lo`` to ``hi`` over ``steps``
    steps (stopping once the loss explodes). Returns (lrs, smoothed losses, suggested lr): the
    suggestion is where the smoothed loss falls fastest against log(lr), after the first tenth of
    the sweep (where the running average still settles) and before the loss turns up; None when
    the loss never falls by DESCENT of its value there (no clear descent to point at)."""
    d, cfg = exp.data, exp.cfg
    trainer = Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng)
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
                Xb = d.X_train[order[a:b]]  # (B, D), as training would change it (data.augment_*)
                Xb = Xb if exp.augment is None else exp.augment(Xb, step // len(bounds), step % len(bounds))
                loss, _ = trainer.train_step(Xb, d.y_train[order[a:b]], lr)
            except TrainingDiverged:  # a diverged step ends the sweep; that is what a sweep is for
                break
        avg = 0.9 * avg + 0.1 * loss
        smooth = avg / (1 - 0.9 ** (step + 1))
        lrs.append(lr)
        losses.append(smooth)
        best = min(best, smooth)
        if not math.isfinite(smooth) or smooth > 4 * best:
            break
    return lrs, losses, steepest_descent(lrs, losses, settle=max(3, steps // 10))


DESCENT = 0.1  # a fall of a tenth of the loss is a descent to point at; less is noise or the prior


def steepest_descent(lrs, losses, settle: int, window: int = 7) -> float | None:
    """The rate where the smoothed ``losses`` fall fastest against log(lr), looking from index
    ``settle`` to the lowest loss; None without a clear descent there. The slope is taken over a
    moving average of ``window`` points, so a wiggle of the running average is not a descent."""
    cut = int(np.argmin(losses)) + 1 if losses else 0  # only look before the loss turns up
    if cut - settle < window or losses[cut - 1] > (1 - DESCENT) * max(losses[settle:cut]):
        return None
    curve = np.convolve(losses[settle:cut], np.ones(window) / window, mode="valid")  # (cut - settle - window + 1,)
    centre = np.log(np.array(lrs[settle + window // 2:cut - window // 2]))
    slopes = np.gradient(curve, centre) if len(curve) > 1 else np.zeros(1)
    return float(lrs[settle + window // 2 + int(np.argmin(slopes))])
