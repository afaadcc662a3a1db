"""Whether a run learns. Before the first step the fresh model sets the bar: its training loss,
for regression the loss of always predicting the training targets' mean, for classification
the accuracy of always guessing the largest class (chance). A run that does not beat the bar
gets a TrainingWarning of kind ``not_learning``: as soon as its training loss grows GROWTH
times over the fresh model's (certain at once), and at the end when the weights it keeps score
no better than the fresh model's loss, at chance, or no better than the mean. The warning at the
end names the most likely cause from the run's evidence (``diagnosis``), not a fixed sentence.

N = samples, K = output units, C = classes.
"""

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import TrainingWarning
from ..layers.registry import row_of
from ..readable import readable
from .diagnosis import INPUT_SCALE, PROBE_ROWS, Diagnosis, Evidence, Stepping, diagnose, gather
from .evaluation import class_labels, evaluate
from .experiment import Experiment

GROWTH = 100.0  # a training loss this many times the fresh model's has blown up


@dataclass(frozen=True)
class Chance:
    """Accuracy of always guessing the largest class of a split of ``rows`` rows."""

    accuracy: float
    rows: int
    n_classes: int

    def reached_by(self, acc: float) -> bool:
        """``acc`` is no better than chance: below it, or above by less than one standard error."""
        return acc <= self.accuracy + self.spread

    @property
    def spread(self) -> float:
        """One standard error of the accuracy of guessing, over ``rows`` rows."""
        return math.sqrt(self.accuracy * (1 - self.accuracy) / self.rows)


@dataclass(frozen=True)
class Baseline:
    """What the fresh model scores, per split ("train", "val"), measured before the first step."""

    initial_loss: float  # the fresh model's loss on the training split
    mean_loss: dict[str, float]  # regression: the loss of predicting the training targets' mean
    chance: dict[str, Chance]  # classification
    fresh_loss: dict[str, float]  # the fresh model's loss per split, in evaluation mode
    train_rows_biased: bool  # dropout, batch norm or augmentation: the epoch's training metrics are not eval-mode ones

    @classmethod
    def measure(cls, exp: Experiment) -> "Baseline":
        """The baseline of ``exp``'s model as it is now (call it before training); no random draw."""
        d, loss = exp.data, exp.loss
        splits = {s: (getattr(d, f"X_{s}"), getattr(d, f"y_{s}")) for s in ("train", "val")}
        splits = {s: xy for s, xy in splits.items() if xy[0] is not None and len(xy[0])}
        fresh = {s: evaluate(exp.model, loss, *xy)["loss"] for s, xy in splits.items()}
        # the training rows' metrics are measured on augmented batches, too
        biased = any(row_of(layer).modes_differ for layer in exp.model.layers) or exp.augment is not None
        mean_loss, chance = {}, {}
        if loss.classification:
            for s, (_, y) in splits.items():
                counts = np.bincount(class_labels(y), minlength=d.n_classes)  # (C,)
                chance[s] = Chance(float(counts.max() / counts.sum()), int(counts.sum()), d.n_classes)
        else:
            mean = d.y_train.mean(axis=0, dtype=np.float64).astype(d.y_train.dtype)  # (K,)
            for s, (_, y) in splits.items():
                mean_loss[s] = loss.fn(np.broadcast_to(mean, y.shape).copy(), y)[0]  # (N, K) guesses
        return cls(fresh["train"], mean_loss, chance, fresh, biased)


def run_evidence(exp: Experiment, X: np.ndarray, y: np.ndarray, losses=()) -> Evidence:
    """The evidence of ``exp``'s model as it is now, probed on the rows (X, y) (targets as the loss
    wants them), with the run's training ``losses`` per epoch."""
    opt = exp.cfg.optimizer
    return gather(exp.model, exp.loss, X, y, Stepping(opt.name, opt.lr, opt.options.get("momentum", 0.0)), losses,
                  regression_targets=None if exp.loss.classification else exp.data.y_train,
                  inputs_scaled=not exp.data.scalable or bool(np.abs(X[:PROBE_ROWS]).max() <= INPUT_SCALE))


