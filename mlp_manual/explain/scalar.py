"""The pass of a tiny model once more, one scalar at a time, in the style of micrograd: each
layer's and the loss's scalar version (``mlp_manual/scalar.py``, named by their rows) makes
``Value``s in the order the forward pass computes them, so the reverse of that order visits
every value after all the values that use it: the backward pass is one loop over it. A teaching
view only: training never imports this module.

N = rows, D = features, H = outputs of a layer.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..layers.registry import LAYERS, row_of
from ..losses import LOSSES, LossSpec
from ..scalar import Value
from .trace import Trace

MAX_PARAMS = 64  # a few dozen weights; beyond that the printed chain rule is too long to read


def require_small(model, loss: LossSpec) -> None:
    """Raise ConfigError unless every layer's type has a scalar version, the model has at most
    MAX_PARAMS parameters and the ``loss`` is a plain one (its scalar version has no class
    weights or smoothing)."""
    for name, layer in model.named_layers():
        if not callable(row_of(layer).scalar):
            versions = ", ".join(t.name for t in LAYERS.values() if callable(t.scalar))
            raise ConfigError(f"--scalar supports the layers {versions}; {name} is {row_of(layer).name}")
    if model.n_params > MAX_PARAMS:
        raise ConfigError(f"--scalar is for tiny models: this one has {model.n_params:,} parameters, "
                          f"the limit is {MAX_PARAMS}")
    require_plain(loss)


def require_plain(loss: LossSpec) -> None:
    """Raise ConfigError unless ``loss`` is one the scalar versions follow: no class weights, no
    label smoothing."""
    if not loss.plain:
        raise ConfigError("--scalar follows the plain losses; this run weighs its classes or smooths its labels "
                          "(loss.class_weights, loss.label_smoothing)")


@dataclass
class ScalarPass:
    loss: float
    grads: dict[str, np.ndarray]  # "layers.<l>.<key>" -> the gradient gathered from the Values
    log: list[str]  # one chain-rule step per line, in the order they ran


def scalar_pass(trace: Trace) -> ScalarPass:
    """Forward and backward of the traced model and batch with one Value per number."""
    require_plain(trace.loss.spec)
    tape, log, params = [], [], {}
    rows = [[Value(v, f"x[{n},{i}]") for i, v in enumerate(r)] for n, r in enumerate(trace.X)]
    for step in trace.steps:
        rows, made = row_of(step.layer).scalar(rows, step.layer, step.index, tape)
        params.update({f"{step.name}.{k}": v for k, v in made.items()})
    losses = LOSSES[trace.loss.name].scalar(rows, trace.loss.targets, tape)
    n = len(losses)
    L = Value(sum(v.data for v in losses) / n, "L", [(v, 1 / n, f"1/{n}") for v in losses], tape)
    L.grad = 1.0
    for v in reversed(tape):
        v.backward(log.append)
    grads = {name: np.array([[w.grad for w in r] for r in vals] if isinstance(vals[0], list) else [w.grad for w in vals])
             for name, vals in params.items()}
    return ScalarPass(L.data, grads, log)


def format_scalar_pass(trace: Trace) -> str:
    """The chain-rule steps, then the largest difference from the matrix pass for every parameter."""
    result = scalar_pass(trace)
    lines = ["scalar pass: one Value per number (x = data, Wl/bl = layers.l.W/b, outl = output of layers.l, "
             "L = mean loss); backward from L.grad = 1, each step a.grad += local * out.grad", *result.log, "",
             f"loss: scalar {result.loss:.10g}, matrix {trace.loss.value:.10g}"]
    matrix = {f"{s.name}.{k}": s.grads[k] for s in trace.steps for k in s.layer.params}
    worst = 0.0
    for name, g in result.grads.items():
        diff = float(np.abs(g - matrix[name]).max())
        worst = max(worst, diff)
        lines.append(f"  {name} {tuple(g.shape)}: max |scalar - matrix| = {diff:.1e}")
    lines.append(f"every weight's gradient: scalar and matrix passes agree to {worst:.1e} (max abs difference)")
    return "\n".join(lines)
