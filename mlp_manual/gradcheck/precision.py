"""Precision check: a layer's float32 forward and backward against its own float64 result on the
same inputs.

Finite differences in float64 tell whether a backward is the derivative of its forward; they
cannot tell whether a formula keeps its accuracy in float32, the dtype training runs in. Here the
input, the parameters, the buffers and the upstream gradient are rounded to float32 once, and a
float32 copy and a float64 copy of the layer run forward and backward on those same numbers (one
dropout mask for both). Only float32 arithmetic inside the layer differs.

The rule, for every tensor T the layer computes (out, dx and each parameter gradient):

    err(T)   = max|T32 - T64| / max|T64|                 max-norm relative error
    bound(T) = SAFETY * eps32 * sqrt(n) * kappa(T)       eps32 = 2^-23, float32's machine epsilon

- n is the size of the largest array the layer reads: no sum inside a layer has more terms, and
  the rounding error of a sum of n terms grows like sqrt(n) times eps32 (a random walk).
- kappa(T) >= 1 is how sensitive T is to float32 rounding of what it is computed from, measured
  in float64: every entry of the input, the parameters, the buffers and the upstream gradient,
  and, before the backward, of the arrays the layer caches for it (a float32 layer stores them
  in float32), is moved by a random relative amount of at most eps32 (DRAWS draws), and
  kappa(T) = max|T' - T64| / (eps32 * max|T64|). It is the loss of precision no float32
  computation avoids: centering inputs whose mean is large next to their spread, or 1 - t^2 of
  a saturated tanh. An error far above it comes from the formula, not from the problem.
- SAFETY = 4 covers the few roundings per entry outside the sums and the constants a layer
  rounds to float32 (GELU's sqrt(2/pi)). Over the built-in checks for seeds 0 to 99 the largest
  err / (eps32 * sqrt(n) * kappa) is about 2.7 (GELU's out on one row).

A tensor whose err exceeds its bound FAILs; a layer is reported by its worst tensor (the largest
err / bound).

N = batch size, D = input features, H = output features.
"""

from dataclasses import dataclass

import numpy as np

from .contract import call_user, describe, input_is_indices, require_layer
from .target import copy_in, modes_to_check

EPS32 = float(np.finfo(np.float32).eps)
SAFETY = 4.0
DRAWS = 8  # random perturbations that measure kappa (2 missed a softmax's 9x sensitivity on 1 input in 300)
STREAM = 0x707265636973  # keeps these draws apart from a user's default_rng(seed)


@dataclass(frozen=True)
class PrecisionRow:
    """One tensor's float32 result against its float64 reference."""

    name: str  # "out", "dx" or a params key
    shape: tuple[int, ...]
    err: float  # max|T32 - T64| / max|T64|
    kappa: float  # measured sensitivity to float32 rounding of the inputs, at least 1
    bound: float  # SAFETY * eps32 * sqrt(n) * kappa

    @property
    def ratio(self) -> float:
        return self.err / self.bound

    @property
    def passed(self) -> bool:
        return bool(self.err <= self.bound)


@dataclass
class PrecisionReport:
    label: str
    rows: list[PrecisionRow]

    @property
    def worst(self) -> PrecisionRow:
        return max(self.rows, key=lambda r: r.ratio)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)

    def row(self, name: str) -> PrecisionRow:
        """The row of tensor ``name``."""
        return next(r for r in self.rows if r.name == name)

    def line(self, width: int = 0, name_width: int = 6) -> str:
        """The check's worst tensor: name, error, bound, kappa, verdict."""
        w = self.worst
        return (f"{self.label:<{width}}  {w.name:<{name_width}}  {w.err:9.1e}  {w.bound:9.1e}  {w.kappa:8.3g}  "
                f"{'PASS' if w.passed else 'FAIL'}")


def check_precision(layer, x, *, mode: str | None = None, label: str | None = None, seed: int = 0) -> PrecisionReport:
    """Run ``layer`` forward and backward in float32 and in float64 on the same float32-rounded
    input x (N, D), parameters and random upstream gradient; compare tensor by tensor.

    The layer itself is left untouched (copies run). mode: "train", "eval" or None.
    Returns: a PrecisionReport, rows "out", "dx" and one per parameter.
    """
    require_layer(layer)
    single = copy_in(layer, [layer], np.float32, mode)
    x32 = np.asarray(x, dtype=np.float32)
    rng = np.random.default_rng([STREAM, seed])
    out_shape = _run(single, x32, None)["out"].shape
    dout32 = rng.normal(size=out_shape).astype(np.float32)  # (N, H)
    low = _run(single, x32, dout32)
    exact = _run(copy_in(single, [single], np.float64), x32.astype(np.float64), dout32.astype(np.float64))
    sizes = [x32.size, dout32.size, *(a.size for a in _arrays(single))]
    kappa = {k: 1.0 for k in exact}
    for _ in range(DRAWS):
        moved = _run(*_perturbed(single, x32, dout32, rng))
        for k, ref in exact.items():
            kappa[k] = max(kappa[k], _max_rel(moved[k], ref) / EPS32)
    rows = []
    for k, ref in exact.items():
        bound = SAFETY * EPS32 * np.sqrt(max(sizes)) * kappa[k]
        rows.append(PrecisionRow(k, tuple(ref.shape), _max_rel(low[k], ref), kappa[k], float(bound)))
    return PrecisionReport(label or f"{describe(layer)} x{tuple(np.shape(x))}" + (f" {mode}" if mode else ""), rows)


