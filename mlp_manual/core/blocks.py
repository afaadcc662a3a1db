"""Layers that are not a formula of one input: dropout draws a random mask, the embedding
looks up rows of a table by integer index, and the residual block runs other layers.

N = batch size, D = features, T = context (indices per row), V = vocabulary (rows of the
table), E = embedding dim.
"""

from collections.abc import Iterator, MutableMapping

import numpy as np

from .errors import LayerError
from .layers import Layer
from .namespace import like, namespace


class Dropout(Layer):
    """Inverted dropout: in training, zero each unit with probability p and scale the rest by
    1 / (1 - p), masks drawn from ``rng``; the identity in evaluation."""

    def __init__(self, p: float = 0.5, *, rng: np.random.Generator):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise LayerError(f"dropout p must be in [0, 1), got {p}")
        self.p, self.rng = float(p), rng
        self.mask = None

    def forward(self, x):
        if not self.training or self.p == 0.0:
            self.mask = 1
            return x
        keep = self.rng.random(x.shape, dtype=np.float64) >= self.p  # (N, D), drawn on the CPU
        self.mask = namespace(x).astype(like(x, keep), x.dtype) * (1.0 / (1.0 - self.p))  # (N, D), beside x
        return x * self.mask

    def backward(self, dout):
        mask = self.saved(self.mask)
        # fwd: out = x * mask  =>  dx = dout * mask
        return dout * mask


class Embedding(Layer):
    """A lookup table, makemore's ``C[X].view(N, -1)``: out[n] is the rows of W that the T indices
    of x[n] pick, side by side. Inputs: vocab V, context T, dim E, rng (W is drawn from it,
    standard normal), dtype. Params: W (V, E).
    forward takes x (N, T) integer indices in 0..V-1 (floats holding whole numbers too) and returns
    (N, T * E); backward fills dW and returns None: an index cannot change a little, so x has no
    gradient."""

    def __init__(self, vocab: int, context: int, dim: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__()
        self.vocab, self.context, self.dim = int(vocab), int(context), int(dim)
        self.params["W"] = rng.standard_normal((self.vocab, self.dim)).astype(dtype)  # (V, E)
        self.grads = {"W": np.zeros_like(self.params["W"])}
        self.x = None

    def forward(self, x):
        self.x = self.indices(x)  # (N, T), needed for dW
        xp = namespace(self.x)
        rows = xp.take(self.params["W"], xp.reshape(self.x, (-1,)), axis=0)  # (N * T, E), row n*T+t is W[x[n, t]]
        return xp.reshape(rows, (self.x.shape[0], self.context * self.dim))  # (N, T * E)

    def backward(self, dout):
        x = self.saved(self.x)
        xp = namespace(dout)
        W = self.params["W"]
        # fwd: out[n] = concat(W[x[n, 0]], ..., W[x[n, T-1]])
        #  =>  dW = scatter-add of dout: dW[x[n, t]] += dout[n, t*E:(t+1)*E]
        # As products: the forward's rows are onehot(x) @ W, so dW = onehot(x).T @ drows, and row
        # v of dW sums the gradient of every position that picked v (micrograd's `+=`); an
        # indexed write, `dW[x] += drows`, would keep only one of them.
        onehot = xp.astype(xp.reshape(x, (-1, 1)) == xp.arange(self.vocab), W.dtype)  # (N * T, V), row i is 1 at x's i-th index
        self.grads["W"] = onehot.T @ xp.reshape(dout, (x.shape[0] * self.context, self.dim))  # (V, E)
        # fwd: out[n] = concat(W[x[n, 0]], ..., W[x[n, T-1]])  =>  dx = None (indices have no gradient)
        return None

    def indices(self, x) -> np.ndarray:
        """x (N, T) as integer indices; LayerError for a wrong shape, a fraction or an index
        outside 0..V-1."""
        x = x if hasattr(x, "__array_namespace__") else np.asarray(x)
        xp = namespace(x)
        if x.ndim != 2 or x.shape[1] != self.context:
            raise LayerError(f"Embedding expects indices of shape (N, {self.context}), got {tuple(x.shape)}")
        if xp.isdtype(x.dtype, "real floating"):
            whole = xp.astype(x, xp.int64)
            if not bool(xp.all(xp.astype(whole, x.dtype) == x)):
                raise LayerError("Embedding takes integer indices, got numbers with a fractional part")
            x = whole
        elif not xp.isdtype(x.dtype, "integral"):
            raise LayerError(f"Embedding takes integer indices, got {x.dtype} values")
        low, high = (int(xp.min(x)), int(xp.max(x))) if x.shape[0] else (0, 0)
        if low < 0 or high >= self.vocab:
            raise LayerError(f"Embedding indices must lie in 0..{self.vocab - 1}, found {low}..{high}")
        return x


class Residual(Layer):
    """out = x + f(x), f the inner ``layers`` run in order (as wide at both ends as x). x is used
    twice, by f and by the sum, so its gradient is the sum of the two paths' (micrograd's
    ``x.grad += ...``): dx = dout + f.backward(dout). Params, grads and buffers: the inner layers',
    keyed ``"<j>.<key>"`` (InnerDicts), so that a model sees every inner array."""

    def __init__(self, layers=()):
        super().__init__()
        if not layers:
            raise LayerError("residual needs a non-empty 'layers' list: the inner layers f of out = x + f(x)")
        self.layers = list(layers)
        self.params = InnerDicts(self.layers, "params")
        self.grads = InnerDicts(self.layers, "grads")
        self.buffers = InnerDicts(self.layers, "buffers")
        self.x_shape = None

    def sublayers(self) -> list[Layer]:
        return self.layers

    def forward(self, x):
        fx = x
        for layer in self.layers:
            fx = layer.forward(fx)
        if fx.shape != x.shape:
            raise LayerError(f"residual: the inner layers turned input {x.shape} into {fx.shape}; "
                             "out = x + f(x) needs them of one shape")
        self.x_shape = x.shape
        return x + fx  # (N, D)

    def backward(self, dout):
        self.saved(self.x_shape)
        df = dout
        for layer in reversed(self.layers):
            df = layer.backward(df)
        # fwd: out = x + f(x)  =>  dx = dout + df(dout)
        return dout + df  # (N, D)

    def train(self, mode: bool = True) -> "Residual":
        for layer in self.layers:
            layer.train(mode)
        return super().train(mode)


class InnerDicts(MutableMapping):
    """One of the dicts ``attr`` ("params", "grads", "buffers") of every inner layer, as one
    mapping keyed ``"<j>.<key>"``: it reads and writes the inner dicts themselves, so it never
    holds a stale array when a layer replaces one."""

    def __init__(self, layers: list[Layer], attr: str):
        self.layers, self.attr = layers, attr

    def _dict_and_key(self, name: str) -> tuple[dict, str]:
        j, _, key = name.partition(".")
        if not (j.isdigit() and int(j) < len(self.layers) and key):
            raise KeyError(name)
        return getattr(self.layers[int(j)], self.attr), key

    def __getitem__(self, name: str) -> np.ndarray:
        d, key = self._dict_and_key(name)
        return d[key]

    def __setitem__(self, name: str, value: np.ndarray) -> None:
        d, key = self._dict_and_key(name)
        d[key] = value

    def __delitem__(self, name: str) -> None:
        d, key = self._dict_and_key(name)
        del d[key]

    def __iter__(self) -> Iterator[str]:
        for j, layer in enumerate(self.layers):
            yield from (f"{j}.{key}" for key in getattr(layer, self.attr))

    def __len__(self) -> int:
        return sum(len(getattr(layer, self.attr)) for layer in self.layers)
