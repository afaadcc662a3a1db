"""The math of each loss as mlp-explain prints it: the loss, the seed gradient of the backward
pass, and the named arrays that let a reader redo the seed by hand.

The layers carry their own formulas (``forward_formula``, ``backward_formulas``); a loss is a
function, so its text lives here, keyed by the loss's config name.

N = rows, K = outputs (C = classes for softmax cross-entropy).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..layers import Softmax, sigmoid


@dataclass(frozen=True)
class LossFormulas:
    loss: str
    seed: str  # the gradient that starts the backward pass
    parts: Callable[[np.ndarray, np.ndarray], list[tuple[str, np.ndarray]]]  # (logits, targets) -> named (N, K)


def _softmax_parts(z, y):
    onehot = np.eye(z.shape[1])[y]  # (N, C)
    return [("softmax(logits)", Softmax().forward(z)), ("onehot(y)", onehot)]


LOSS_FORMULAS = {
    "softmax_cross_entropy": LossFormulas(
        "loss = mean(log(sum(exp(logits))) - logits[y])", "dlogits = (softmax(logits) - onehot(y)) / N",
        _softmax_parts),
    "bce_with_logits": LossFormulas(
        "loss = mean(max(z, 0) - z * y + log(1 + exp(-|z|)))", "dlogits = (sigmoid(z) - y) / (N * K)",
        lambda z, y: [("sigmoid(z)", sigmoid(z)), ("y", y)]),
    "mse": LossFormulas(
        "loss = mean((pred - y)^2)", "dpred = 2 (pred - y) / (N * K)",
        lambda z, y: [("pred", z), ("y", y)]),
}
