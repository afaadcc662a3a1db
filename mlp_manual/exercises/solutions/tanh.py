"""Exercise: the tanh activation's backward pass.

Forward (given):   out = tanh(x)

    x (N, D)   a batch of N rows of D features
    out (N, D)

Backward (yours): given dout = dL/dout (N, D), return dx = dL/dx (N, D).

Each out[n, d] depends on x[n, d] alone, so dx = dout * d tanh(x)/dx entry by entry. Write the
derivative in terms of what forward cached: both the input x and the output t = tanh(x) are
there; which one does the derivative want?

Check it with `mlp-exercise check tanh`.
"""

import numpy as np

from mlp_manual.core import Layer


class Tanh(Layer):
    """out = tanh(x)."""

    def __init__(self):
        super().__init__()
        self.x = self.out = None

    def forward(self, x):
        self.x = x  # (N, D)
        self.out = np.tanh(x)  # (N, D), the derivative is written in terms of it
        return self.out

    def backward(self, dout):
        x, t = self.x, self.out  # (N, D) each
        # >>> write here: return dx
        # fwd: t = tanh(x)  =>  dx = dout * (1 - t**2)
        return dout * (1 - t**2)  # (N, D)
        # <<<
