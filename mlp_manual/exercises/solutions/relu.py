"""Exercise: the ReLU activation's backward pass.

Forward (given):   out = max(x, 0)

    x (N, D)   a batch of N rows of D features
    out (N, D)

Backward (yours): given dout = dL/dout (N, D), return dx = dL/dx (N, D).

Each out[n, d] depends on x[n, d] alone, so dx[n, d] = dout[n, d] * d out[n, d] / d x[n, d].
At x == 0 exactly ReLU has a kink; take the subgradient 0 there, as the core does.

Check it with `mlp-exercise check relu`.
"""

import numpy as np

from mlp_manual.core import Layer


class ReLU(Layer):
    """out = max(x, 0)."""

    def __init__(self):
        super().__init__()
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D), its sign gates the gradient
        return np.maximum(x, 0)  # (N, D)

    def backward(self, dout):
        x = self.x  # (N, D)
        # >>> write here: return dx
        # fwd: out = max(x, 0)  =>  dx = dout * (x > 0)
        return dout * (x > 0)  # (N, D)
        # <<<
