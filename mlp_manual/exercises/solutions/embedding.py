"""Exercise: the embedding table's backward pass.

Forward (given):   out[n] = concat(W[x[n, 0]], ..., W[x[n, T-1]])

    x (N, T)       integer indices in 0..V-1, T per row
    W (V, E)       the table: one row of E numbers per index
    out (N, T * E)

Backward (yours): given dout = dL/dout (N, T * E), set self.grads["W"] = dL/dW (V, E) and
return None: an index cannot change a little, so x has no gradient.

Which entries of out does row v of W reach? What if the same index appears twice?

Check it with `mlp-exercise check embedding`.
"""

import numpy as np

from mlp_manual.core import Layer


class Embedding(Layer):
    """A lookup table: out[n] is the rows of W that the T indices of x[n] pick, side by side.
    Params: W (V, E), standard normal."""

    def __init__(self, vocab: int, context: int, dim: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__()
        self.vocab, self.context, self.dim = vocab, context, dim
        self.params["W"] = rng.standard_normal((vocab, dim)).astype(dtype)  # (V, E)
        self.grads = {"W": np.zeros_like(self.params["W"])}
        self.x = None

    def forward(self, x):
        self.x = np.asarray(x).astype(np.intp)  # (N, T), needed for dW
        return self.params["W"][self.x].reshape(len(self.x), self.context * self.dim)  # (N, T * E)

    def backward(self, dout):
        x = self.x  # (N, T)
        # >>> write here: self.grads["W"], and return None
        dW = np.zeros_like(self.params["W"])  # (V, E)
        # fwd: out[n, t*E:(t+1)*E] = W[x[n, t]]  =>  dW[x[n, t]] += dout[n, t*E:(t+1)*E], for every (n, t)
        np.add.at(dW, x, dout.reshape(len(x), self.context, self.dim))
        self.grads["W"] = dW
        return None
        # <<<
