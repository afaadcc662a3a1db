"""Comparing one analytic gradient with central differences, entry by entry (or on a seeded
sample plus one directional check), with kinks told apart from wrong gradients.

Relative errors are |a - n| / max(|a| + |n|, floor), the floor being 1e-2 of the tensor's
largest numerical gradient or the level of rounding noise, whichever is larger.

An entry whose relative error would FAIL is examined again with one-sided difference
quotients: if they disagree (the perturbation crossed a point where the function is not
differentiable, such as relu at 0) and the analytic value lies between them, it is a valid
subgradient and the entry is a KINK, not a FAIL.
"""

from dataclasses import dataclass

import numpy as np

from .numgrad import numerical_gradient, one_sided_quotients, relative_error
from .report import TensorRow

DEFAULT_TOL = 1e-7  # the default pass threshold


@dataclass(frozen=True)
class Settings:
    """How closely analytic and numerical gradients must agree, and which entries are compared."""

    eps: float = 1e-5  # finite-difference step
    tol: float = DEFAULT_TOL  # PASS at or below this relative error
    warn: float = 1e-4  # WARN up to this, FAIL above
    seed: int = 0  # upstream gradients, directions and samples
    max_elements: int | None = None  # per tensor; a larger one gets a sample plus a directional check

    @property
    def fail_above(self) -> float:
        return max(self.tol, self.warn)


def compare_tensor(name, analytic, arr, f, g, s: Settings, rng) -> TensorRow:
    """Compare ``analytic`` with the central-difference gradient of sum(f() * g) w.r.t. ``arr``.

    Inputs: name, the row's tensor name; analytic, the gradient backward wrote (anything: a
    missing or misshapen one is a FAIL); arr, the float64 array f reads, perturbed in place and
    restored; g, the upstream gradient; rng, draws the sample and the direction.
    Returns: a TensorRow; entries on a kink are counted, not included in the errors.
    """
    shape = tuple(arr.shape)
    if not isinstance(analytic, np.ndarray) or analytic.shape != shape:
        note = ("missing from grads" if analytic is None else f"gradient has shape {analytic.shape}"
                if isinstance(analytic, np.ndarray) else f"gradient is {kind_of(analytic)}")
        return TensorRow(name, shape, 0, float("nan"), float("nan"), None, "FAIL", note=note)
    sample = None
    if s.max_elements is not None and arr.size > s.max_elements:
        sample = np.sort(rng.choice(arr.size, s.max_elements, replace=False))
    idx = np.arange(arr.size) if sample is None else sample  # flat positions compared
    numeric = numerical_gradient(f, arr, g, s.eps, sample).reshape(-1)[idx]
    a = analytic.reshape(-1)[idx].astype(np.float64)
    for which, v in (("analytic", a), ("numerical", numeric)):
        if not np.all(np.isfinite(v)):
            at = _index(idx[np.argmin(np.isfinite(v))], shape)
            return TensorRow(name, shape, idx.size, float("inf"), float("inf"), at, "FAIL",
                             note=f"{which} gradient is not finite")
    floor = max(1e-2 * float(np.abs(numeric).max(initial=0.0)), noise_floor(f, g, s), 1e-14)
    numeric, rel, kink = judge_entries(a, numeric, f, arr, g, idx, floor, s)
    rel = np.where(kink, 0.0, rel)
    abs_err = np.where(kink, 0.0, np.abs(a - numeric))
    worst = _index(idx[np.argmax(rel)], shape) if idx.size else None
    row = TensorRow(name, shape, int(idx.size), float(abs_err.max(initial=0.0)), float(rel.max(initial=0.0)),
                    worst, "PASS", kinks=int(kink.sum()))
    judged, dir_kink = row.max_rel, False
    if sample is not None:
        rms = np.sqrt(np.mean(numeric ** 2))  # the typical size of g^T J u for a random unit u
        dir_floor = max(1e-2 * rms, noise_floor(f, g, s), 1e-14)
        row.directional, dir_kink = directional_error(analytic, arr, f, g, dir_floor, s, rng)
        if dir_kink:
            row.note = "the directional check crossed a kink"
        else:
            judged = max(judged, row.directional)
    row.verdict = ("FAIL" if not judged <= s.fail_above else "WARN" if judged > s.tol
                   else "KINK" if row.kinks or dir_kink else "PASS")
    return row



