"""Looking inside training: gradient flow per layer, dead and saturated units, and the layer
where numbers first stop being finite.

Statistics per parameter tensor (named ``layers.<i>.<key>``): ``grad_norm``, ``weight_norm``,
``update_ratio`` = ||lr * update|| / ||W||. Per layer output: ``act_mean``, ``act_std``, and
``dead_fraction`` (ReLU family: units that are zero for the whole batch) or
``saturated_fraction`` (sigmoid, tanh: units beyond 0.99 of their range for the whole batch).

Gradients vanish in two ways, each a VANISHING warning: a tensor's gradient norm tiny against
its own weight norm (``diagnostics.vanishing``), and a weight matrix's gradient norm tiny
against the largest weight-matrix gradient norm of the same step (``diagnostics.layer_ratio``):
the early layers of a deep sigmoid stack that learn nothing while the last one does.
"""

import warnings
from typing import Protocol

import numpy as np

from ..core import grad_norm
from ..devices import to_numpy
from ..errors import TrainingWarning
from ..layers.registry import units_of
from ..optimizers import is_weight_matrix


def forward_watched(model, x: np.ndarray, watch) -> np.ndarray:
    """``model.forward`` that shows each layer's output to ``watch(index, layer, out)``."""
    for i, layer in enumerate(model.layers):
        x = layer.forward(x)
        watch(i, layer, x)
    return x


def unit_fraction(layer, out: np.ndarray) -> tuple[str, float] | None:
    """("dead_fraction", f) or ("saturated_fraction", f), as the layer type's ``units`` say (the
    ReLU family: dead; sigmoid and tanh: saturated): the fraction of units stuck for the whole batch."""
    units = units_of(layer)
    if units is None:
        return None
    return f"{units.state}_fraction", float(np.mean(np.all(units.stuck(layer, out), axis=0)))


def _norm(a: np.ndarray) -> float:
    return grad_norm([a])


