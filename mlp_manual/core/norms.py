"""Normalisation layers: LayerNorm and RMSNorm normalise each row over its D features,
BatchNorm1d each feature over the N rows of a batch.

N = batch size, D = features.
"""

import numpy as np

from .errors import LayerError
from .layers import Layer
from .namespace import namespace


class _ScaleShift(Layer):
    """What LayerNorm and BatchNorm1d share: out = gamma * xhat + beta on a normalised xhat.
    Params: gamma (D,) = 1, beta (D,) = 0."""

    def __init__(self, features: int, eps: float, dtype):
        super().__init__()
        self.features, self.eps = int(features), float(eps)
        self.params["gamma"] = np.ones(self.features, dtype=dtype)  # (D,)
        self.params["beta"] = np.zeros(self.features, dtype=dtype)  # (D,)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.xhat = self.rstd = None

    def scale_shift(self, xhat):
        self.xhat = xhat  # (N, D), needed for dgamma and dx
        return self.params["gamma"] * xhat + self.params["beta"]

    def scale_shift_backward(self, dout):
        """Fill dgamma and dbeta; return dxhat (N, D)."""
        xhat = self.saved(self.xhat)
        # fwd: out = gamma * xhat + beta  =>  dgamma = sum_N(dout * xhat), dbeta = sum_N(dout)
        xp = namespace(dout)
        self.grads["gamma"] = xp.sum(dout * xhat, axis=0)  # (D,)
        self.grads["beta"] = xp.sum(dout, axis=0)  # (D,)
        return dout * self.params["gamma"]


class LayerNorm(_ScaleShift):
    """out = gamma * (x - mean) / sqrt(var + eps) + beta, the statistics over the D features of
    each row. Params: gamma (D,) = 1, beta (D,) = 0."""

    def __init__(self, features: int, eps: float = 1e-5, dtype=np.float32):
        super().__init__(features, eps, dtype)

    def forward(self, x):
        xp = namespace(x)
        mean = xp.mean(x, axis=1, keepdims=True)  # (N, 1)
        var = xp.var(x, axis=1, keepdims=True)  # (N, 1), biased
        self.rstd = 1 / xp.sqrt(var + self.eps)  # (N, 1)
        return self.scale_shift((x - mean) * self.rstd)

    def backward(self, dout):
        dxhat = self.scale_shift_backward(dout)  # (N, D)
        xhat, rstd = self.xhat, self.saved(self.rstd)
        # fwd: out = gamma * xhat + beta, xhat = (x - mean(x)) * rstd, rstd = 1 / sqrt(var(x) + eps)
        #  =>  dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dout * gamma
        xp = namespace(dout)
        return rstd * (dxhat - xp.mean(dxhat, axis=1, keepdims=True)
                       - xhat * xp.mean(dxhat * xhat, axis=1, keepdims=True))  # means over D


class RMSNorm(Layer):
    """out = gamma * x / sqrt(mean(x^2) + eps), the mean over the D features of each row.
    Params: gamma (D,) = 1."""

    def __init__(self, features: int, eps: float = 1e-6, dtype=np.float32):
        super().__init__()
        self.features, self.eps = int(features), float(eps)
        self.params["gamma"] = np.ones(self.features, dtype=dtype)  # (D,)
        self.grads = {"gamma": np.zeros_like(self.params["gamma"])}
        self.xhat = self.rrms = None

    def forward(self, x):
        xp = namespace(x)
        self.rrms = 1 / xp.sqrt(xp.mean(x * x, axis=1, keepdims=True) + self.eps)  # (N, 1)
        self.xhat = x * self.rrms  # (N, D)
        return self.params["gamma"] * self.xhat

    def backward(self, dout):
        xhat, rrms = self.saved(self.xhat), self.saved(self.rrms)
        xp = namespace(dout)
        # fwd: out = gamma * xhat  =>  dgamma = sum_N(dout * xhat)
        self.grads["gamma"] = xp.sum(dout * xhat, axis=0)  # (D,)
        dxhat = dout * self.params["gamma"]  # (N, D)
        # fwd: out = gamma * xhat, xhat = x * rrms, rrms = 1 / sqrt(mean(x^2) + eps)
        #  =>  dx = rrms * (dxhat - xhat * mean(dxhat * xhat)), dxhat = dout * gamma
        return rrms * (dxhat - xhat * xp.mean(dxhat * xhat, axis=1, keepdims=True))  # mean over D


class BatchNorm1d(_ScaleShift):
    """In training: out = gamma * (x - mean_N) / sqrt(var_N + eps) + beta, and each running
    statistic moves to (1 - momentum) * running + momentum * the batch's (the variance
    unbiased). In evaluation the running statistics replace the batch's.
    Params: gamma (D,) = 1, beta (D,) = 0. Buffers: running_mean (D,) = 0, running_var (D,) = 1."""

    def __init__(self, features: int, momentum: float = 0.1, eps: float = 1e-5, dtype=np.float32):
        if not 0.0 <= momentum <= 1.0:
            raise LayerError(f"batchnorm momentum must be in [0, 1], got {momentum}")
        super().__init__(features, eps, dtype)
        self.momentum = float(momentum)
        self.buffers["running_mean"] = np.zeros(self.features, dtype=dtype)  # (D,)
        self.buffers["running_var"] = np.ones(self.features, dtype=dtype)  # (D,)
        self.batch_stats = None

    def forward(self, x):
        xp = namespace(x)
        if self.training:
            n = x.shape[0]
            if n < 2:
                raise LayerError("BatchNorm1d needs at least 2 rows per batch in training mode")
            mean = xp.mean(x, axis=0)  # (D,)
            var = xp.var(x, axis=0)  # (D,), biased: the one that normalises
            m = self.momentum
            rm, rv = self.buffers["running_mean"], self.buffers["running_var"]
            self.buffers["running_mean"] = (1 - m) * rm + m * mean
            self.buffers["running_var"] = (1 - m) * rv + m * var * (n / (n - 1))
        else:
            mean, var = self.buffers["running_mean"], self.buffers["running_var"]
        self.batch_stats = self.training
        self.rstd = 1 / xp.sqrt(var + self.eps)  # (D,)
        return self.scale_shift((x - mean) * self.rstd)

    def backward(self, dout):
        dxhat = self.scale_shift_backward(dout)  # (N, D)
        xhat, rstd = self.xhat, self.saved(self.rstd)
        if not self.batch_stats:
            # fwd (eval): xhat = (x - running_mean) * rstd  =>  dx = dxhat * rstd
            return dxhat * rstd
        # fwd: out = gamma * xhat + beta, xhat = (x - mean_N(x)) * rstd, rstd = 1 / sqrt(var_N(x) + eps)
        #  =>  dx = rstd * (dxhat - mean_N(dxhat) - xhat * mean_N(dxhat * xhat)), dxhat = dout * gamma
        xp = namespace(dout)
        return rstd * (dxhat - xp.mean(dxhat, axis=0) - xhat * xp.mean(dxhat * xhat, axis=0))
