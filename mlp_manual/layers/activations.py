"""Elementwise activations and the standalone softmax: parameterless layers.

N = batch size, D = features (unchanged by every layer here).
"""

import math

import numpy as np

from ..options import NUMBER, Option
from .base import Layer


class Identity(Layer):
    """out = x."""

    type_name = "identity"

    forward_formula = "out = x"
    backward_formulas = {"dx": "dx = dout"}

    def __init__(self):
        super().__init__()
        self.ran = None

    def forward(self, x):
        self.ran = True
        return x

    def backward(self, dout):
        self.saved(self.ran)
        # fwd: out = x  =>  dx = dout
        return dout

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        return g.op("Identity", x, name=name)


class ReLU(Layer):
    """out = max(x, 0). At x == 0 the subgradient 0 is used."""

    type_name = "relu"

    unit_state = "dead"
    forward_formula = "out = max(x, 0)"
    backward_formulas = {"dx": "dx = dout * (x > 0)"}

    def __init__(self):
        super().__init__()
        self.x = None
        self.zeros = np.zeros(0)  # (D,) in x's dtype, made at the first forward

    def forward(self, x):
        self.x = x  # (N, D), its sign gates the gradient
        if self.zeros.shape != x.shape[1:] or self.zeros.dtype != x.dtype:
            self.zeros = np.zeros(x.shape[1:], dtype=x.dtype)
        # max(x, 0), against a row of zeros: numpy runs its vectorised array-array loop then,
        # and a slower scalar loop for the 0 itself (about 2x at (128, 256) in float32)
        return np.maximum(x, self.zeros)

    def backward(self, dout):
        x = self.saved(self.x)
        # fwd: out = max(x, 0)  =>  dx = dout * (x > 0)
        return dout * (x > 0)

    def stuck(self, out):
        return out <= 0

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        return g.op("Relu", x, name=name)


class LeakyReLU(Layer):
    """out = x where x > 0, slope * x elsewhere."""

    type_name = "leaky_relu"
    type_options = {"slope": Option(NUMBER, 0.01, math.isfinite, "be a finite number", "the slope for x <= 0")}

    unit_state = "dead"
    forward_formula = "out = where(x > 0, x, slope * x)"
    backward_formulas = {"dx": "dx = dout * where(x > 0, 1, slope)"}

    def __init__(self, slope: float = 0.01):
        super().__init__()
        self.slope = float(slope)
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D)
        return np.where(x > 0, x, x * x.dtype.type(self.slope))

    def backward(self, dout):
        x = self.saved(self.x)
        # fwd: out = where(x > 0, x, slope * x)  =>  dx = dout * where(x > 0, 1, slope)
        return np.where(x > 0, dout, dout * dout.dtype.type(self.slope))

    def stuck(self, out):
        return self.x <= 0

    def config(self):
        return {"slope": self.slope}

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        return g.op("LeakyRelu", x, name=name, alpha=self.slope)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic function without overflow: exp is only ever taken of -|x|."""
    e = np.exp(-np.abs(x))  # (N, D), in (0, 1]
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


class Sigmoid(Layer):
    """out = 1 / (1 + exp(-x)), stable for large |x|."""

    type_name = "sigmoid"

    unit_state = "saturated"
    forward_formula = "s = sigmoid(x)"
    backward_formulas = {"dx": "dx = dout * s * (1 - s)"}

    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, x):
        self.out = sigmoid(x)  # (N, D), the derivative is written in terms of it
        return self.out

    def backward(self, dout):
        s = self.saved(self.out)
        # fwd: s = sigmoid(x)  =>  dx = dout * s * (1 - s)
        return dout * s * (1 - s)

    def stuck(self, out):
        return np.abs(2 * out - 1) > 0.99  # beyond 0.99 of the way from 0.5 to 0 or 1

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        return g.op("Sigmoid", x, name=name)


class Tanh(Layer):
    """out = tanh(x)."""

    type_name = "tanh"

    unit_state = "saturated"
    forward_formula = "t = tanh(x)"
    backward_formulas = {"dx": "dx = dout * (1 - t**2)"}

    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, x):
        self.out = np.tanh(x)  # (N, D)
        return self.out

    def backward(self, dout):
        t = self.saved(self.out)
        # fwd: t = tanh(x)  =>  dx = dout * (1 - t**2)
        return dout * (1 - t * t)

    def stuck(self, out):
        return np.abs(out) > 0.99

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        return g.op("Tanh", x, name=name)


class GELU(Layer):
    """GELU, tanh approximation: out = 0.5 x (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2/pi)."""

    type_name = "gelu"

    forward_formula = "out = 0.5 x (1 + t), t = tanh(u), u = k (x + c x^3)"
    backward_formulas = {"dx": "dx = dout * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2))"}

    K = np.sqrt(2.0 / np.pi)
    C = 0.044715

    def __init__(self):
        super().__init__()
        self.x = self.t = None

    def forward(self, x):
        k, c = x.dtype.type(self.K), x.dtype.type(self.C)
        self.x = x  # (N, D)
        self.t = np.tanh(k * (x + c * x ** 3))  # (N, D)
        return 0.5 * x * (1 + self.t)

    def backward(self, dout):
        x, t = self.saved(self.x), self.saved(self.t)
        k, c = x.dtype.type(self.K), x.dtype.type(self.C)
        # fwd: out = 0.5 x (1 + t), t = tanh(u), u = k (x + c x^3)
        #  =>  dx = dout * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2))
        return dout * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x))

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        # out = 0.5 x (1 + tanh(k (x + c x^3))), as forward computes it
        x3 = g.op("Mul", g.op("Mul", x, x, name=f"{name}.x2"), x, name=f"{name}.x3")
        cx3 = g.op("Mul", g.const(f"{name}.c", self.C), x3, name=f"{name}.cx3")
        u = g.op("Mul", g.const(f"{name}.k", self.K), g.op("Add", x, cx3, name=f"{name}.inner"), name=f"{name}.u")
        t = g.op("Tanh", u, name=f"{name}.t")
        half_x = g.op("Mul", g.const(f"{name}.half", 0.5), x, name=f"{name}.half_x")
        return g.op("Mul", half_x, g.op("Add", g.const(f"{name}.one", 1.0), t, name=f"{name}.one_plus_t"), name=name)


class Softmax(Layer):
    """Row-wise softmax as a layer (for a probability output; training with
    cross-entropy should use the fused ``softmax_cross_entropy`` loss instead)."""

    type_name = "softmax"

    forward_formula = "s = exp(x) / sum(exp(x))"
    backward_formulas = {"dx": "dx = J^T dout = s * (dout - sum(dout * s))"}

    def __init__(self):
        super().__init__()
        self.s = None

    def forward(self, x):
        e = np.exp(x - x.max(axis=1, keepdims=True))  # (N, D), shifted so exp cannot overflow
        self.s = e / e.sum(axis=1, keepdims=True)  # (N, D)
        return self.s

    def backward(self, dout):
        s = self.saved(self.s)
        # fwd: s = exp(x) / sum(exp(x))  =>  dx = J^T dout = s * (dout - sum(dout * s))
        return s * (dout - (dout * s).sum(axis=1, keepdims=True))

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        return g.op("Softmax", x, name=name, axis=1)
