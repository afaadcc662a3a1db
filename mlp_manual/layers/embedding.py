"""Embedding table: each integer index picks a row of W; a row of the output is the rows of its
context side by side (makemore's ``C[X].view(N, -1)``).

N = batch size, T = context (indices per row), V = vocabulary (rows of W), E = embedding dim.
"""

import numpy as np

from ..errors import LayerError
from .base import Layer
from .options import TABLE


class Embedding(Layer):
    """A lookup table: ``out[n] = concat(W[x[n, 0]], ..., W[x[n, T-1]])``.

    Inputs: vocab V (rows of the table), context T (indices in a row of x), dim E (columns of the
    table), rng (the table is drawn from it, standard normal as in makemore), dtype.
    Params: W (V, E).
    forward takes x (N, T) integer indices in 0..V-1 (a float array holding whole numbers is
    accepted too) and returns (N, T * E). backward fills dW and returns None: an index is not a
    number that could move a little, so x has no gradient.
    """

    type_name = "embedding"
    type_widths = TABLE
    type_wants = ("rng", "dtype")

    takes_indices = True
    forward_formula = "out[n] = concat(W[x[n, 0]], ..., W[x[n, T-1]])"
    backward_formulas = {"W": "dW = scatter-add of dout: dW[x[n, t]] += dout[n, t*E:(t+1)*E]",
                         "dx": "dx = None (indices have no gradient)"}

    def __init__(self, vocab: int, context: int, dim: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__()
        self.vocab, self.context, self.dim = int(vocab), int(context), int(dim)
        self.params["W"] = rng.standard_normal((self.vocab, self.dim)).astype(dtype)  # (V, E)
        self._grads_like_params()
        self.x = None

    def forward(self, x):
        self.x = self.indices(x)  # (N, T), needed for dW
        return self.params["W"][self.x].reshape(len(self.x), self.context * self.dim)  # (N, T * E)

    def backward(self, dout):
        x = self.saved(self.x)
        dW = np.zeros_like(self.params["W"])  # (V, E)
        # fwd: out[n] = concat(W[x[n, 0]], ..., W[x[n, T-1]])
        #  =>  dW = scatter-add of dout: dW[x[n, t]] += dout[n, t*E:(t+1)*E]
        # A row used at several positions (the boundary token pads every short context) gets
        # the sum of all their gradients: micrograd's `+=`. Plain `dW[x] += dout` would keep
        # only one of them, because numpy's buffered fancy-index assignment writes each row once;
        # np.add.at adds every one.
        np.add.at(dW, x, dout.reshape(len(x), self.context, self.dim))  # (V, E)
        self.grads["W"] = dW
        # fwd: out[n] = concat(W[x[n, 0]], ..., W[x[n, T-1]])  =>  dx = None (indices have no gradient)
        return None

    def indices(self, x) -> np.ndarray:
        """x (N, T) as integer indices; LayerError for a wrong shape, a fraction or an index
        outside 0..V-1."""
        x = np.asarray(x)
        if x.ndim != 2 or x.shape[1] != self.context:
            raise LayerError(f"Embedding expects indices of shape (N, {self.context}), got {x.shape}")
        if x.dtype.kind == "f":
            whole = x.astype(np.intp)
            if not np.array_equal(whole, x):
                raise LayerError("Embedding takes integer indices, got numbers with a fractional part")
            x = whole
        elif x.dtype.kind not in "iu":
            raise LayerError(f"Embedding takes integer indices, got {x.dtype} values")
        if x.size and (x.min() < 0 or x.max() >= self.vocab):
            raise LayerError(f"Embedding indices must lie in 0..{self.vocab - 1}, found {x.min()}..{x.max()}")
        return x

    def output_width(self, width):
        return self.context * self.dim

    def config(self):
        return {"vocab": self.vocab, "context": self.context, "dim": self.dim}

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        rows = g.op("Gather", g.const(f"{name}.W", self.params["W"]), x, name=f"{name}.rows", axis=0)  # (N, T, E)
        width = g.const(f"{name}.shape", [-1, self.context * self.dim], np.int64)
        return g.op("Reshape", rows, width, name=name)  # (N, T * E): the rows of a context side by side
