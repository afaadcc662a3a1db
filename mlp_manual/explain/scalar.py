"""The pass of a tiny model once more, one scalar at a time, in the style of micrograd.

Every number is a ``Value`` that remembers the values it was made from and the local derivative
with respect to each; its backward closure applies the chain rule to them,
``a.grad += local * out.grad``. Values are created in the order the forward pass computes them,
so the reverse of that order visits every value after all the values that use it: the backward
pass is one loop over it. A teaching view only: training never imports this module.

Names: x[n,i] is the data, Wl[i,j] and bl[j] the parameters of layers.l, outl[n,j] its output,
loss[n] (or loss[n,k]) a row's loss and L the mean.
N = rows, D = features, H = outputs of a layer.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from .trace import Trace

MAX_PARAMS = 64  # a few dozen weights; beyond that the printed chain rule is too long to read


class Value:
    """A scalar with ``data``, ``grad`` and the chain-rule step back to the values it came from."""

    def __init__(self, data: float, name: str, parents=(), tape=None):
        self.data, self.grad, self.name = float(data), 0.0, name
        self.parents = parents  # (input Value, local derivative, how the local derivative is written)
        if tape is not None:
            tape.append(self)

    def backward(self, log) -> None:
        for v, local, text in self.parents:
            v.grad += local * self.grad
            log(f"{v.name}.grad += {text} * {self.name}.grad  = {local:.4g} * {self.grad:.4g} = "
                f"{local * self.grad:.4g}; running total {v.grad:.4g}")

    def __repr__(self) -> str:
        return f"Value({self.name}={self.data:.4g}, grad={self.grad:.4g})"


def _linear(rows, step, tape):
    """out[n,j] = b[j] + sum_i x[n,i] * W[i,j]; the data gets no gradient."""
    W = [[Value(w, f"W{step.index}[{i},{j}]") for j, w in enumerate(r)] for i, r in enumerate(step.layer.params["W"])]
    b = [Value(v, f"b{step.index}[{j}]") for j, v in enumerate(step.layer.params["b"])] if "b" in step.layer.params else None
    out = []
    for n, row in enumerate(rows):
        out.append([])
        for j in range(len(W[0])):
            parents = [(W[i][j], x.data, x.name) for i, x in enumerate(row)]
            parents += [(x, W[i][j].data, W[i][j].name) for i, x in enumerate(row) if x.parents]
            parents += [(b[j], 1.0, "1")] if b else []
            data = sum(x.data * W[i][j].data for i, x in enumerate(row)) + (b[j].data if b else 0.0)
            out[n].append(Value(data, f"out{step.index}[{n},{j}]", parents, tape))
    return out, {"W": W, **({"b": b} if b else {})}


def _elementwise(f, derivative):
    """A layer applying f(x, layer) to each value; derivative(x, y, layer, name of y) gives the
    local derivative and how it is written."""
    def layer(rows, step, tape):
        out = []
        for n, row in enumerate(rows):
            out.append([])
            for j, x in enumerate(row):
                y, name = f(x.data, step.layer), f"out{step.index}[{n},{j}]"
                local, text = derivative(x, y, step.layer, name)
                out[n].append(Value(y, name, [(x, local, text)], tape))
        return out, {}
    return layer


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


LAYERS = {
    "linear": _linear,
    "identity": _elementwise(lambda x, _: x, lambda x, y, _, out: (1.0, "1")),
    "relu": _elementwise(lambda x, _: max(x, 0.0), lambda x, y, _, out: (float(x.data > 0), f"({x.name} > 0)")),
    "leaky_relu": _elementwise(lambda x, layer: x if x > 0 else layer.slope * x, lambda x, y, layer, out: (
        1.0 if x.data > 0 else layer.slope, f"(1 if {x.name} > 0 else {layer.slope:g})")),
    "tanh": _elementwise(lambda x, _: math.tanh(x), lambda x, y, _, out: (1 - y * y, f"(1 - {out}^2)")),
    "sigmoid": _elementwise(lambda x, _: _sigmoid(x), lambda x, y, _, out: (y * (1 - y), f"{out} (1 - {out})")),
}


def _softmax_ce(rows, targets, tape):
    """loss[n] = log(sum_k exp(z[n,k])) - z[n,y]: d/dz[n,k] = softmax(z[n])[k] - onehot(y)[k]."""
    losses = []
    for n, (row, y) in enumerate(zip(rows, targets)):
        m = max(z.data for z in row)
        e = [math.exp(z.data - m) for z in row]
        parents = [(z, e[k] / sum(e) - (k == y), f"(p[{n},{k}] - onehot[{n},{k}])") for k, z in enumerate(row)]
        losses.append(Value(math.log(sum(e)) + m - row[int(y)].data, f"loss[{n}]", parents, tape))
    return losses


def _elementwise_loss(f, derivative, text):
    """A loss per output entry, f(z, y), with d/dz = derivative(z, y)."""
    def loss(rows, targets, tape):
        return [Value(f(z.data, y), f"loss[{n},{k}]", [(z, derivative(z.data, y), text.format(n=n, k=k))], tape)
                for n, (row, ys) in enumerate(zip(rows, targets)) for k, (z, y) in enumerate(zip(row, ys))]
    return loss


LOSSES = {
    "softmax_cross_entropy": _softmax_ce,
    "bce_with_logits": _elementwise_loss(lambda z, y: max(z, 0) - z * y + math.log1p(math.exp(-abs(z))),
                                         lambda z, y: _sigmoid(z) - y, "(sigmoid(z[{n},{k}]) - y[{n},{k}])"),
    "mse": _elementwise_loss(lambda z, y: (z - y) ** 2, lambda z, y: 2 * (z - y), "2 (z[{n},{k}] - y[{n},{k}])"),
}


def require_small(model, loss: str) -> None:
    """Raise ConfigError unless every layer and the loss have a scalar version and the model
    has at most MAX_PARAMS parameters."""
    if loss not in LOSSES:
        raise ConfigError(f"--scalar supports the losses {', '.join(LOSSES)}; this model trains with {loss}")
    for i, spec in enumerate(model.spec()):
        if spec["type"] not in LAYERS:
            raise ConfigError(f"--scalar supports the layers {', '.join(LAYERS)}; layers.{i} is {spec['type']}")
    if model.n_params > MAX_PARAMS:
        raise ConfigError(f"--scalar is for tiny models: this one has {model.n_params:,} parameters, "
                          f"the limit is {MAX_PARAMS}")


@dataclass
class ScalarPass:
    loss: float
    grads: dict[str, np.ndarray]  # "layers.<l>.<key>" -> the gradient gathered from the Values
    log: list[str]  # one chain-rule step per line, in the order they ran


def scalar_pass(trace: Trace) -> ScalarPass:
    """Forward and backward of the traced model and batch with one Value per number."""
    tape, log, params = [], [], {}
    rows = [[Value(v, f"x[{n},{i}]") for i, v in enumerate(r)] for n, r in enumerate(trace.X)]
    for step in trace.steps:
        rows, made = LAYERS[step.type](rows, step, tape)
        params.update({f"{step.name}.{k}": v for k, v in made.items()})
    if trace.loss.spec.class_weights is not None:
        raise ConfigError("--scalar follows the plain losses; this run weighs its classes (loss.class_weights)")
    losses = LOSSES[trace.loss.name](rows, trace.loss.targets, tape)
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
