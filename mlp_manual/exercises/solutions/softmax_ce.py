"""Exercise: softmax and cross-entropy in one step, the seed of a classifier's backward pass.

    p = softmax(logits) row by row:  p[n, c] = exp(logits[n, c]) / sum_j exp(logits[n, j])
    loss = mean over the rows of -log p[n, y[n]]

    logits (N, C)   the model's outputs, N rows of C classes
    y      (N,)     the true class of each row, integers in 0..C-1

Return the loss (a number) and dlogits = dloss/dlogits (N, C). Taken together, softmax and the
log cancel into something short: derive d(-log p[n, y[n]]) / d logits[n, c] for c == y[n] and
for c != y[n]. Subtract each row's largest logit before exp, so that exp cannot overflow (it
changes nothing else: why?).

Check it with `mlp-exercise check softmax_ce`.
"""

import numpy as np


def softmax_cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of softmax(logits) against integer labels: (loss, dlogits (N, C))."""
    n = len(logits)
    rows = np.arange(n)
    # >>> write here: p = softmax(logits), the loss, and dlogits (N, C)
    z = logits - logits.max(axis=1, keepdims=True)  # (N, C), largest 0: exp cannot overflow
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)  # (N, C)
    loss = float(-np.log(p[rows, y]).mean())
    dlogits = p.copy()  # fwd: loss = mean(-log p[y])  =>  dlogits = (p - onehot(y)) / N
    dlogits[rows, y] -= 1
    dlogits /= n
    # <<<
    return loss, dlogits
