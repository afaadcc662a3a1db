"""Gradient checking: every hand-written backward against float64 central differences.

The checker never touches the object it is given. It checks a deep copy in which every float
parameter, gradient and buffer is float64 (attributes that alias them keep aliasing them), and
before every forward it puts back the copy's random generators and buffers, so dropout sees one
fixed mask and batch norm's running statistics stay put.

The scalar differentiated is sum(out * g) for a layer, with a random upstream gradient g
(all-ones would hide bugs in normalisation layers, whose dx is 0 for it), and the loss for a
loss. A model is checked as its loss at the model's output, then as sum(out * dlogits).

N = batch size, D = input features, H = layer outputs, K = model outputs.
"""

import copy
from collections.abc import Callable

import numpy as np

from ..errors import GradcheckError, MLPManualError
from .compare import Settings, compare_tensor, kind_of
from .report import GradcheckReport, StructureCheck

LAYER_MEMBERS = ("forward", "backward", "params", "grads")
LINEARITY_RTOL = 1e-9  # float64 roundoff is ~1e-16 per operation; a real violation is O(1)
STREAM = 0x6772616463686B  # keeps the checker's draws apart from a user's default_rng(seed)


def check_layer(layer, x, *, mode: str | None = None, label: str | None = None, **settings) -> GradcheckReport:
    """Check dx and every parameter gradient of a layer, plus the structural properties of its backward.

    Inputs: layer, any object with forward, backward, params and grads (need not subclass Layer);
    x (N, D), the input (any float dtype: it is checked in float64); mode, "train", "eval" or
    None to leave the mode as it is; settings, the fields of ``Settings`` (eps, tol, warn, seed,
    max_elements).
    Returns: a GradcheckReport with rows "dx" and one per parameter key.
    """
    s = Settings(**settings)
    require_layer(layer)
    x = _float64_input(x, "x")
    target = _Target.of(layer, [layer], mode, lambda work: [(k, work, k) for k in work.params])
    rng = _checker_rng(s.seed)
    out = target.forward(x.copy())
    g = rng.normal(size=out.shape)  # (N, H)
    dx, grads, structure = _structure(target, x, g, rng)
    x_var = x.copy()
    rows = [compare_tensor("dx", dx, x_var, lambda: target.forward(x_var.copy()), g, s, rng)]
    for name, owner, key in target.tensors:
        rows.append(compare_tensor(name, grads[name], owner.params[key], lambda: target.forward(x.copy()), g, s, rng))
    label = label or f"{describe(layer)} x{x.shape}" + (f" {mode}" if mode else "")
    return GradcheckReport(label, rows, structure, settings=_settings_dict(s))


def check_loss(loss_fn, logits, targets, *, label: str | None = None, **settings) -> GradcheckReport:
    """Check the gradient a loss returns with respect to its input.

    Inputs: loss_fn(logits, targets) -> (loss, dlogits), or a LossSpec; logits (N, K);
    targets as the loss wants them; settings as for ``check_layer``.
    Returns: a GradcheckReport with the row "dlogits".
    """
    s = Settings(**settings)
    fn = getattr(loss_fn, "fn", loss_fn)
    if not callable(fn):
        raise GradcheckError(f"{describe(loss_fn)} is not a loss: call it as loss(logits, targets)")
    z = _float64_input(logits, "logits")
    t = _float64_targets(targets)
    z_in, t_in = z.copy(), t.copy()
    _, dz = _loss_call(fn, z_in, t_in)
    _, dz_again = _loss_call(fn, z.copy(), t.copy())
    structure = [
        StructureCheck("deterministic: two calls give the same gradient", _same(dz, dz_again),
                       "dlogits changed between two identical calls"),
        StructureCheck("the loss leaves its logits unchanged", np.array_equal(z_in, z), "logits were written into"),
        StructureCheck("the loss leaves its targets unchanged", np.array_equal(t_in, t), "targets were written into"),
        StructureCheck("dlogits has the dtype of the logits", dz.dtype == z.dtype, f"{dz.dtype}, not {z.dtype}"),
    ]
    z_var = z.copy()
    row = compare_tensor("dlogits", dz, z_var, lambda: _loss_call(fn, z_var.copy(), t)[0], 1.0, s,
                         _checker_rng(s.seed))
    label = label or f"{getattr(fn, '__name__', describe(fn))} logits{z.shape}"
    return GradcheckReport(label, [row], structure, settings=_settings_dict(s))


