"""Normalisation layers: LayerNorm and RMSNorm (per row), BatchNorm1d (per column).

N = batch size, D = features.
"""

import numpy as np

from ..errors import LayerError
from ..options import NUMBER, Option, positive
from .base import Layer
from .options import FEATURES


class _ScaleShift(Layer):
    """What LayerNorm and BatchNorm1d share: out = gamma * xhat + beta on a normalised xhat.
    Params: gamma (D,) = 1, beta (D,) = 0."""

    def __init__(self, features: int, eps: float, dtype):
        super().__init__()
        self.features, self.eps = int(features), float(eps)
        self.params["gamma"] = np.ones(self.features, dtype=dtype)  # (D,)
        self.params["beta"] = np.zeros(self.features, dtype=dtype)  # (D,)
        self._grads_like_params()
        self.xhat = self.rstd = None

    def scale_shift(self, xhat):
        self.xhat = xhat  # (N, D), needed for dgamma and dx
        return self.params["gamma"] * xhat + self.params["beta"]

    def scale_shift_backward(self, dout):
        """Fill dgamma and dbeta; return dxhat (N, D)."""
        xhat = self.saved(self.xhat)
        # fwd: out = gamma * xhat + beta  =>  dgamma = sum_N(dout * xhat), dbeta = sum_N(dout)
        self.grads["gamma"] = (dout * xhat).sum(axis=0)  # (D,)
        self.grads["beta"] = dout.sum(axis=0)  # (D,)
        return dout * self.params["gamma"]


class LayerNorm(_ScaleShift):
    """Normalise each row to zero mean and unit variance, then scale and shift.

    out = gamma * (x - mean) / sqrt(var + eps) + beta, statistics over the D features of a row.
    Params: gamma (D,) = 1, beta (D,) = 0.
    """

    type_name = "layernorm"
    type_options = {"eps": positive(1e-5, "added to the variance")}
    type_widths = FEATURES
    type_wants = ("dtype",)

    forward_formula = "out = gamma * xhat + beta, xhat = (x - mean(x)) * rstd, rstd = 1 / sqrt(var(x) + eps)"
    backward_formulas = {"dx": "dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dout * gamma",
                         "gamma": "dgamma = sum_N(dout * xhat)", "beta": "dbeta = sum_N(dout)"}

    def __init__(self, features: int, eps: float = 1e-5, dtype=np.float32):
        super().__init__(features, eps, dtype)

    def forward(self, x):
        mean = x.mean(axis=1, keepdims=True)  # (N, 1)
        var = x.var(axis=1, keepdims=True)  # (N, 1), biased
        self.rstd = 1 / np.sqrt(var + x.dtype.type(self.eps))  # (N, 1)
        return self.scale_shift((x - mean) * self.rstd)

    def backward(self, dout):
        dxhat = self.scale_shift_backward(dout)  # (N, D)
        xhat, rstd = self.xhat, self.saved(self.rstd)
        # fwd: out = gamma * xhat + beta, xhat = (x - mean(x)) * rstd, rstd = 1 / sqrt(var(x) + eps)
        #  =>  dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = dout * gamma, means over D
        return rstd * (dxhat - dxhat.mean(axis=1, keepdims=True)
                       - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))

    def config(self):
        return {"features": self.features, "eps": self.eps}

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        return g.op("LayerNormalization", x, g.const(f"{name}.gamma", self.params["gamma"]),
                    g.const(f"{name}.beta", self.params["beta"]), name=name, axis=-1, epsilon=self.eps)


class RMSNorm(Layer):
    """Divide each row by its root mean square, then scale: out = gamma * x / sqrt(mean(x^2) + eps).

    Params: gamma (D,) = 1.
    """

    type_name = "rmsnorm"
    type_options = {"eps": positive(1e-6, "added to the mean square")}
    type_widths = FEATURES
    type_wants = ("dtype",)

    forward_formula = "out = gamma * xhat, xhat = x * rrms, rrms = 1 / sqrt(mean(x^2) + eps)"
    backward_formulas = {"dx": "dx = rrms * (dxhat - xhat * mean(dxhat * xhat)), dxhat = dout * gamma",
                         "gamma": "dgamma = sum_N(dout * xhat)"}

    def __init__(self, features: int, eps: float = 1e-6, dtype=np.float32):
        super().__init__()
        self.features, self.eps = int(features), float(eps)
        self.params["gamma"] = np.ones(self.features, dtype=dtype)  # (D,)
        self._grads_like_params()
        self.xhat = self.rrms = None

    def forward(self, x):
        self.rrms = 1 / np.sqrt((x * x).mean(axis=1, keepdims=True) + x.dtype.type(self.eps))  # (N, 1)
        self.xhat = x * self.rrms  # (N, D)
        return self.params["gamma"] * self.xhat

    def backward(self, dout):
        xhat, rrms = self.saved(self.xhat), self.saved(self.rrms)
        # fwd: out = gamma * xhat  =>  dgamma = sum_N(dout * xhat)
        self.grads["gamma"] = (dout * xhat).sum(axis=0)  # (D,)
        dxhat = dout * self.params["gamma"]  # (N, D)
        # fwd: out = gamma * xhat, xhat = x * rrms, rrms = 1 / sqrt(mean(x^2) + eps)
        #  =>  dx = rrms * (dxhat - xhat * mean(dxhat * xhat)), dxhat = dout * gamma, mean over D
        return rrms * (dxhat - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))

    def config(self):
        return {"features": self.features, "eps": self.eps}

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        # out = gamma * x * rrms, rrms = 1 / sqrt(mean(x^2) + eps) over the features of a row
        mean_sq = g.op("ReduceMean", g.op("Mul", x, x, name=f"{name}.sq"), name=f"{name}.mean_sq", axes=[1],
                       keepdims=1)
        rms = g.op("Sqrt", g.op("Add", mean_sq, g.const(f"{name}.eps", self.eps), name=f"{name}.plus_eps"),
                   name=f"{name}.rms")
        xhat = g.op("Mul", x, g.op("Reciprocal", rms, name=f"{name}.rrms"), name=f"{name}.xhat")
        return g.op("Mul", g.const(f"{name}.gamma", self.params["gamma"]), xhat, name=name)


