"""Finite differences, the reference every hand-written backward is checked against.

``numerical_gradient`` gives central differences; ``one_sided_quotients`` gives the backward and
forward quotients that tell a kink (a point where the function is not differentiable) from a
wrong gradient.
"""

from collections.abc import Callable

import numpy as np


def _perturbed(f, x, eps, indices):
    """Yield (flat index, f(x + eps e_i), f(x - eps e_i)) for each index, restoring x after each."""
    if not x.flags.c_contiguous:
        raise ValueError("finite differences perturb x in place: x must be C-contiguous")
    flat = x.reshape(-1)
    for i in range(flat.size) if indices is None else indices:
        old = flat[i]
        flat[i] = old + eps
        f_plus = np.array(f(), dtype=np.float64)
        flat[i] = old - eps
        f_minus = np.array(f(), dtype=np.float64)
        flat[i] = old
        yield i, f_plus, f_minus


def numerical_gradient(f: Callable[[], np.ndarray | float], x: np.ndarray, g: np.ndarray | float = 1.0,
                       eps: float = 1e-5, indices=None, order: int = 2) -> np.ndarray:
    """Gradient of the scalar sum(f() * g) with respect to ``x``, by central differences.

    ``x`` is perturbed in place and restored. The two outputs are subtracted before they are
    weighted and summed, so entries that a perturbation does not reach contribute exactly 0
    instead of rounding error. ``order=4`` uses the five-point stencil
    (8 (f(x+h) - f(x-h)) - (f(x+2h) - f(x-2h))) / 12h, whose truncation error is O(eps^4)
    instead of O(eps^2), for functions that curve sharply (a normalisation over a few close values).
    Inputs: f, a function of no arguments that reads ``x`` and returns an array (or a float);
    x, a C-contiguous float64 array; g, the upstream gradient, shaped like f's output;
    indices, the flat positions to perturb (all when None); order, 2 or 4.
    Returns: an array shaped like ``x``; positions not perturbed hold 0.
    """
    if order not in (2, 4):
        raise ValueError(f"order must be 2 or 4, got {order}")
    grad = np.zeros_like(x)
    gflat = grad.reshape(-1)
    if order == 2:
        for i, f_plus, f_minus in _perturbed(f, x, eps, indices):
            gflat[i] = np.sum((f_plus - f_minus) * g) / (2 * eps)
        return grad
    for (i, f_plus, f_minus), (_, f_plus2, f_minus2) in zip(_perturbed(f, x, eps, indices),
                                                           _perturbed(f, x, 2 * eps, indices)):
        gflat[i] = np.sum((8 * (f_plus - f_minus) - (f_plus2 - f_minus2)) * g) / (12 * eps)
    return grad


def one_sided_quotients(f: Callable[[], np.ndarray | float], x: np.ndarray, g: np.ndarray | float = 1.0,
                        eps: float = 1e-5, indices=None) -> tuple[np.ndarray, np.ndarray]:
    """Backward and forward difference quotients of sum(f() * g) with respect to ``x``.

    Where the function is smooth both agree with the derivative to O(eps); where a
    perturbation crosses a kink they differ by the jump in slope, and any correct
    (sub)gradient lies between them.
    Inputs: as for ``numerical_gradient``.
    Returns: (left, right), each shaped like ``x``: (f(x) - f(x - eps)) / eps and
    (f(x + eps) - f(x)) / eps; positions not perturbed hold 0.
    """
    f_here = np.array(f(), dtype=np.float64)
    left, right = np.zeros_like(x), np.zeros_like(x)
    lflat, rflat = left.reshape(-1), right.reshape(-1)
    for i, f_plus, f_minus in _perturbed(f, x, eps, indices):
        lflat[i] = np.sum((f_here - f_minus) * g) / eps
        rflat[i] = np.sum((f_plus - f_here) * g) / eps
    return left, right


def relative_error(analytic: np.ndarray, numeric: np.ndarray, floor: float | None = None) -> np.ndarray:
    """Elementwise |a - n| / max(|a| + |n|, floor).

    The floor keeps entries whose true gradient is near 0 from turning rounding noise
    (about 1e-11 absolute for eps = 1e-5 in float64) into a large ratio. By default it is
    1e-2 of the tensor's largest numerical gradient, so it follows the tensor's own scale.
    """
    if floor is None:
        floor = 1e-2 * max(float(np.abs(numeric).max(initial=0.0)), 1e-12)
    return np.abs(analytic - numeric) / np.maximum(np.abs(analytic) + np.abs(numeric), floor)
