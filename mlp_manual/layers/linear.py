"""Fully connected layer: out = x @ W + b.

N = batch size, D = input features (in_features), H = output features (out_features).
"""

import numpy as np

from ..errors import LayerError
from ..init import ALIASES, INITIALIZERS, init_names, init_weight
from ..options import BOOL, Option
from .base import Layer
from .options import INIT, UNITS


class Linear(Layer):
    """Affine map ``out = x @ W + b``.

    Inputs: in_features D, out_features H, rng (weights are drawn from it), init (one of
    ``mlp_manual.init.init_names()``), bias (add ``b``), dtype.
    Params: W (D, H), b (H,) initialised to zero.
    """

    type_name = "linear"
    type_options = {"init": Option(INIT, "he_uniform", help="how W is drawn"),
                    "bias": Option(BOOL, True, help="whether out has + b")}
    type_widths = UNITS
    type_wants = ("rng", "dtype")

    forward_formula = "out = x @ W + b"
    backward_formulas = {"dx": "dx = dout @ W.T", "W": "dW = x.T @ dout", "b": "db = dout.sum(0)"}

    def __init__(self, in_features: int, out_features: int, *, rng: np.random.Generator,
                 init: str = "he_uniform", bias: bool = True, dtype=np.float32):
        super().__init__()
        if init not in INITIALIZERS and init not in ALIASES:
            raise LayerError(f"unknown init {init!r}; choose one of: {', '.join(init_names())}")
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.init, self.bias = init, bias
        self.params["W"] = init_weight(init, rng, self.in_features, self.out_features).astype(dtype)  # (D, H)
        if bias:
            self.params["b"] = np.zeros(self.out_features, dtype=dtype)  # (H,)
        self._grads_like_params()
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
        self.backward_params(dout)
        # fwd: out = x @ W + b  =>  dx = dout @ W.T
        return dout @ self.params["W"].T  # (N, D)

    def backward_params(self, dout):
        x = self.saved(self.x)
        # fwd: out = x @ W + b  =>  dW = x.T @ dout, db = dout.sum(0)
        self.grads["W"] = x.T @ dout  # (D, H)
        if self.bias:
            self.grads["b"] = dout.sum(0)  # (H,)

    def output_width(self, width):
        return self.out_features

    def config(self):
        return {"in_features": self.in_features, "out_features": self.out_features,
                "init": self.init, "bias": self.bias}

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        W = g.const(f"{name}.W", self.params["W"])  # (D, H)
        if "b" not in self.params:
            return g.op("MatMul", x, W, name=name)
        return g.op("Gemm", x, W, g.const(f"{name}.b", self.params["b"]), name=name)  # x @ W + b