def gradient_table(model, lr: float | None = None, before: dict | None = None) -> str:
    """The table to print after any backward: layer, grad norm, param norm, ratio, status.

    ratio is ||lr * update|| / ||W|| when ``before`` (parameters before the optimizer step) is
    given, else ||lr * grad|| / ||W|| when ``lr`` is, else ||grad|| / ||W||.
    """
    rows = [("tensor", "shape", "grad norm", "param norm", "ratio", "status")]
    for name, p, g in model.parameters():
        gn, pn = _norm(g), _norm(p)
        if before is not None:
            num = _norm(p - before[name])
        else:
            num = gn * (lr if lr is not None else 1.0)
        ratio = num / pn if pn > 0 else float("inf")
        status = ("NON-FINITE" if not np.isfinite(gn) else "VANISHING" if pn > 0 and gn / pn < 1e-7
                  else "ok")
        rows.append((name, "x".join(map(str, p.shape)), f"{gn:.3e}", f"{pn:.3e}", f"{ratio:.2e}", status))
    widths = [max(len(r[c]) for r in rows) for c in range(6)]
    lines = ["  ".join(v.ljust(w) if c in (0, 1, 5) else v.rjust(w) for c, (v, w) in enumerate(zip(r, widths)))
             .rstrip() for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def locate_nonfinite(model, loss_fn, X: np.ndarray, y: np.ndarray) -> str:
    """Run forward, then backward, layer by layer and name the first place that is not finite:
    a layer's output (forward order), the loss, or a gradient (forward order)."""
    found = []

    def watch(i, layer, out):
        if not found and not np.all(np.isfinite(out)):
            found.append(f"the output of layer {i} ({layer!r}) is not finite")

    with np.errstate(all="ignore"):
        out = forward_watched(model, X, watch)
        if found:
            return found[0]
        value, dout = loss_fn(out, y)
        if not np.isfinite(value):
            return "the loss is not finite although every layer output is"
        bad_grads = []
        for i in reversed(range(len(model.layers))):
            layer = model.layers[i]
            dout = layer.backward(dout)  # None from a first layer of indices, which have no gradient
            if (dout is not None and not np.all(np.isfinite(dout))) or any(
                    not np.all(np.isfinite(v)) for v in layer.grads.values()):
                bad_grads.append(i)
    if bad_grads:
        i = min(bad_grads)
        return f"the gradient of layer {i} ({model.layers[i]!r}) is not finite"
    return "the gradients are too large to square in this dtype (their norm overflows)"


class Bounds(Protocol):
    """Where a statistic earns a warning (the diagnostics section of a run config has these keys)."""

    vanishing: float  # grad norm / weight norm below this is VANISHING
    layer_ratio: float  # a weight matrix's grad norm below this share of the largest is VANISHING
    explode_factor: float  # a grad norm this many times its running median is EXPLODING
    max_grad_norm: float | None  # and so is one above this
    dead_fraction: float  # a ReLU layer with more dead units than this share is DEAD


class Recorder:
    """Collects diagnostics rows (step, layer, tensor, stat, value) and warns (TrainingWarning of
    kind ``vanishing``, ``exploding`` or ``dead``) when a statistic crosses its ``bounds``."""

    def __init__(self, bounds: Bounds):
        self.bounds = bounds
        self.rows: list[tuple[int, int, str, str, float]] = []
        self.grad_history: dict[str, list[float]] = {}
        self.faint: set[str] = set()  # weight matrices below layer_ratio of the largest, as last recorded

    def record_activations(self, step: int):
        """A ``watch`` function for ``forward_watched`` that records output statistics."""
        def watch(i, layer, out):
            out, name = to_numpy(out), f"layers.{i}"  # statistics on the host, whatever the device
            self.rows.append((step, i, name, "act_mean", float(out.mean())))
            self.rows.append((step, i, name, "act_std", float(out.std())))
            frac = unit_fraction(layer, out)
            if frac:
                self.rows.append((step, i, name, *frac))
                if frac[0] == "dead_fraction" and frac[1] > self.bounds.dead_fraction:
                    warnings.warn(TrainingWarning("dead", f"DEAD step {step}: layer {i} ({layer!r}) has "
                                                  f"{frac[1]:.0%} of its units zero for the whole batch"))
        return watch

    def record_step(self, step: int, model, before: dict[str, np.ndarray]) -> None:
        """Gradient and weight norms and update ratios after an optimizer step; ``before`` holds
        the parameters as they were before it."""
        matrices = {}
        for name, p, g in model.parameters():
            i, p, g = int(name.split(".")[1]), to_numpy(p), to_numpy(g)  # on the host, whatever the device
            gn, pn = _norm(g), _norm(before[name])
            ratio = _norm(p - before[name]) / pn if pn > 0 else float("nan")
            self.rows += [(step, i, name, "grad_norm", gn), (step, i, name, "weight_norm", pn),
                          (step, i, name, "update_ratio", ratio)]
            history = self.grad_history.setdefault(name, [])
            median = float(np.median(history)) if history else None
            if pn > 0 and gn / pn < self.bounds.vanishing:
                warnings.warn(TrainingWarning("vanishing", f"VANISHING step {step}: {name} gradient norm "
                                              f"{gn:.2e} is {gn / pn:.1e} of its weight norm {pn:.2e}"))
            if (self.bounds.max_grad_norm and gn > self.bounds.max_grad_norm) or \
                    (median and len(history) >= 3 and gn > self.bounds.explode_factor * median):
                why = (f"above the bound {self.bounds.max_grad_norm:g}" if self.bounds.max_grad_norm and
                       gn > self.bounds.max_grad_norm else f"{gn / median:.0f}x its running median {median:.2e}")
                warnings.warn(TrainingWarning("exploding", f"EXPLODING step {step}: {name} gradient norm "
                                              f"{gn:.2e} is {why}"))
            history.append(gn)
            if is_weight_matrix(p):
                matrices[name] = gn
        self.compare_layers(step, matrices)

    def compare_layers(self, step: int, grad_norms: dict[str, float]) -> None:
        """Warn (VANISHING) when a weight matrix's gradient norm falls below ``layer_ratio`` of the
        largest one of the step, ``grad_norms`` {tensor: norm}; once, until it rises above again."""
        if len(grad_norms) < 2:
            return
        top = max(grad_norms, key=grad_norms.get)
        bound = self.bounds.layer_ratio * grad_norms[top]
        faint = {name for name, gn in grad_norms.items() if gn < bound}
        for name in sorted(faint - self.faint, key=grad_norms.get):
            gn = grad_norms[name]
            warnings.warn(TrainingWarning("vanishing", (
                f"VANISHING step {step}: {name} gradient norm {gn:.2e} is {gn / grad_norms[top]:.1e} of the "
                f"largest, {top}'s {grad_norms[top]:.2e} (below diagnostics.layer_ratio {self.bounds.layer_ratio:g})")))
        self.faint = faint

    def load_csv(self, text: str, before_step: int) -> None:
        """Take back the rows of an earlier diagnostics.csv that precede ``before_step``."""
        for line in text.splitlines()[1:]:
            step, layer, tensor, stat, value = line.split(",")
            if int(step) < before_step:
                self.rows.append((int(step), int(layer), tensor, stat, float(value)))
                if stat == "grad_norm":
                    self.grad_history.setdefault(tensor, []).append(float(value))

    def csv(self) -> str:
        """diagnostics.csv: tidy, one row per step, layer, tensor and statistic."""
        lines = ["step,layer,tensor,stat,value"]
        lines += [f"{s},{i},{t},{k},{v:.6g}" for s, i, t, k, v in self.rows]
        return "\n".join(lines) + "\n"