class BatchNorm1d(_ScaleShift):
    """Normalise each feature over the batch in training, with running statistics in eval.

    Training: out = gamma * (x - mean_N) / sqrt(var_N + eps) + beta, and
    running = (1 - momentum) * running + momentum * batch statistic (unbiased variance).
    Eval: the running statistics replace the batch ones.
    Params: gamma (D,) = 1, beta (D,) = 0. Buffers: running_mean (D,) = 0, running_var (D,) = 1.
    The formulas are those of training mode (eval's are in the comments of ``backward``).
    """

    type_name = "batchnorm"
    type_options = {"momentum": Option(NUMBER, 0.1, lambda v: 0 <= v <= 1, "be in [0, 1]",
                                       "the weight of a batch in the running statistics"),
                    "eps": positive(1e-5, "added to the variance")}
    type_widths = FEATURES
    type_wants = ("dtype",)

    modes_differ = True
    min_train_rows = 2  # a variance needs two rows
    forward_formula = "out = gamma * xhat + beta, xhat = (x - mean_N(x)) * rstd, rstd = 1 / sqrt(var_N(x) + eps)"
    backward_formulas = {"dx": "dx = rstd * (dxhat - mean_N(dxhat) - xhat * mean_N(dxhat * xhat)), dxhat = dout * gamma",
                         "gamma": "dgamma = sum_N(dout * xhat)", "beta": "dbeta = sum_N(dout)"}

    def __init__(self, features: int, momentum: float = 0.1, eps: float = 1e-5, dtype=np.float32):
        if not 0.0 <= momentum <= 1.0:
            raise LayerError(f"batchnorm momentum must be in [0, 1], got {momentum}")
        super().__init__(features, eps, dtype)
        self.momentum = float(momentum)
        self.buffers["running_mean"] = np.zeros(self.features, dtype=dtype)  # (D,)
        self.buffers["running_var"] = np.ones(self.features, dtype=dtype)  # (D,)
        self.batch_stats = None

    def forward(self, x):
        eps = x.dtype.type(self.eps)
        if self.training:
            n = x.shape[0]
            if n < self.min_train_rows:
                raise LayerError(f"BatchNorm1d needs at least {self.min_train_rows} rows per batch in training mode")
            mean = x.mean(axis=0)  # (D,)
            var = x.var(axis=0)  # (D,), biased: the one that normalises
            m = x.dtype.type(self.momentum)
            rm, rv = self.buffers["running_mean"], self.buffers["running_var"]
            self.buffers["running_mean"] = (1 - m) * rm + m * mean
            self.buffers["running_var"] = (1 - m) * rv + m * var * x.dtype.type(n / (n - 1))
        else:
            mean, var = self.buffers["running_mean"], self.buffers["running_var"]
        self.batch_stats = self.training
        self.rstd = 1 / np.sqrt(var + eps)  # (D,)
        return self.scale_shift((x - mean) * self.rstd)

    def backward(self, dout):
        dxhat = self.scale_shift_backward(dout)  # (N, D)
        xhat, rstd = self.xhat, self.saved(self.rstd)
        if not self.batch_stats:
            # fwd (eval): xhat = (x - running_mean) * rstd  =>  dx = dxhat * rstd
            return dxhat * rstd
        # fwd: out = gamma * xhat + beta, xhat = (x - mean_N(x)) * rstd, rstd = 1 / sqrt(var_N(x) + eps)
        #  =>  dx = rstd * (dxhat - mean_N(dxhat) - xhat * mean_N(dxhat * xhat)), dxhat = dout * gamma
        return rstd * (dxhat - dxhat.mean(axis=0) - xhat * (dxhat * xhat).mean(axis=0))

    def config(self):
        return {"features": self.features, "momentum": self.momentum, "eps": self.eps}

    def to_onnx(self, g, x, name):  # mlp-export: evaluation mode, with the running statistics
        tensors = {**self.params, **self.buffers}
        consts = [g.const(f"{name}.{k}", tensors[k]) for k in ("gamma", "beta", "running_mean", "running_var")]
        return g.op("BatchNormalization", x, *consts, name=name, epsilon=self.eps)
