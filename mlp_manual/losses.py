"""Losses. Each returns the mean loss and its gradient with respect to the model output
together, so the backward pass is seeded explicitly:

    loss, dlogits = softmax_cross_entropy(logits, y)  # dlogits = (p - onehot) / N

N = batch size, C = classes, K = output units.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import DataError


def softmax_cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Fused softmax + cross-entropy with integer class labels.

    Inputs: logits (N, C), y (N,) integers in 0..C-1.
    Returns: mean loss, dlogits (N, C) = (softmax(logits) - onehot(y)) / N.
    """
    n = logits.shape[0]
    rows = np.arange(n)
    z = logits - logits.max(axis=1, keepdims=True)  # (N, C), max 0: exp cannot overflow
    e = np.exp(z)  # (N, C)
    sum_e = e.sum(axis=1, keepdims=True)  # (N, 1), at least 1: log is finite
    # -log softmax(z)[y] = log(sum(exp(z))) - z[y]
    loss = float(np.mean(np.log(sum_e[:, 0]) - z[rows, y], dtype=np.float64))
    dlogits = e / sum_e  # (N, C), softmax
    dlogits[rows, y] -= 1
    dlogits /= logits.dtype.type(n)
    return loss, dlogits


def bce_with_logits(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Binary cross-entropy on raw logits, mean over every element.

    loss = max(z, 0) - z * y + log(1 + exp(-|z|)): no exp of a positive number, so it is
    finite for any |z|.
    Inputs: logits (N, K), y (N, K) in [0, 1].
    Returns: mean loss, dlogits (N, K) = (sigmoid(z) - y) / (N * K).
    """
    z = logits
    loss = float((np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).mean(dtype=np.float64))
    e = np.exp(-np.abs(z))  # (N, K)
    p = np.where(z >= 0, 1 / (1 + e), e / (1 + e))  # (N, K), sigmoid(z)
    return loss, (p - y) / z.dtype.type(z.size)


def mse(pred: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean squared error over every element.

    Inputs: pred (N, K), y (N, K).
    Returns: mean loss, dpred (N, K) = 2 (pred - y) / (N * K).
    """
    diff = pred - y  # (N, K)
    return float((diff * diff).mean(dtype=np.float64)), diff * pred.dtype.type(2.0 / pred.size)


@dataclass(frozen=True)
class LossSpec:
    """What the trainer needs to know about a loss besides its function."""

    fn: Callable[[np.ndarray, np.ndarray], tuple[float, np.ndarray]]
    classification: bool  # reports accuracy; targets are class labels

    def output_width(self, n_classes: int | None, target_width: int) -> int:
        """Units the last layer must have for this loss and these targets."""
        if self.fn is softmax_cross_entropy:
            return n_classes
        if self.fn is bce_with_logits:
            return 1
        return target_width

    def targets(self, y: np.ndarray, dtype) -> np.ndarray:
        """Labels as the loss wants them: int64 (N,) for softmax CE, float (N, K) otherwise."""
        if self.fn is softmax_cross_entropy:
            return y.astype(np.int64, copy=False)
        y = y.astype(dtype, copy=False)
        return y.reshape(-1, 1) if y.ndim == 1 else y

    def predict(self, out: np.ndarray) -> np.ndarray:
        """Class predictions (N,) from model outputs (classification losses only)."""
        if self.fn is softmax_cross_entropy:
            return out.argmax(axis=1)
        return (out[:, 0] > 0).astype(np.int64)

    def check_output(self, width: int) -> None:
        """Raise if a model with ``width`` output units cannot feed this loss."""
        if self.fn is softmax_cross_entropy and width < 2:
            raise DataError(f"softmax_cross_entropy needs at least 2 output units, the model has {width}; "
                            "use bce_with_logits for a single output")
        if self.fn is bce_with_logits and width != 1:
            raise DataError(f"bce_with_logits needs exactly 1 output unit, the model has {width}; "
                            "use softmax_cross_entropy for several classes")


LOSSES = {
    "softmax_cross_entropy": LossSpec(softmax_cross_entropy, classification=True),
    "bce_with_logits": LossSpec(bce_with_logits, classification=True),
    "mse": LossSpec(mse, classification=False),
}
