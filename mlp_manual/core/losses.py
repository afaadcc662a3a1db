"""Losses: each returns the mean loss and its gradient with respect to the model's output
together, the seed of the backward pass:

    loss, dlogits = softmax_cross_entropy(logits, y)  # dlogits = (p - onehot) / N

``weights`` (optional) weighs each class: a row's (or an entry's) loss is multiplied by the
weight of its true class before the mean.

N = batch size, C = classes, K = output units.
"""

import math

import numpy as np

from .errors import MLPManualError
from .layers import sigmoid
from .namespace import like, namespace


def softmax_cross_entropy(logits: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None,
                          smoothing: float = 0.0) -> tuple[float, np.ndarray]:
    """Softmax and cross-entropy in one step, on integer class labels.

    With label ``smoothing`` the target of a row is q = (1 - smoothing) onehot(y) + smoothing / C
    instead of onehot(y): the loss is the cross-entropy -sum(q * log softmax(z)), infinite when a
    logit is -inf (q gives its class smoothing / C).
    Inputs: logits (N, C), y (N,) integers in 0..C-1, weights (C,) or None, smoothing in [0, 1).
    Returns: mean loss, dlogits (N, C) = w[y] (softmax(logits) - onehot(y)) / N (w = 1 without
    weights; q in place of onehot(y) with smoothing).
    """
    xp = namespace(logits)
    n, c = logits.shape
    if y.ndim != 1:
        raise MLPManualError(f"softmax_cross_entropy takes labels y of shape (N,), got {tuple(y.shape)}")
    picked = y[:, None] == xp.arange(c)  # (N, C), row n true at y[n] alone
    if int(xp.count_nonzero(picked)) != n:
        raise MLPManualError(f"softmax_cross_entropy takes labels y that are integers in 0..{c - 1}")
    onehot = xp.astype(picked, logits.dtype)  # (N, C)
    q = smoothed_targets(onehot, smoothing)  # (N, C), each row's target
    z = logits - xp.max(logits, axis=1, keepdims=True)  # (N, C), max 0: exp cannot overflow
    e = xp.exp(z)  # (N, C)
    sum_e = xp.sum(e, axis=1, keepdims=True)  # (N, 1), at least 1: log is finite
    z_y = xp.sum(xp.where(picked, z, 0.0), axis=1)  # (N,), z[y]; a -inf elsewhere in the row is not multiplied by 0
    log_sum_e = xp.log(sum_e[:, 0])  # (N,)
    per_row = log_sum_e - z_y  # (N,): -log softmax(z)[y] = log(sum(exp(z))) - z[y]
    if smoothing:  # -sum(q * log p): (1 - smoothing) times the loss above, plus smoothing times a uniform target's
        per_row = (1 - smoothing) * per_row + smoothing * (log_sum_e - xp.mean(z, axis=1))
    row_weights = None if weights is None else xp.sum(xp.where(picked, like(logits, weights), 0.0), axis=1)  # (N,), w[y]
    loss = _mean64(per_row if weights is None else row_weights * per_row)
    dlogits = e / sum_e  # (N, C), softmax
    dlogits -= q
    if weights is None:
        dlogits /= n
        return loss, dlogits
    return loss, dlogits * xp.astype(row_weights / n, logits.dtype)[:, None]


def smoothed_targets(onehot: np.ndarray, smoothing: float) -> np.ndarray:
    """Label smoothing's targets: q (N, C) = (1 - smoothing) onehot + smoothing / C; onehot
    itself when smoothing is 0."""
    return onehot if not smoothing else (1 - smoothing) * onehot + smoothing / onehot.shape[1]


def _mean64(values) -> float:
    """The mean of every entry of ``values``, summed in float64, as a Python float."""
    xp = namespace(values)
    return float(xp.sum(values, dtype=xp.float64)) / math.prod(values.shape)


def bce_with_logits(logits: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Binary cross-entropy on raw logits, the mean over every entry.

    loss = max(z, 0) - z * y + log(1 + exp(-|z|)): no exp of a positive number, so it is finite
    for any |z|.
    Inputs: logits (N, K), y (N, K) in {0, 1} (or [0, 1]), weights (2,) or None.
    Returns: mean loss, dlogits (N, K) = w[y] (sigmoid(z) - y) / (N * K), where w[y] is
    weights[1] for an entry with y >= 1 and weights[0] otherwise.
    """
    z, xp = logits, namespace(logits)
    size = z.shape[0] * z.shape[1]
    per_entry = xp.maximum(z, 0.0) - z * y + xp.log1p(xp.exp(-xp.abs(z)))  # (N, K)
    if weights is None:
        return _mean64(per_entry), (sigmoid(z) - y) / size
    weights = like(z, weights)  # (2,)
    w = xp.where(y >= 1, weights[1], weights[0])  # (N, K), the weight of each entry's class
    return _mean64(w * per_entry), xp.astype(w * (sigmoid(z) - y) / size, z.dtype)


def mse(pred: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean squared error over every entry.

    Inputs: pred (N, K), y (N, K).
    Returns: mean loss, dpred (N, K) = 2 (pred - y) / (N * K).
    """
    diff = pred - y  # (N, K)
    return _mean64(diff * diff), diff * (2.0 / (pred.shape[0] * pred.shape[1]))
