"""Exercise: inverted dropout's backward pass.

Forward (given), in training:

    mask = rng.random(x.shape) >= p    (N, D), True where a unit is kept
    out = x * mask / (1 - p)           (N, D)

    x (N, D)   a batch of N rows of D features
    p          the probability of dropping a unit

Backward (yours): given dout = dL/dout (N, D), return dx = dL/dx (N, D). The mask is the one
the forward drew: backward draws nothing.

Check it with `mlp-exercise check dropout`.
"""

import numpy as np

from mlp_manual.core import Layer


class Dropout(Layer):
    """Inverted dropout: zero each unit with probability p, scale the rest by 1 / (1 - p)."""

    def __init__(self, p: float = 0.5, *, rng: np.random.Generator):
        super().__init__()
        self.p, self.rng = p, rng
        self.mask = None

    def forward(self, x):
        self.mask = self.rng.random(x.shape, dtype=np.float64) >= self.p  # (N, D), True where kept
        return x * self.mask / (1 - self.p)  # (N, D)

    def backward(self, dout):
        mask = self.mask  # (N, D)
        # >>> write here: return dx
        # fwd: out = x * mask / (1 - p)  =>  dx = dout * mask / (1 - p)
        return dout * mask / (1 - self.p)  # (N, D)
        # <<<