def check_model(model, loss, X, y, *, mode: str | None = None, label: str | None = None,
                **settings) -> GradcheckReport:
    """Check a whole model through its loss: the loss gradient, the input gradient and every
    parameter tensor.

    The loss's gradient is checked at the model's output (row "dlogits"), then the model's
    backward with that dlogits as its upstream gradient. By the chain rule the two together are
    the gradient of the loss; checked apart, the finite differences stay as precise as for one
    layer, where differencing the loss itself could resolve no better than ~1e-16 / eps of its
    value, too coarse for the small entries of a mean over the batch.
    Inputs: model with forward, backward and a list ``layers`` of layers; loss, a LossSpec or a
    function (logits, targets) -> (loss, dlogits); X (N, D); y, labels (passed through
    ``loss.targets`` when the loss has it); mode and settings as for ``check_layer``.
    Returns: a GradcheckReport with rows "dlogits", "dx" and "layers.<i>.<key>" per parameter.
    """
    s = Settings(**settings)
    layers = require_model(model)
    fn = getattr(loss, "fn", loss)
    t = loss.targets(np.asarray(y), np.float64) if hasattr(loss, "targets") else _float64_targets(y)
    X = _float64_input(X, "X")
    target = _Target.of(model, layers, mode, lambda work: [
        (f"layers.{i}.{k}", layer, k) for i, layer in enumerate(work.layers) for k in layer.params])
    logits = target.forward(X.copy())  # (N, K)
    at_output = check_loss(fn, logits, t, **settings)
    _, dlogits = _loss_call(fn, logits, t)
    rng = _checker_rng(s.seed)
    dx, grads, structure = _structure(target, X, dlogits, rng)
    X_var = X.copy()
    rows = [*at_output.rows,
            compare_tensor("dx", dx, X_var, lambda: target.forward(X_var.copy()), dlogits, s, rng)]
    for name, owner, key in target.tensors:
        rows.append(compare_tensor(name, grads[name], owner.params[key], lambda: target.forward(X.copy()),
                                   dlogits, s, rng))
    structure += [StructureCheck(f"loss: {c.name}", c.ok, c.detail) for c in at_output.structure]
    label = label or f"{type(model).__name__} ({len(layers)} layers) X{X.shape}" + (f" {mode}" if mode else "")
    return GradcheckReport(label, rows, structure, settings=_settings_dict(s))


def modes_to_check(obj, x) -> list[str | None]:
    """["train", "eval"] when a layer or model computes differently in the two modes, else [None]."""
    if not (callable(getattr(obj, "train", None)) and callable(getattr(obj, "eval", None))):
        return [None]
    layers = getattr(obj, "layers", [obj])
    outs = [_Target.of(obj, layers, mode, lambda work: []).forward(_float64_input(x, "x"))
            for mode in ("train", "eval")]
    return [None] if np.array_equal(*outs) else ["train", "eval"]


def require_layer(obj, what: str | None = None) -> None:
    """Raise GradcheckError unless ``obj`` follows the layer contract closely enough to be checked;
    ``what`` names it in the message."""
    problem = _layer_problem(obj)
    if problem:
        raise GradcheckError(f"{what or describe(obj)} is not a layer: {problem}")


def _layer_problem(obj) -> str | None:
    missing = [m for m in LAYER_MEMBERS if not hasattr(obj, m)]
    if missing:
        return f"it has no {', '.join(missing)} (a layer needs {', '.join(LAYER_MEMBERS)})"
    for m in ("forward", "backward"):
        if not callable(getattr(obj, m)):
            return f"its {m} is not a method"
    for d in ("params", "grads"):
        if not hasattr(getattr(obj, d), "items"):
            return f"its {d} is {kind_of(getattr(obj, d))}, not a dict of arrays"
    for k, v in obj.params.items():
        if not isinstance(v, np.ndarray) or v.dtype.kind != "f":
            return f"params[{k!r}] is {kind_of(v)}, not a float numpy array"
    return None


def require_model(model) -> list:
    """The model's layers, each checked against the layer contract; GradcheckError if unfit."""
    for m in ("forward", "backward"):
        if not callable(getattr(model, m, None)):
            raise GradcheckError(f"{describe(model)} is not a model: it has no {m} method")
    layers = getattr(model, "layers", None)
    if not isinstance(layers, (list, tuple)):
        raise GradcheckError(f"{describe(model)} is not a model: it needs a list 'layers'")
    for i, layer in enumerate(layers):
        require_layer(layer, f"layers.{i} ({describe(layer)})")
    return list(layers)


