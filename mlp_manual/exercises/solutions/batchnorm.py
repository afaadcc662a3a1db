"""Exercise: batch normalisation's backward pass, one intermediate at a time.

Forward (given), in training mode, over the N rows of the batch for each feature:

    bnmeani = x.sum(0) / N                 (D,)
    bndiff = x - bnmeani                   (N, D)
    bndiff2 = bndiff**2                    (N, D)
    bnvar = bndiff2.sum(0) / N             (D,)   biased, as the core normalises
    bnvar_inv = (bnvar + eps)**-0.5        (D,)
    bnraw = bndiff * bnvar_inv             (N, D)
    out = gamma * bnraw + beta             (N, D)

    x (N, D)   a batch of N rows of D features (N >= 2)
    gamma, beta (D,)   the scale and the shift

Backward (yours): given dout = dL/dout (N, D), set

    self.grads["gamma"] = dL/dgamma   (D,)
    self.grads["beta"] = dL/dbeta     (D,)
    and return dx = dL/dx             (N, D)

going back up the forward one line at a time: dbnraw, dbnvar_inv, dbnvar, dbndiff2, dbndiff,
dbnmeani, dx (the check compares each one, from self.intermediate_grads: keep the names). Each
gradient has the shape of its variable. Where a (D,) variable was broadcast over the N rows,
its gradient sums over them; where a variable is used twice (bndiff), its gradient is the sum
of both uses.

Check it with `mlp-exercise check batchnorm`.
"""

import numpy as np

from mlp_manual.core import Layer


class BatchNorm1d(Layer):
    """out = gamma * (x - mean_N) / sqrt(var_N + eps) + beta, in training mode.
    Params: gamma (D,) = 1, beta (D,) = 0."""

    def __init__(self, features: int, eps: float = 1e-5, dtype=np.float32):
        super().__init__()
        self.features, self.eps = features, eps
        self.params["gamma"] = np.ones(features, dtype=dtype)  # (D,)
        self.params["beta"] = np.zeros(features, dtype=dtype)  # (D,)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.cache = self.intermediate_grads = None

    def forward(self, x):
        n = x.shape[0]
        bnmeani = x.sum(0) / n  # (D,)
        bndiff = x - bnmeani  # (N, D)
        bndiff2 = bndiff**2  # (N, D)
        bnvar = bndiff2.sum(0) / n  # (D,), biased
        bnvar_inv = (bnvar + self.eps) ** -0.5  # (D,)
        bnraw = bndiff * bnvar_inv  # (N, D)
        self.cache = (bndiff, bndiff2, bnvar, bnvar_inv, bnraw)
        return self.params["gamma"] * bnraw + self.params["beta"]  # (N, D)

    def backward(self, dout):
        bndiff, bndiff2, bnvar, bnvar_inv, bnraw = self.cache
        n = dout.shape[0]
        # >>> write here: self.grads["gamma"], self.grads["beta"], dbnraw, dbnvar_inv, dbnvar, dbndiff2, dbndiff, dbnmeani, dx
        # fwd: out = gamma * bnraw + beta
        self.grads["gamma"] = (dout * bnraw).sum(0)  # (D,)
        self.grads["beta"] = dout.sum(0)  # (D,)
        dbnraw = dout * self.params["gamma"]  # (N, D)
        # fwd: bnraw = bndiff * bnvar_inv
        dbnvar_inv = (bndiff * dbnraw).sum(0)  # (D,)
        dbndiff = bnvar_inv * dbnraw  # (N, D), the first use of bndiff
        # fwd: bnvar_inv = (bnvar + eps)**-0.5
        dbnvar = -0.5 * (bnvar + self.eps) ** -1.5 * dbnvar_inv  # (D,)
        # fwd: bnvar = bndiff2.sum(0) / n
        dbndiff2 = np.ones_like(bndiff2) / n * dbnvar  # (N, D)
        # fwd: bndiff2 = bndiff**2
        dbndiff += 2 * bndiff * dbndiff2  # (N, D), the second use of bndiff
        # fwd: bndiff = x - bnmeani
        dbnmeani = -dbndiff.sum(0)  # (D,)
        dx = dbndiff.copy()  # (N, D)
        # fwd: bnmeani = x.sum(0) / n
        dx += np.ones_like(dx) / n * dbnmeani  # (N, D)
        # <<<
        self.intermediate_grads = {"dbnraw": dbnraw, "dbnvar_inv": dbnvar_inv, "dbnvar": dbnvar,
                                   "dbndiff2": dbndiff2, "dbndiff": dbndiff, "dbnmeani": dbnmeani}  # checked each
        return dx
