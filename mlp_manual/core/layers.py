"""Layers, each a forward and a backward side by side.

``forward(x)`` computes the output and caches what the backward needs. ``backward(dout)`` takes
the gradient of the loss with respect to the output, writes the gradient of every parameter into
``self.grads`` (the keys of ``self.params``) and returns the gradient with respect to the input.
Each backward line carries the forward line it inverts: ``# fwd: A  =>  B``.

Every function computes in the namespace of its input, ``xp = namespace(x)`` (core/namespace.py):
numpy, CuPy on a GPU, or any other array-API library.

N = batch size, D = input features, H = output features.
"""

import inspect
import math

import numpy as np

from .errors import LayerError
from .init import ALIASES, INITIALIZERS, init_names, init_weight
from .namespace import namespace


class Layer:
    """What every layer has: ``params`` and ``grads`` (dicts of arrays with the same keys),
    ``buffers`` (state that is not trained), the ``training`` switch, and ``saved``. A layer
    keeps each argument of its constructor as an attribute of the same name: ``config()``."""

    def __init__(self):
        self.params: dict[str, np.ndarray] = {}
        self.grads: dict[str, np.ndarray] = {}
        self.buffers: dict[str, np.ndarray] = {}
        self.training = True

    def forward(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def backward(self, dout: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def train(self, mode: bool = True) -> "Layer":
        """Training mode (or evaluation mode with ``mode=False``), for layers that differ."""
        self.training = mode
        return self

    def eval(self) -> "Layer":
        return self.train(False)

    def sublayers(self) -> list["Layer"]:
        """The layers a block runs inside it; none for a plain layer."""
        return []

    def saved(self, value):
        """A forward-pass cache entry, or LayerError when forward has not run."""
        if value is None:
            raise LayerError(f"{type(self).__name__}.backward called before forward")
        return value

    def config(self) -> dict:
        """The constructor arguments that rebuild this layer (but its generator and dtype)."""
        names = inspect.signature(type(self).__init__).parameters
        return {k: getattr(self, k) for k in names if k not in ("self", "rng", "dtype") and hasattr(self, k)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.config().items())})"


class Linear(Layer):
    """out = x @ W + b. Inputs: in_features D, out_features H, rng (W is drawn from it), init (an
    initialiser's name, core/init.py), bias (whether out has + b), dtype.
    Params: W (D, H), b (H,) starting at 0."""

    def __init__(self, in_features: int, out_features: int, *, rng: np.random.Generator,
                 init: str = "he_uniform", bias: bool = True, dtype=np.float32):
        super().__init__()
        if init not in INITIALIZERS and init not in ALIASES:
            raise LayerError(f"unknown init {init!r}; choose one of: {', '.join(init_names())}")
        self.in_features, self.out_features, self.init, self.bias = int(in_features), int(out_features), init, bias
        self.params["W"] = init_weight(init, rng, self.in_features, self.out_features).astype(dtype)  # (D, H)
        if bias:
            self.params["b"] = np.zeros(self.out_features, dtype=dtype)  # (H,)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.x = None

    def forward(self, x):
        if x.ndim != 2 or x.shape[1] != self.in_features:
            raise LayerError(f"Linear expects input of shape (N, {self.in_features}), got {x.shape}")
        self.x = x  # (N, D), needed for dW
        out = x @ self.params["W"]  # (N, H)
        if self.bias:
            out += self.params["b"]
        return out

    def backward(self, dout):
        x = self.saved(self.x)
        # fwd: out = x @ W + b  =>  dW = x.T @ dout, db = dout.sum(0)
        self.grads["W"] = x.T @ dout  # (D, H)
        if self.bias:
            self.grads["b"] = namespace(dout).sum(dout, axis=0)  # (H,)
        # fwd: out = x @ W + b  =>  dx = dout @ W.T
        return dout @ self.params["W"].T  # (N, D)


class Identity(Layer):
    """out = x."""

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


class ReLU(Layer):
    """out = max(x, 0); at x == 0 the subgradient 0 is used."""

    def __init__(self):
        super().__init__()
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D), its sign gates the gradient
        return namespace(x).maximum(x, 0.0)

    def backward(self, dout):
        x = self.saved(self.x)
        xp = namespace(x)
        # fwd: out = max(x, 0)  =>  dx = dout * (x > 0)
        return dout * xp.astype(x > 0, dout.dtype)


class LeakyReLU(Layer):
    """out = x where x > 0, slope * x elsewhere."""

    def __init__(self, slope: float = 0.01):
        super().__init__()
        self.slope = float(slope)
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D)
        return namespace(x).where(x > 0, x, x * self.slope)

    def backward(self, dout):
        x = self.saved(self.x)
        # fwd: out = where(x > 0, x, slope * x)  =>  dx = dout * where(x > 0, 1, slope)
        return namespace(x).where(x > 0, dout, dout * self.slope)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function without overflow: exp is only ever taken of -|x|."""
    xp = namespace(x)
    e = xp.exp(-xp.abs(x))  # (N, D), in (0, 1]
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


class Sigmoid(Layer):
    """out = 1 / (1 + exp(-x))."""

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


class Tanh(Layer):
    """out = tanh(x)."""

    def __init__(self):
        super().__init__()
        self.out = None

    def forward(self, x):
        self.out = namespace(x).tanh(x)  # (N, D)
        return self.out

    def backward(self, dout):
        t = self.saved(self.out)
        # fwd: t = tanh(x)  =>  dx = dout * (1 - t**2)
        return dout * (1 - t * t)


class GELU(Layer):
    """GELU, tanh approximation: out = 0.5 x (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2/pi)."""

    K = math.sqrt(2.0 / math.pi)
    C = 0.044715

    def __init__(self):
        super().__init__()
        self.x = self.t = None

    def forward(self, x):
        k, c = self.K, self.C
        self.x = x  # (N, D)
        self.t = namespace(x).tanh(k * (x + c * x ** 3))  # (N, D)
        return 0.5 * x * (1 + self.t)

    def backward(self, dout):
        x, t = self.saved(self.x), self.saved(self.t)
        k, c = self.K, self.C
        # fwd: out = 0.5 x (1 + t), t = tanh(u), u = k (x + c x^3)
        #  =>  dx = dout * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2))
        return dout * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x))


class Softmax(Layer):
    """Row-wise softmax, for a probability output (training with cross-entropy uses the fused
    loss, core/losses.py)."""

    def __init__(self):
        super().__init__()
        self.s = None

    def forward(self, x):
        xp = namespace(x)
        e = xp.exp(x - xp.max(x, axis=1, keepdims=True))  # (N, D), shifted so exp cannot overflow
        self.s = e / xp.sum(e, axis=1, keepdims=True)  # (N, D)
        return self.s

    def backward(self, dout):
        s = self.saved(self.s)
        # fwd: s = exp(x) / sum(exp(x))  =>  dx = J^T dout = s * (dout - sum(dout * s))
        return s * (dout - namespace(s).sum(dout * s, axis=1, keepdims=True))
