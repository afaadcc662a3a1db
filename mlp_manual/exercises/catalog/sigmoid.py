"""The sigmoid activation: out = 1 / (1 + exp(-x)); the student writes dx.

N = batch size, D = features.
"""

import numpy as np

from ...core import Sigmoid, sigmoid
from ..exercise import Case
from .layer_exercise import draw, ladder, layer_exercise
from .mistakes import predicting, wrong_sign

LOOK_DX = "the return value: dx = dout * s * (1 - s) with s = self.out = sigmoid(x), the cached output"


def cases(seed: int) -> list[Case]:
    shapes = ladder(seed, [(1, 2), (2, 3), (3, 4)])
    rng = np.random.default_rng(seed)
    return [Case(f"N={n}, D={d}", n * d, draw(rng, x=(n, d), dout=(n, d))) for n, d in shapes]


EXERCISE = layer_exercise(
    "sigmoid", "out = sigmoid(x): write dx", "Sigmoid",
    cases=cases, core=lambda case: Sigmoid(), build=lambda cls, case, call: call("Sigmoid()", cls),
    layer="sigmoid",
    mistakes=(
        predicting("derivative_of_input", "dx", "dx uses x * (1 - x), the input where the output belongs: "
                   "d sigmoid(x)/dx = s * (1 - s) with s = sigmoid(x) = out", LOOK_DX,
                   lambda c: c["dout"] * c["x"] * (1 - c["x"])),
        predicting("activation_applied_twice", "dx", "dx uses sigmoid(out) * (1 - sigmoid(out)), the sigmoid "
                   "applied once more to the output: out is sigmoid(x) already", LOOK_DX,
                   lambda c: c["dout"] * sigmoid(sigmoid(c["x"])) * (1 - sigmoid(sigmoid(c["x"])))),
        predicting("missing_activation_derivative", "dx", "dx is dout itself: the factor d sigmoid(x)/dx = "
                   "s * (1 - s) is missing", LOOK_DX, lambda c: c["dout"]),
        wrong_sign("dx", LOOK_DX),
    ),
    hints=(
        "Each out[n, d] depends on x[n, d] alone: dx = dout * (d sigmoid(x) / dx), entry by entry.",
        "Differentiate s = 1 / (1 + exp(-x)): ds/dx = exp(-x) / (1 + exp(-x))**2 = s * (1 - s). "
        "Forward cached s as self.out.",
        "return dout * s * (1 - s) with s = self.out: the output, not the input x.",
    ),
)