def describe(obj) -> str:
    """The object's repr when it has a useful one, else its type name."""
    text = repr(obj)
    return type(obj).__name__ if text.startswith("<") else text


def _settings_dict(s: Settings) -> dict:
    return {"eps": s.eps, "tol": s.tol, "warn": s.warn, "seed": s.seed, "max_elements": s.max_elements}


class _Target:
    """A float64 copy of a layer or model, with its random generators and buffers pinned."""

    def __init__(self, work, layers, tensors):
        self.work, self.tensors = work, tensors  # tensors: (name, owning layer, params key)
        self.restore = pin_state(layers)

    @classmethod
    def of(cls, obj, layers, mode, tensors_of):
        work = copy_in(obj, layers, np.float64, mode)
        is_layer = any(layer is obj for layer in layers)
        return cls(work, [work] if is_layer else list(work.layers), tensors_of(work))

    def forward(self, x):
        self.restore()
        out = _call(self.work, "forward", x)
        if not isinstance(out, np.ndarray) or out.dtype.kind != "f":
            raise GradcheckError(f"{describe(self.work)}.forward must return a float numpy array, got {kind_of(out)}")
        if out.dtype != np.float64:
            raise GradcheckError(f"{describe(self.work)}.forward returned {out.dtype} for a float64 input; the "
                                 "checker needs float64 throughout (does it cast to a fixed dtype?)")
        return out

    def backward(self, dout, x):
        dx = _call(self.work, "backward", dout)
        if not isinstance(dx, np.ndarray) or dx.shape != x.shape:
            got = f"shape {dx.shape}" if isinstance(dx, np.ndarray) else kind_of(dx)
            raise GradcheckError(f"{describe(self.work)}.backward must return dx shaped like its input "
                                 f"{x.shape}, got {got}")
        grads = {name: owner.grads.get(key) for name, owner, key in self.tensors}
        return dx.copy(), {n: v.copy() if isinstance(v, np.ndarray) else v for n, v in grads.items()}


def copy_in(obj, layers, dtype, mode: str | None = None):
    """A deep copy of a layer or model (``layers`` are its layers) whose float parameters,
    gradients and buffers are ``dtype``, in ``mode`` ("train", "eval" or None to keep it)."""
    memo = {}  # deepcopy puts these copies wherever the originals are referenced
    for layer in layers:
        for d in (layer.params, layer.grads, getattr(layer, "buffers", {})):
            for v in d.values():
                if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                    memo[id(v)] = np.array(v, dtype=dtype, order="C")
    try:
        work = copy.deepcopy(obj, memo)
    except Exception as e:
        raise GradcheckError(f"cannot copy {describe(obj)} to check it: {type(e).__name__}: {e}") from e
    if mode is not None:
        if not callable(getattr(work, mode, None)):
            raise GradcheckError(f"{describe(obj)} has no {mode}() method to switch to {mode} mode")
        _call(work, mode)
    return work


def pin_state(layers) -> Callable[[], None]:
    """Remember the layers' random generators and buffers as they are now; the function returned
    puts them back, so that every forward after it draws the same dropout mask and reads the same
    running statistics. A block's buffers include its inner layers'; their generators are found
    by walking into it."""
    generators = [(v, v.bit_generator.state) for layer in _within(layers)
                  for v in getattr(layer, "__dict__", {}).values() if isinstance(v, np.random.Generator)]
    buffers = [(layer.buffers, k, v, v.copy()) for layer in layers
               for k, v in getattr(layer, "buffers", {}).items() if isinstance(v, np.ndarray)]

    def restore():
        for gen, state in generators:
            gen.bit_generator.state = state
        for d, k, arr, saved in buffers:
            arr[...] = saved
            d[k] = arr
    return restore


def _within(layers) -> list:
    """The layers and every layer nested in them (a residual's inner layers), depth first."""
    return [v for layer in layers for v in [layer, *_within(getattr(layer, "sublayers", list)())]]


