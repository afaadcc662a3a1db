"""Losses: each returns the mean loss and its gradient with respect to the model's output
together, the seed of the backward pass:

    loss, dlogits = softmax_cross_entropy(logits, y)  # dlogits = (p - onehot) / N

``weights`` (optional) weighs each class: a row's (or an entry's) loss is multiplied by the
weight of its true class before the mean.

N = batch size, C = classes, K = output units.
"""

import numpy as np

from .layers import sigmoid


def softmax_cross_entropy(logits: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Softmax and cross-entropy in one step, on integer class labels.

    Inputs: logits (N, C), y (N,) integers in 0..C-1, weights (C,) or None.
    Returns: mean loss, dlogits (N, C) = w[y] (softmax(logits) - onehot(y)) / N (w = 1 without weights).
    """
    n = logits.shape[0]
    rows = np.arange(n)
    z = logits - logits.max(axis=1, keepdims=True)  # (N, C), max 0: exp cannot overflow
    e = np.exp(z)  # (N, C)
    sum_e = e.sum(axis=1, keepdims=True)  # (N, 1), at least 1: log is finite
    per_row = np.log(sum_e[:, 0]) - z[rows, y]  # (N,): -log softmax(z)[y] = log(sum(exp(z))) - z[y]
    loss = float(np.mean(per_row if weights is None else weights[y] * per_row, dtype=np.float64))
    dlogits = e / sum_e  # (N, C), softmax
    dlogits[rows, y] -= 1
    if weights is None:
        dlogits /= logits.dtype.type(n)
    else:
        dlogits *= (weights[y] / n).astype(logits.dtype)[:, None]
    return loss, dlogits


def bce_with_logits(logits: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Binary cross-entropy on raw logits, the mean over every entry.

    loss = max(z, 0) - z * y + log(1 + exp(-|z|)): no exp of a positive number, so it is finite
    for any |z|.
    Inputs: logits (N, K), y (N, K) in {0, 1} (or [0, 1]), weights (2,) or None.
    Returns: mean loss, dlogits (N, K) = w[y] (sigmoid(z) - y) / (N * K).
    """
    z = logits
    per_entry = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))  # (N, K)
    if weights is None:
        return float(per_entry.mean(dtype=np.float64)), (sigmoid(z) - y) / z.dtype.type(z.size)
    w = weights[y.astype(np.int64)]  # (N, K)
    return float((w * per_entry).mean(dtype=np.float64)), (w * (sigmoid(z) - y) / z.size).astype(z.dtype)


def mse(pred: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean squared error over every entry.

    Inputs: pred (N, K), y (N, K).
    Returns: mean loss, dpred (N, K) = 2 (pred - y) / (N * K).
    """
    diff = pred - y  # (N, K)
    return float((diff * diff).mean(dtype=np.float64)), diff * pred.dtype.type(2.0 / pred.size)
