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

import numpy as np

from ..errors import GradcheckError
from .compare import Settings, compare_tensor
from .contract import (
    call_loss,
    describe,
    float64_input,
    float64_targets,
    require_layer,
    require_model,
    what_was_raised,
)
from .report import GradcheckReport, StructureCheck, not_differentiable
from .structure import same, structure_checks
from .target import Target, copy_in, modes_to_check, pin_state

__all__ = ["check_layer", "check_loss", "check_model", "copy_in", "describe", "modes_to_check", "pin_state",
           "require_layer", "what_was_raised"]

STREAM = 0x6772616463686B  # keeps the checker's draws apart from a user's default_rng(seed)


def check_layer(layer, x, *, mode: str | None = None, label: str | None = None, **settings) -> GradcheckReport:
    """Check dx and every parameter gradient of a layer, plus the structural properties of its backward.

    Inputs: layer, any object with forward, backward, params and grads (need not subclass Layer);
    x (N, D), the input (any float dtype: it is checked in float64; integer indices for a layer
    that ``takes_indices``, whose dx row is then N/A); mode, "train", "eval" or
    None to leave the mode as it is; settings, the fields of ``Settings`` (eps, tol, warn, seed,
    max_elements).
    Returns: a GradcheckReport with rows "dx" and one per parameter key.
    """
    s = Settings(**settings)
    require_layer(layer)
    x = float64_input(x, "x")
    target = Target.of(layer, [layer], mode, lambda work: [(k, work, k) for k in work.params])
    rng = _checker_rng(s.seed)
    out = target.forward(x.copy())
    g = rng.normal(size=out.shape)  # (N, H)
    dx, grads, structure = structure_checks(target, x, g, rng)
    x_var = x.copy()
    rows = [not_differentiable("dx", x.shape) if target.indices else
            compare_tensor("dx", dx, x_var, lambda: target.forward(x_var.copy()), g, s, rng)]
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
    z = float64_input(logits, "logits")
    t = float64_targets(targets)
    z_in, t_in = z.copy(), t.copy()
    _, dz = call_loss(fn, z_in, t_in)
    _, dz_again = call_loss(fn, z.copy(), t.copy())
    structure = [
        StructureCheck("deterministic: two calls give the same gradient", same(dz, dz_again),
                       "dlogits changed between two identical calls"),
        StructureCheck("the loss leaves its logits unchanged", np.array_equal(z_in, z), "logits were written into"),
        StructureCheck("the loss leaves its targets unchanged", np.array_equal(t_in, t), "targets were written into"),
        StructureCheck("dlogits has the dtype of the logits", dz.dtype == z.dtype, f"{dz.dtype}, not {z.dtype}"),
    ]
    z_var = z.copy()
    row = compare_tensor("dlogits", dz, z_var, lambda: call_loss(fn, z_var.copy(), t)[0], 1.0, s,
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
    t = loss.targets(np.asarray(y), np.float64) if hasattr(loss, "targets") else float64_targets(y)
    X = float64_input(X, "X")
    target = Target.of(model, layers, mode, lambda work: [
        (f"layers.{i}.{k}", layer, k) for i, layer in enumerate(work.layers) for k in layer.params])
    logits = target.forward(X.copy())  # (N, K)
    at_output = check_loss(fn, logits, t, **settings)
    _, dlogits = call_loss(fn, logits, t)
    rng = _checker_rng(s.seed)
    dx, grads, structure = structure_checks(target, X, dlogits, rng)
    X_var = X.copy()
    rows = [*at_output.rows,
            not_differentiable("dx", X.shape) if target.indices else
            compare_tensor("dx", dx, X_var, lambda: target.forward(X_var.copy()), dlogits, s, rng)]
    for name, owner, key in target.tensors:
        rows.append(compare_tensor(name, grads[name], owner.params[key], lambda: target.forward(X.copy()),
                                   dlogits, s, rng))
    structure += [StructureCheck(f"loss: {c.name}", c.ok, c.detail) for c in at_output.structure]
    label = label or f"{type(model).__name__} ({len(layers)} layers) X{X.shape}" + (f" {mode}" if mode else "")
    return GradcheckReport(label, rows, structure, settings=_settings_dict(s))


def _settings_dict(s: Settings) -> dict:
    return {"eps": s.eps, "tol": s.tol, "warn": s.warn, "seed": s.seed, "max_elements": s.max_elements}


def _checker_rng(seed: int) -> np.random.Generator:
    """Upstream gradients, directions and samples. Not default_rng(seed): an input drawn from
    that would equal g, and x.T @ x is symmetric, which hides a transposed weight gradient."""
    return np.random.default_rng([STREAM, seed])