def noise_floor(f, g, s: Settings) -> float:
    """The smallest |a| + |n| at which a relative error of ``tol`` can be told from roundoff.

    Each output of f carries a rounding error of about machine epsilon times its size, so a
    difference quotient of sum(f() * g) is uncertain by about eps64 * sum|f * g| / eps
    (~1e-11 for outputs of order 1). Where a whole tensor's gradient is that small, such as
    the bias of a linear layer followed by batch norm (exactly 0), relative errors would be
    roundoff divided by roundoff; the floor keeps them at or below ``tol``. A ``tol`` stricter
    than the default does not raise the floor further, so it can only make the check stricter.
    """
    scale = float(np.sum(np.abs(np.asarray(f(), dtype=np.float64) * g)))
    return np.finfo(np.float64).eps * scale / s.eps / max(s.tol, DEFAULT_TOL)


def judge_entries(a, numeric, f, arr, g, idx, floor, s: Settings):
    """Relative errors of ``a`` against ``numeric`` (the gradient at flat positions ``idx`` of
    ``arr``), refining the reference where they exceed ``tol`` and finding kinks where they
    would FAIL.

    Refining: a five-point difference there, kept where it agrees better, so a sharply curved
    but correct function (batch norm over three close rows) is not mistaken for a wrong one;
    then one at ten times the step (its truncation error is still of order step^4, its roundoff
    ten times smaller), for an output computed with cancellation, whose rounding error is far
    above eps64 times its size (GELU's 0.5 x (1 + tanh(u)) where tanh(u) is -1 + 3e-8: the
    quotient at the step is off by 2e-5 of the gradient there, the one at ten times it by 2e-6).
    Kinks: the one-sided quotients disagree and the analytic value lies between them.
    Returns: (numeric, rel, kink), numeric refined in place of the central differences.
    """
    numeric = numeric.copy()
    rel = relative_error(a, numeric, floor)
    for step in (s.eps, 10 * s.eps):
        suspect = np.flatnonzero(rel > s.tol)
        if suspect.size:
            finer = numerical_gradient(f, arr, g, step, idx[suspect], order=4).reshape(-1)[idx[suspect]]
            finer_rel = relative_error(a[suspect], finer, floor)
            better = finer_rel < rel[suspect]
            numeric[suspect[better]], rel[suspect[better]] = finer[better], finer_rel[better]
    kink = np.zeros(rel.shape, dtype=bool)
    suspect = np.flatnonzero(rel > s.fail_above)
    if suspect.size:
        left, right = (q.reshape(-1)[idx[suspect]] for q in one_sided_quotients(f, arr, g, s.eps, idx[suspect]))
        jump = relative_error(left, right, floor) > s.fail_above
        slack = s.fail_above * np.maximum(np.maximum(np.abs(left), np.abs(right)), floor)
        between = (a[suspect] >= np.minimum(left, right) - slack) & (a[suspect] <= np.maximum(left, right) + slack)
        kink[suspect] = jump & between
    return numeric, rel, kink


def directional_error(analytic, arr, f, g, floor, s: Settings, rng):
    """Relative error of g^T J u against sum(analytic * u) for one random unit direction u over
    the whole tensor, and whether that line crosses a kink. A unit u moves the tensor as far as
    one entry is moved, so curvature and kinks weigh no more than in an entrywise check."""
    u = rng.normal(size=arr.shape)
    u /= np.linalg.norm(u)
    x0 = arr.copy()
    t = np.zeros(1)  # position along u

    def along():
        arr[...] = x0 + t[0] * u
        return f()

    try:
        n = numerical_gradient(along, t, g, s.eps)
        _, rel, kink = judge_entries(np.array([np.sum(analytic * u)]), n, along, t, g, np.arange(1), floor, s)
    finally:
        arr[...] = x0
    return float(rel[0]), bool(kink[0])


def kind_of(v) -> str:
    """How to name a value that should have been an array, in an error message."""
    return f"an array of {v.dtype}" if isinstance(v, np.ndarray) else type(v).__name__


def _index(flat: int, shape) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape))
