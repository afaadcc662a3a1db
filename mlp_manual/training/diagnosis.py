"""Why a run does not learn: the evidence a run has, weighed into the most likely cause, the one or
two changes that address it, and how sure the diagnosis is.

The evidence comes from the run's loss per epoch and from one probe: a forward and backward pass
of the kept weights, in evaluation mode (no random draw, no running statistic moves), on up to
PROBE_ROWS training rows. It gives the gradient norm of every weight matrix, the estimated size of
one optimizer step against each weight (the update-to-weight ratio), the fraction of dead units
(zero for every row) of every ReLU layer and the fraction of saturated outputs of every tanh or
sigmoid layer. A regression adds the scale of its targets.

Causes, each with the evidence that points to it:
- a learning rate too high: a loss that rises or swings, steps above STEP_HIGH of the weights;
- dead ReLUs: an activation layer with most of its units zero for every probe row;
- saturated units: a tanh or sigmoid layer with most outputs beyond 0.99 of their range;
- vanishing gradients: the first weight matrix's gradient below FAINT of the largest one's;
- unscaled inputs: inputs beyond INPUT_SCALE in size (a suggestion, not a certainty);
- unscaled regression targets: targets whose spread or mean is far from the outputs' O(1);
- a learning rate too low: steps below STEP_LOW of the weights while the loss creeps down.

N = probe rows, D = features.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..core import grad_norm
from ..layers.registry import units_of
from ..optimizers import OPTIMIZERS, is_weight_matrix
from ..readable import readable
from .diagnostics import forward_watched, unit_fraction

PROBE_ROWS = 512
FAINT = 1e-3  # a first-layer gradient below this fraction of the largest has vanished
STUCK = 0.5  # a layer with more than this fraction of dead or saturated units
STEP_HIGH = 0.1  # one step moving a weight matrix by more than this fraction of its norm
STEP_LOW = 1e-5  # ... by less than this fraction
HEALTHY_STEP = 1e-3  # a usual step: about a thousandth of the weights' norm
TARGET_SCALE = 10.0  # regression targets with a spread or mean beyond this are unscaled
INPUT_SCALE = 10.0  # inputs larger than this are unscaled


@dataclass(frozen=True)
class Evidence:
    """What a run shows about its training, in plain numbers."""

    grad_norms: dict[str, float]  # weight matrices in forward order: ||dW|| on the probe batch
    step_ratios: dict[str, float]  # estimated ||one update|| / ||W|| per weight matrix
    stuck_units: dict[str, tuple[str, float]]  # "layer 3 (tanh)" -> ("saturated", fraction)
    losses: tuple[float, ...]  # the training loss per epoch
    lr: float
    target_scale: tuple[float, float] | None = None  # regression: (largest |mean|, largest std) of the targets
    inputs_scaled: bool = True  # the inputs are preprocessed (or already within a few units)
    activations: tuple[str, ...] = ()  # the activation layer types of the model, in order


@dataclass(frozen=True)
class Stepping:
    """What sizes a step of the run's optimizer: its name, its learning rate and, for SGD, its
    momentum."""

    optimizer: str
    lr: float
    momentum: float = 0.0


def gather(model, loss, X: np.ndarray, y: np.ndarray, stepping: Stepping, losses, *,
           regression_targets: np.ndarray | None = None, inputs_scaled: bool = True) -> Evidence:
    """Probe ``model`` on the first PROBE_ROWS rows of (X, y), targets as ``loss`` wants them, and
    collect the evidence, with a step's size estimated as ``stepping`` says and the run's
    training ``losses`` per epoch. The model's parameters, buffers and mode are left as they were."""
    X, y = X[:PROBE_ROWS], y[:PROBE_ROWS]  # (N, D)
    modes = [layer.training for layer in model.layers]
    model.eval()
    stuck = {}

    def watch(i, layer, out):
        units = units_of(layer)
        if units is not None and units.state == "dead":  # zero for every row: a healthy ReLU layer has half its outputs at 0
            stuck[f"layer {i} ({layer!r})"] = (units.state, unit_fraction(layer, out)[1])
        elif units is not None:  # saturated: beyond 0.99 of the range, where the gradient is almost 0
            stuck[f"layer {i} ({layer!r})"] = (units.state, float(np.mean(units.stuck(layer, out))))

    try:
        with np.errstate(all="ignore"):
            out = forward_watched(model, X, watch)
            model.backward(loss.fn(out, y)[1])
    finally:
        for layer, mode in zip(model.layers, modes):
            layer.train(mode)
    grads, steps, lr = {}, {}, stepping.lr
    for name, p, g in model.parameters():
        if not is_weight_matrix(p):
            continue
        gn, wn = grad_norm([g]), grad_norm([p])
        grads[name] = gn
        if wn > 0:  # adaptive optimizers move each element by about lr; SGD by lr * g, momentum amplifying it
            step = lr * math.sqrt(p.size) if OPTIMIZERS[stepping.optimizer].adaptive else lr * gn / (1 - stepping.momentum)
            steps[name] = step / wn
    scale = None
    if regression_targets is not None:
        t = np.asarray(regression_targets, dtype=np.float64)
        scale = (float(np.abs(t.mean(axis=0)).max()), float(t.std(axis=0).max()))
    kinds = tuple(type(layer).__name__.lower() for layer in model.layers if units_of(layer))
    return Evidence(grads, steps, stuck, tuple(float(v) for v in losses), lr, scale, inputs_scaled, kinds)


