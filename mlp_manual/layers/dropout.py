"""Inverted dropout: zero each unit with probability p in training, scale the rest by 1/(1-p).

N = batch size, D = features.
"""

import numpy as np

from ..errors import LayerError
from ..options import NUMBER, Option
from .base import Layer


class Dropout(Layer):
    """Inverted dropout, masks drawn from the generator it is given; identity in eval mode."""

    type_name = "dropout"
    type_options = {"p": Option(NUMBER, 0.5, lambda v: 0 <= v < 1, "be in [0, 1)", "the share of units zeroed")}
    type_wants = ("rng",)

    modes_differ = True
    forward_formula = "out = x * mask"  # in training; mask is 0 or 1 / (1 - p)
    backward_formulas = {"dx": "dx = dout * mask"}

    def __init__(self, p: float = 0.5, *, rng: np.random.Generator):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise LayerError(f"dropout p must be in [0, 1), got {p}")
        self.p = float(p)
        self.rng = rng
        self.mask = None

    def forward(self, x):
        if not self.training or self.p == 0.0:
            self.mask = 1
            return x
        keep = x.dtype.type(1.0 / (1.0 - self.p))
        self.mask = (self.rng.random(x.shape, dtype=np.float64) >= self.p) * keep  # (N, D)
        self.mask = self.mask.astype(x.dtype, copy=False)
        return x * self.mask

    def backward(self, dout):
        mask = self.saved(self.mask)
        # fwd: out = x * mask  =>  dx = dout * mask
        return dout * mask

    def config(self):
        return {"p": self.p}

    def to_onnx(self, g, x, name):  # mlp-export: evaluation mode, where dropout is the identity
        return x
