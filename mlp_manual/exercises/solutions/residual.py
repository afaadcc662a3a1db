"""Exercise: the residual block's backward pass.

Forward (given):   out = x + f(x),  f(x) = tanh(x @ W + b)  (the core's Linear and Tanh)

    x (N, D)   a batch of N rows of D features
    W (D, D), b (D,)   the linear layer's, so that f keeps the width
    out (N, D)

Backward (yours): given dout = dL/dout (N, D), run f's backward (it fills self.grads["W"] and
self.grads["b"]: they are the linear layer's) and return dx = dL/dx (N, D).

x is used twice, by f and by the sum. What does each use give back to x?

Check it with `mlp-exercise check residual`.
"""

import numpy as np

from mlp_manual.core import Layer, Linear, Tanh


class Residual(Layer):
    """out = x + tanh(x @ W + b). Params: W (D, D), b (D,), those of the inner linear layer."""

    def __init__(self, features: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__()
        self.features = features
        self.linear = Linear(features, features, rng=rng, dtype=dtype)
        self.tanh = Tanh()
        self.params, self.grads = self.linear.params, self.linear.grads  # W (D, D), b (D,)

    def forward(self, x):
        fx = self.tanh.forward(self.linear.forward(x))  # (N, D)
        return x + fx  # (N, D)

    def backward(self, dout):
        # >>> write here: f's backward (it fills dW, db), and return dx
        # fwd: fx = tanh(linear(x))  =>  df = linear.backward(tanh.backward(dout)), in reverse order
        df = self.linear.backward(self.tanh.backward(dout))  # (N, D)
        # fwd: out = x + fx  =>  dx = dout + df, the two uses of x add up
        return dout + df  # (N, D)
        # <<<
