"""Exercise: the mean squared error and its gradient, the seed of a regression's backward pass.

    loss = mean over every entry of (pred - y)**2 = (1 / (N*K)) * sum_n sum_k (pred[n, k] - y[n, k])**2

    pred (N, K)   the model's outputs, N rows of K targets
    y    (N, K)   the true values

Return the loss (a number) and dpred = dloss/dpred (N, K). Derive one entry: which terms of the
sum does pred[n, k] appear in, and what is the derivative of a square? Do not forget what the
mean divides by.

Check it with `mlp-exercise check mse`.
"""

import numpy as np


def mse(pred: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean squared error over every entry: (loss, dpred (N, K))."""
    diff = pred - y  # (N, K)
    loss = float((diff * diff).mean())
    # >>> write here: dpred, the gradient of the loss with respect to pred, shape (N, K)
    dpred = 2 * diff / diff.size  # (N, K); fwd: loss = sum(diff**2) / (N*K)
    # <<<
    return loss, dpred
