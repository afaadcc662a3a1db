"""Exercise: the linear layer's backward pass.

Forward (given):   out = x @ W + b

    x (N, D)   a batch of N rows of D features
    W (D, H)   the weights; b (H,) the bias
    out (N, H)

Backward (yours): given dout = dL/dout (N, H), set

    self.grads["W"] = dL/dW   (D, H)
    self.grads["b"] = dL/db   (H,)
    and return dx = dL/dx     (N, D)

Derive each from one entry: out[n, h] = sum_d x[n, d] * W[d, h] + b[h]. Which entries of out
does W[d, h] touch? Which does b[h] touch? Check the shapes of your answers against the
shapes above: a gradient always has the shape of what it is the gradient of.

Check it with `mlp-exercise check linear`.
"""

import numpy as np

from mlp_manual.core import Layer


class Linear(Layer):
    """out = x @ W + b. Params: W (D, H), b (H,)."""

    def __init__(self, in_features: int, out_features: int, *, rng: np.random.Generator, dtype=np.float32):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = np.sqrt(6.0 / in_features)  # He uniform, for the ReLU networks of check --train
        self.params["W"] = rng.uniform(-bound, bound, (in_features, out_features)).astype(dtype)  # (D, H)
        self.params["b"] = np.zeros(out_features, dtype=dtype)  # (H,)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.x = None

    def output_width(self, width: int) -> int:
        return self.out_features

    def forward(self, x):
        self.x = x  # (N, D), needed for dW
        return x @ self.params["W"] + self.params["b"]  # (N, H)

    def backward(self, dout):
        x = self.x  # (N, D)
        # >>> write here: self.grads["W"], self.grads["b"], and return dx
        self.grads["W"] = x.T @ dout  # (D, H)
        self.grads["b"] = dout.sum(axis=0)  # (H,)
        return dout @ self.params["W"].T  # (N, D)
        # <<<