@dataclass(frozen=True)
class Diagnosis:
    cause: str  # a few words: "vanishing gradients"
    evidence: str  # the numbers behind it
    advice: str  # the one or two changes that address it
    sure: bool  # the evidence is strong (a "likely" cause) rather than suggestive ("possibly")

    def sentence(self) -> str:
        return f"{'Likely' if self.sure else 'Possibly'} {self.cause}: {self.evidence}. {self.advice}"

    @property
    def structural(self) -> bool:
        """The cause lies in the network itself (its activations, depth or init), so no learning
        rate cures it: dead ReLUs, saturated units, vanishing gradients."""
        return self.cause in STRUCTURAL


STRUCTURAL = ("dead ReLUs", "saturated units", "vanishing gradients")


def trend(losses) -> str:
    """The loss curve in one word: "rising" (it rose: blew up, or ends well above its low),
    "swinging", "flat", "creeping" (falling slowly and steadily, still falling at the end) or
    "falling"."""
    v = [x for x in losses if math.isfinite(x)]
    if len(v) < len(losses) or (len(v) >= 2 and max(v) > 10 * v[0]):
        return "rising"  # not finite, or blown up on the way
    if len(v) < 3:
        return "falling"
    diffs = np.diff(v)
    turns = int(np.sum(np.sign(diffs[1:]) != np.sign(diffs[:-1])))
    if turns > 0.5 * (len(diffs) - 1) and np.median(np.abs(diffs)) > 0.05 * abs(np.median(v)):
        return "swinging"  # up and down most epochs, by more than a twentieth of its level
    if v[-1] > 1.5 * min(v):
        return "rising"  # ends well above its low
    if max(v) - min(v) <= 0.01 * abs(v[0]):
        return "flat"
    if v[-1] > 0.7 * v[0] and diffs[-1] < 0 and np.mean(diffs < 0) > 0.8:
        return "creeping"
    return "falling"


