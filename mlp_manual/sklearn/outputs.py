"""The output layers of scikit-learn's MLPs, each with the loss it is paired with: softmax with
cross-entropy (several classes), logistic with binary cross-entropy (two classes, or several
labels), identity with half the squared error, exp with half the Poisson deviance.

Each pair is a canonical link: the gradient of the loss with respect to the output layer's
input z is the prediction minus the target, so one backward seed serves all four:

    dz = w * (p - Y) / sum(w)      (w = 1 for every row without sample weights)

Losses are weighted means over the rows of a sum over the outputs, as scikit-learn's, plus
nothing else (the L2 term is added by flat.py).

N = samples, K = output units.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core import Softmax, sigmoid
from ..core.namespace import namespace


def _softmax_cross_entropy(z, Y):
    # p = softmax(z); -sum_k Y log p with log p = s - log(sum(exp(s))), s = z - max(z): finite
    # where p rounds to 0, and exp computed once
    xp = namespace(z)
    s = z - xp.max(z, axis=1, keepdims=True)  # (N, K), max 0: exp cannot overflow
    p = xp.exp(s)
    total = xp.sum(p, axis=1, keepdims=True)  # (N, 1), at least 1
    p /= total
    rows = xp.sum(Y, axis=1) * xp.log(total[:, 0]) - xp.sum(Y * s, axis=1)  # (N,)
    p -= Y
    return p, rows


def _binary_cross_entropy(z, Y):
    # p = sigmoid(z); -[Y log p + (1 - Y) log(1 - p)],
    # with log p = -log(1 + e^-z) and log(1 - p) = -log(1 + e^z): finite for any z
    xp = namespace(z)
    return sigmoid(z) - Y, xp.sum(Y * xp.logaddexp(0.0, -z) + (1 - Y) * xp.logaddexp(0.0, z), axis=1)


def _half_squared_error(z, Y):
    # p = z; 1/2 sum_k (p - Y)^2
    residual = z - Y
    return residual, 0.5 * namespace(z).sum(residual * residual, axis=1)


def _half_poisson_deviance(z, Y):
    # p = exp(z); Y log(Y / p) - Y + p, with Y log Y = 0 at Y = 0 and log p = z
    xp = namespace(z)
    p = xp.exp(z)
    y_log_y = xp.where(Y > 0, Y * xp.log(xp.where(Y > 0, Y, 1.0)), 0.0)
    return p - Y, xp.sum(y_log_y - Y * z - Y + p, axis=1)


@dataclass(frozen=True)
class Output:
    """An output layer (scikit-learn's ``out_activation_``) and the loss paired with it."""

    name: str
    activate: Callable[[np.ndarray], np.ndarray]  # z (N, K) -> predictions p (N, K)
    loss: Callable  # (z, Y) -> p - Y (N, K), a new array, and each row's loss (N,)
    loss_name: str  # scikit-learn's name of the loss
    formula: str


OUTPUTS = {o.name: o for o in (
    Output("softmax", lambda z: Softmax().forward(z), _softmax_cross_entropy, "log_loss", "loss = -sum_k Y log softmax(z)"),
    Output("logistic", sigmoid, _binary_cross_entropy, "log_loss",
           "loss = -sum_k [Y log p + (1 - Y) log(1 - p)], p = sigmoid(z)"),
    Output("identity", lambda z: z, _half_squared_error, "squared_error", "loss = 1/2 sum_k (z - Y)^2"),
    Output("exp", np.exp, _half_poisson_deviance, "poisson", "loss = sum_k [Y log(Y / p) - Y + p], p = exp(z)"),
)}


def loss_and_seed(output: Output, z: np.ndarray, Y: np.ndarray, weights: np.ndarray | None):
    """The weighted mean loss of outputs z (N, K) against targets Y (N, K), and its gradient
    with respect to z (N, K); ``weights`` (N,) or None (every row 1). Also returns the sum of
    the weights, the denominator of every gradient."""
    residual, rows = output.loss(z, Y)  # (N, K) p - Y, (N,)
    xp = namespace(z)
    if weights is None:
        total = z.shape[0]
        loss = float(xp.sum(rows, dtype=xp.float64)) / total
        # fwd: loss = sum_n loss_n / N  =>  dz = (p - Y) / N
        residual /= total  # in place: one pass over memory fewer a batch
        return loss, residual, total
    total = float(xp.sum(weights, dtype=xp.float64))
    if not total > 0:
        raise ValueError(f"the sample weights of a batch of {weights.shape[0]} rows sum to {total:g}; every batch "
                         "needs a positive sum (shuffle, or give positive weights)")
    loss = float(xp.sum(weights * rows, dtype=xp.float64)) / total
    # fwd: loss = sum_n w_n loss_n / sum(w)  =>  dz = w (p - Y) / sum(w)
    return loss, xp.astype(residual * (weights / total)[:, None], z.dtype, copy=False), total
