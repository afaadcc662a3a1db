"""Exercise: layer normalisation's backward pass.

Forward (given), over the D features of each row:

    mean = x.mean(axis=1)   var = x.var(axis=1)  (biased)   rstd = 1 / sqrt(var + eps)
    xhat = (x - mean) * rstd
    out = gamma * xhat + beta

    x (N, D)   a batch of N rows of D features
    gamma, beta (D,)   the scale and the shift
    mean, var, rstd (N, 1); xhat, out (N, D)

Backward (yours): given dout = dL/dout (N, D), set

    self.grads["gamma"] = dL/dgamma   (D,)
    self.grads["beta"] = dL/dbeta     (D,)
    and return dx = dL/dx             (N, D)

Go from out back to xhat first. Then mind that the mean and the variance of a row depend on
every x of that row: x reaches xhat directly, through the mean and through the variance.

Check it with `mlp-exercise check layernorm`.
"""

import numpy as np

from mlp_manual.core import Layer


class LayerNorm(Layer):
    """out = gamma * (x - mean) / sqrt(var + eps) + beta, the statistics over each row.
    Params: gamma (D,) = 1, beta (D,) = 0."""

    def __init__(self, features: int, eps: float = 1e-5, dtype=np.float32):
        super().__init__()
        self.features, self.eps = features, eps
        self.params["gamma"] = np.ones(features, dtype=dtype)  # (D,)
        self.params["beta"] = np.zeros(features, dtype=dtype)  # (D,)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.xhat = self.rstd = None

    def forward(self, x):
        mean = x.mean(axis=1, keepdims=True)  # (N, 1)
        var = x.var(axis=1, keepdims=True)  # (N, 1), biased
        self.rstd = 1 / np.sqrt(var + self.eps)  # (N, 1)
        self.xhat = (x - mean) * self.rstd  # (N, D)
        return self.params["gamma"] * self.xhat + self.params["beta"]  # (N, D)

    def backward(self, dout):
        xhat, rstd = self.xhat, self.rstd  # (N, D), (N, 1)
        # >>> write here: self.grads["gamma"], self.grads["beta"], and return dx
        # fwd: out = gamma * xhat + beta  =>  dgamma = sum_N(dout * xhat), dbeta = sum_N(dout)
        self.grads["gamma"] = (dout * xhat).sum(axis=0)  # (D,)
        self.grads["beta"] = dout.sum(axis=0)  # (D,)
        dxhat = dout * self.params["gamma"]  # (N, D)
        # fwd: xhat = (x - mean(x)) * rstd, rstd = 1 / sqrt(var(x) + eps), over each row
        #  =>  dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
        dmean = dxhat.mean(axis=1, keepdims=True)  # (N, 1), the path through the mean
        dvar = (dxhat * xhat).mean(axis=1, keepdims=True)  # (N, 1), the path through the variance
        return rstd * (dxhat - dmean - xhat * dvar)  # (N, D)
        # <<<