def _structure(target, x, seed, rng):
    """Backward once for the analytic gradients, then again for the structural checks."""
    x_in, d = x.copy(), seed.copy()
    target.forward(x_in)
    dx, grads = target.backward(d, x)
    checks = [StructureCheck("forward leaves its input unchanged", np.array_equal(x_in, x), "x was written into"),
              StructureCheck("backward leaves dout unchanged", np.array_equal(d, seed), "dout was written into")]
    target.forward(x.copy())
    dx2, grads2 = target.backward(seed.copy(), x)
    differ = [n for n, a, b in _pairs(dx, grads, dx2, grads2) if not _same(a, b)]
    checks.append(StructureCheck("deterministic: two backward passes agree", not differ,
                                 f"{', '.join(differ)} changed between two identical passes (accumulating with += ?)"))
    a, b = 0.75, -1.25
    g1, g2 = rng.normal(size=seed.shape), rng.normal(size=seed.shape)
    results = []
    for dout in (a * g1 + b * g2, g1, g2):
        target.forward(x.copy())
        results.append(target.backward(dout, x))
    (lx, lg), (x1, g1s), (x2, g2s) = results
    bad, triples = [], []
    for n, whole, p1, p2 in zip(["dx", *lg], [lx, *lg.values()], [x1, *g1s.values()], [x2, *g2s.values()]):
        if all(isinstance(v, np.ndarray) and v.shape == whole.shape for v in (whole, p1, p2)):
            triples.append((n, whole, a * p1 + b * p2))
    # a gradient that is 0 up to roundoff (a bias before batch norm) is judged on the pass's scale
    floor = 1e-2 * max([np.abs(w).max(initial=0.0) for _, w, _ in triples] + [1e-300])
    for n, whole, combo in triples:
        scale = max(np.abs(whole).max(initial=0.0), np.abs(combo).max(initial=0.0), floor)
        err = np.abs(whole - combo).max(initial=0.0) / scale
        if not err <= LINEARITY_RTOL:
            bad.append(f"{n} off by {err:.1e}")
    checks.append(StructureCheck("backward is linear in dout", not bad,
                                 "backward(a*g1 + b*g2) != a*backward(g1) + b*backward(g2): " + ", ".join(bad)))
    wrong = [f"dx is {dx.dtype}, not {x.dtype}"] if dx.dtype != x.dtype else []
    for name, owner, key in target.tensors:
        p, gr = owner.params[key], grads[name]
        if not isinstance(gr, np.ndarray):
            wrong.append(f"{name} is missing from grads" if gr is None else f"{name} is {kind_of(gr)}")
        elif gr.shape != p.shape or gr.dtype != p.dtype:
            wrong.append(f"{name} gradient is {gr.dtype}{gr.shape}, parameter {p.dtype}{p.shape}")
    extra = {id(o): sorted(set(o.grads) - set(o.params)) for _, o, _ in target.tensors}
    wrong += [f"grads has {k!r}, which is no parameter" for keys in extra.values() for k in keys]
    checks.append(StructureCheck("gradient shapes and dtypes equal their parameters'", not wrong, "; ".join(wrong)))
    return dx, grads, checks


def _checker_rng(seed: int) -> np.random.Generator:
    """Upstream gradients, directions and samples. Not default_rng(seed): an input drawn from
    that would equal g, and x.T @ x is symmetric, which hides a transposed weight gradient."""
    return np.random.default_rng([STREAM, seed])


def _call(obj, method, *args):
    """Call a method of a user's object; its exceptions become one-line GradcheckErrors."""
    try:
        return getattr(obj, method)(*args)
    except MLPManualError:
        raise
    except Exception as e:
        raise GradcheckError(f"{describe(obj)}.{method} raised {what_was_raised(e)}") from e


def what_was_raised(e: BaseException) -> str:
    """``TypeError: <first line of the message>``, for a one-line error about a user's code."""
    text = str(e)
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def _loss_call(fn, logits, targets):
    try:
        result = fn(logits, targets)
    except MLPManualError:
        raise
    except Exception as e:
        raise GradcheckError(f"the loss raised {what_was_raised(e)}") from e
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], np.ndarray)):
        raise GradcheckError("a loss must return (loss, dlogits) with dlogits a numpy array")
    loss, dlogits = result
    if dlogits.shape != logits.shape:
        raise GradcheckError(f"the loss returned dlogits of shape {dlogits.shape} for logits of shape {logits.shape}")
    return float(loss), dlogits


def _float64_input(x, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind not in "fiu" or x.ndim == 0:
        raise GradcheckError(f"{name} must be a numeric array with at least one dimension, got {kind_of(x)}")
    return np.array(x, dtype=np.float64, order="C")


def _float64_targets(y) -> np.ndarray:
    y = np.asarray(y)
    return np.array(y, dtype=np.float64) if y.dtype.kind == "f" else y.copy()


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return a is None and b is None


def _pairs(dx, grads, dx2, grads2):
    yield "dx", dx, dx2
    for n in grads:
        yield n, grads[n], grads2[n]

