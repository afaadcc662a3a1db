"""Exercise: the sigmoid activation's backward pass.

Forward (given):   out = sigmoid(x) = 1 / (1 + exp(-x))

    x (N, D)   a batch of N rows of D features
    out (N, D)

Backward (yours): given dout = dL/dout (N, D), return dx = dL/dx (N, D).

Each out[n, d] depends on x[n, d] alone, so dx = dout * d sigmoid(x)/dx entry by entry. The
derivative has a short form in terms of s = sigmoid(x); forward cached both x and s.

Check it with `mlp-exercise check sigmoid`.
"""

import numpy as np

from mlp_manual.core import Layer


class Sigmoid(Layer):
    """out = 1 / (1 + exp(-x))."""

    def __init__(self):
        super().__init__()
        self.x = self.out = None

    def forward(self, x):
        self.x = x  # (N, D)
        self.out = 1 / (1 + np.exp(-x))  # (N, D), the derivative is written in terms of it
        return self.out

    def backward(self, dout):
        x, s = self.x, self.out  # (N, D) each
        # >>> write here: return dx
        # fwd: s = sigmoid(x)  =>  dx = dout * s * (1 - s)
        return dout * s * (1 - s)  # (N, D)
        # <<<