def diagnose(e: Evidence) -> Diagnosis:
    """The most likely reason a run with evidence ``e`` has not learned."""
    shape = trend(e.losses)
    steps = sorted(e.step_ratios.values())
    top_step = steps[-1] if steps else None
    dead = {k: f for k, (state, f) in e.stuck_units.items() if state == "dead" and f > STUCK}
    saturated = {k: f for k, (state, f) in e.stuck_units.items() if state == "saturated" and f > STUCK}
    lr = f"optimizer.lr (now {e.lr:g})"
    if dead:
        layer, f = max(dead.items(), key=lambda kv: kv[1])
        after = ", after the training loss rose" if shape == "rising" else ""
        return Diagnosis("dead ReLUs", f"{layer} has {f:.0%} of its units zero for every probe row, so no "
                         f"gradient flows through them{after}", f"Lower {lr}, or use leaky_relu in place of relu "
                         "(a dead unit never comes back).", True)
    if shape in ("rising", "swinging") or (top_step is not None and top_step > STEP_HIGH):
        said = {"rising": "the training loss rose", "swinging": "the training loss swung up and down"}.get(
            shape, f"the training loss is {shape}")
        step = f", and one step moves the weights by up to {top_step:.2g} of their norm" if top_step else ""
        return Diagnosis("a learning rate too high", f"{said}{step}", f"Lower {lr} about 10 times, or "
                         "sweep it with mlp-train --find-lr.", shape in ("rising", "swinging"))
    if saturated:
        layer, f = max(saturated.items(), key=lambda kv: kv[1])
        fix = ("Scale the inputs (data.preprocess: standardize)" if not e.inputs_scaled else
               "Use relu in place of tanh or sigmoid, or a smaller init (model.init: glorot_uniform)")
        return Diagnosis("saturated units", f"{layer} has {f:.0%} of its outputs beyond 0.99 of their range, "
                         "where their gradient is almost 0", f"{fix}.", True)
    if len(e.grad_norms) >= 2:
        names = list(e.grad_norms)
        top = max(names, key=e.grad_norms.get)
        first = e.grad_norms[names[0]]
        if names[0] != top and first < FAINT * e.grad_norms[top]:
            ratio = first / e.grad_norms[top] if e.grad_norms[top] > 0 else 0.0
            sigmoid = "sigmoid" in e.activations
            return Diagnosis("vanishing gradients", f"{names[0]}'s gradient norm is {ratio:.1e} of {top}'s "
                             f"({readable(first)} against {readable(e.grad_norms[top])}), so the first layers "
                             "barely learn", ("Use relu or tanh in place of sigmoid, " if sigmoid else "Use ")
                             + "batchnorm between the layers, or fewer layers; raising the learning rate does not "
                             "help the first layers.", True)
    if not e.inputs_scaled:
        return Diagnosis("unscaled inputs", f"some inputs are beyond {INPUT_SCALE:g} in size, which makes the "
                         "first layer's steps uneven across features", "Set data.preprocess: standardize (or scale, for images).",
                         False)
    if e.target_scale and max(e.target_scale) > TARGET_SCALE:
        mean, std = e.target_scale
        return Diagnosis("unscaled regression targets", f"the targets have mean {readable(mean)} and spread "
                         f"{readable(std)}, far from the O(1) outputs a fresh network gives, and the steps are "
                         "too small to get there", f"Raise {lr} about 10 times with training.early_stopping, "
                         "or train on targets divided by their spread.", True)
    if top_step is not None and top_step < STEP_LOW or shape == "creeping":
        step = f"one step moves the weights by at most {top_step:.1e} of their norm" if top_step else ""
        said = "the training loss is still creeping down" if shape == "creeping" else f"the training loss is {shape}"
        times = 10 ** max(1, round(math.log10(HEALTHY_STEP / top_step))) if top_step else 10
        return Diagnosis("a learning rate too low", ", and ".join(s for s in (said, step) if s),
                         f"Raise {lr} about {times:g} times (to {e.lr * times:g}), or sweep it with mlp-train --find-lr.",
                         top_step is not None and top_step < STEP_LOW)
    return Diagnosis("no single cause", f"the training loss is {shape}, the gradients reach every layer and "
                     "no activation layer is stuck", "Sweep the rate with mlp-train --find-lr, and check that the "
                     "model can fit one batch with mlp-train --overfit-batch 20.", False)