def check_precision_builtins(seed: int = 0, layer_shapes=None) -> list[PrecisionReport]:
    """check_precision on every built-in layer, shape and mode that ``mlp-gradcheck`` checks."""
    from .suites import LAYER_SHAPES, builtin_cases

    return [check_precision(layer, x, mode=mode, label=label, seed=seed)
            for label, layer, x, mode in builtin_cases(layer_shapes or LAYER_SHAPES, seed)]


def check_precision_modes(layer, x, label: str, seed: int = 0) -> list[PrecisionReport]:
    """check_precision in each mode in which the layer computes differently."""
    return [check_precision(layer, x, mode=mode, label=label + (f" {mode}" if mode else ""), seed=seed)
            for mode in modes_to_check(layer, x)]


def format_precision(reports: list[PrecisionReport], only_failures: bool = False) -> str:
    """One line per check (its worst tensor), then how many pass."""
    width = max(len(r.label) for r in reports)
    name_width = max(len("tensor"), *(len(r.worst.name) for r in reports))  # "0.0.gamma" inside a residual
    lines = [f"{'check':<{width}}  {'tensor':<{name_width}}  {'rel err':>9}  {'bound':>9}  {'kappa':>8}  verdict",
             "-" * (width + name_width + 45)]
    lines += [r.line(width, name_width) for r in reports if not (only_failures and r.passed)]
    failed = sum(not r.passed for r in reports)
    lines.append(f"{len(reports) - failed} passed, {failed} failed: float32 against float64 on the same inputs "
                 f"(bound = {SAFETY:g} * eps32 * sqrt(n) * kappa)")
    return "\n".join(lines)


def _arrays(layer):
    return [v for d in (layer.params, getattr(layer, "buffers", {})) for v in d.values()
            if isinstance(v, np.ndarray) and v.dtype.kind == "f"]


def _run(layer, x, dout, move=None) -> dict[str, np.ndarray]:
    """Forward (and backward when dout is given) of a fresh copy of ``layer`` in x's dtype; with
    ``move``, the arrays the layer caches for its backward are moved by it in between."""
    work = copy_in(layer, [layer], x.dtype)  # a fresh copy: the same generator state, so the same mask
    out = call_user(work, "forward", x)
    if dout is None:
        return {"out": out}
    out = out.copy()
    if move is not None:
        _move_cache(work, move)
    dx = call_user(work, "backward", dout)
    grads = {} if input_is_indices(work) else {"dx": np.array(dx)}  # integer indices have none
    return {"out": out, **grads, **{k: np.array(work.grads[k]) for k in work.params}}


def _perturbed(single, x32, dout32, rng):
    """A float64 copy of ``single``, float64 x and dout, and the function that moves every entry
    of an array by a relative amount of at most eps32; the copy's arrays are moved already."""
    def move(a):
        return a * (1 + EPS32 * rng.uniform(-1, 1, size=a.shape))

    work = copy_in(single, [single], np.float64)
    for d in (work.params, getattr(work, "buffers", {})):
        for k, v in d.items():
            if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                d[k] = move(v)
    x = x32.astype(np.float64)  # integer indices are exact in float32: nothing to move
    return work, x if input_is_indices(single) else move(x), move(dout32.astype(np.float64)), move


def _move_cache(layer, move) -> None:
    """Move the float arrays a layer keeps between forward and backward (its attributes other
    than params, grads and buffers), and those of the layers inside it (a residual's): a float32
    layer stores them in float32, so their rounding is part of what no float32 computation avoids."""
    own = {id(v) for d in (layer.params, layer.grads, getattr(layer, "buffers", {})) for v in d.values()}
    for name, v in list(vars(layer).items()):
        if isinstance(v, np.ndarray) and v.dtype.kind == "f" and id(v) not in own:
            setattr(layer, name, move(v))
    for inner in getattr(layer, "sublayers", list)():
        _move_cache(inner, move)


def _max_rel(a: np.ndarray, ref: np.ndarray) -> float:
    scale = float(np.abs(ref).max(initial=0.0))
    diff = float(np.abs(np.asarray(a, dtype=np.float64) - ref).max(initial=0.0))
    return diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))


def check_precision_model(model, X, seed: int = 0) -> list[PrecisionReport]:
    """check_precision on every layer of ``model``, each on the input it receives when X (N, D)
    goes through the model in float64, in the mode the model is in."""
    work = copy_in(model, model.layers, np.float64)
    x = np.asarray(X, dtype=np.float64)
    reports = []
    for i, (layer, spec) in enumerate(zip(work.layers, work.spec())):
        reports.append(check_precision(layer, x, label=f"layers.{i} {spec['type']} x{x.shape}", seed=seed))
        x = call_user(layer, "forward", x)
    return reports


def precision_dict(reports: list[PrecisionReport]) -> dict:
    """What ``mlp-gradcheck --precision --json`` prints."""
    return {"passed": all(r.passed for r in reports), "safety": SAFETY, "eps32": EPS32,
            "checks": [{"label": r.label, "passed": r.passed, "worst": r.worst.name,
                        "tensors": [{"name": t.name, "shape": list(t.shape), "err": t.err, "bound": t.bound,
                                     "kappa": t.kappa, "verdict": "PASS" if t.passed else "FAIL"}
                                    for t in r.rows]} for r in reports]}