class LearningCheck:
    """Watches a run's epoch rows against its Baseline and warns when it does not learn.
    ``lr`` is the configured learning rate, named in the advice; ``exp``, the run, is probed for
    the evidence of the diagnosis at the end (without it the diagnosis rests on the losses)."""

    def __init__(self, baseline: Baseline, lr: float, exp: Experiment | None = None):
        self.baseline, self.lr, self.exp = baseline, lr, exp
        self.blew_up = False  # the growth warning is given once

    def diagnosis(self, losses) -> Diagnosis:
        """The most likely cause, from the training ``losses`` per epoch and a probe of the run's
        model as it is now."""
        losses = (self.baseline.initial_loss, *losses)  # from the fresh model on
        if self.exp is None:
            return diagnose(Evidence({}, {}, {}, losses, self.lr))
        d = self.exp.data
        return diagnose(run_evidence(self.exp, d.X_train, d.y_train, losses))

    def after_epoch(self, row: dict) -> None:
        """Warn the first time the epoch's training loss is GROWTH times the fresh model's."""
        initial, loss = self.baseline.initial_loss, row["train_loss"]
        if self.blew_up or not initial > 0 or not loss >= GROWTH * initial:
            return
        self.blew_up = True
        warnings.warn(TrainingWarning("not_learning", (
            f"WARNING not learning: train_loss grew from {readable(initial)} (the fresh model) to "
            f"{readable(loss)} at epoch {row['epoch']}, {loss / initial:.3g} times. Likely a learning rate too "
            f"high: lower optimizer.lr (now {self.lr:g}) about 10 times, or sweep it with mlp-train --find-lr.")))

    def reasons(self, row: dict) -> list[str]:
        """Why the weights of epoch row ``row`` have not learned: one phrase per failed bar. The
        bars are judged on the validation split when there is one (evaluation mode, like the
        fresh model's scores); on the training split only when its metrics are evaluation-mode
        ones too, i.e. without dropout or batch norm, whose training-mode metrics are noisier."""
        b, found = self.baseline, []
        split = "val" if "val_loss" in row else "train"
        if split == "train" and b.train_rows_biased:
            return found
        initial, loss = b.fresh_loss[split], row[f"{split}_loss"]
        if not loss < initial:
            times = f" ({loss / initial:.3g} times)" if initial > 0 and loss >= 2 * initial else ""
            found.append(f"{split}_loss {readable(loss)} is no better than the fresh model's {readable(initial)}{times}")
        if split in b.chance and b.chance[split].reached_by(row[f"{split}_acc"]):
            c, acc = b.chance[split], row[f"{split}_acc"]
            found.append(f"{split}_acc {readable(acc)} is no better than chance ({readable(c.accuracy)}, always guessing "
                         f"the largest of {c.n_classes} classes)" if acc <= c.accuracy else
                         f"{split}_acc {readable(acc)} is not clearly better than chance ({readable(c.accuracy)}, always "
                         f"guessing the largest of {c.n_classes} classes, give or take {c.spread:.2g} over "
                         f"{c.rows} rows)")
        if split in b.mean_loss and not row[f"{split}_loss"] < b.mean_loss[split]:
            found.append(f"{split}_loss {readable(row[f'{split}_loss'])} is no better than always predicting "
                         f"the training mean ({readable(b.mean_loss[split])})")
        return found

    def at_end(self, row: dict, weights: str, losses=()) -> None:
        """Warn when the weights the run keeps (those of epoch row ``row``, described by
        ``weights``, e.g. "final weights, epoch 100") have not learned, with the diagnosis from the
        run's training ``losses`` per epoch and a probe of those weights."""
        found = self.reasons(row)
        if found:
            warnings.warn(TrainingWarning("not_learning", "WARNING not learning: " + "; ".join(found)
                                          + f". Measured with the {weights}. {self.diagnosis(losses).sentence()}"))
