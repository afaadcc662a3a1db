"""The tanh activation: out = tanh(x); the student writes dx.

N = batch size, D = features.
"""

import numpy as np

from ...core import Tanh
from ..exercise import Case
from .layer_exercise import draw, ladder, layer_exercise
from .mistakes import predicting, wrong_sign

LOOK_DX = "the return value: dx = dout * (1 - t**2) with t = self.out = tanh(x), the cached output"


def cases(seed: int) -> list[Case]:
    shapes = ladder(seed, [(1, 2), (2, 3), (3, 4)])
    rng = np.random.default_rng(seed)
    return [Case(f"N={n}, D={d}", n * d, draw(rng, x=(n, d), dout=(n, d))) for n, d in shapes]


EXERCISE = layer_exercise(
    "tanh", "out = tanh(x): write dx", "Tanh",
    cases=cases, core=lambda case: Tanh(), build=lambda cls, case, call: call("Tanh()", cls), layer="tanh",
    mistakes=(
        predicting("derivative_of_input", "dx", "dx uses 1 - x**2, the input where the output belongs: "
                   "d tanh(x)/dx = 1 - tanh(x)**2 = 1 - out**2", LOOK_DX, lambda c: c["dout"] * (1 - c["x"] ** 2)),
        predicting("activation_applied_twice", "dx", "dx uses 1 - tanh(out)**2, tanh applied once more to the "
                   "output: out is tanh(x) already, so the derivative is 1 - out**2", LOOK_DX,
                   lambda c: c["dout"] * (1 - np.tanh(np.tanh(c["x"])) ** 2)),
        predicting("missing_activation_derivative", "dx", "dx is dout itself: the factor d tanh(x)/dx = "
                   "1 - out**2 is missing", LOOK_DX, lambda c: c["dout"]),
        predicting("missing_square", "dx", "dx uses 1 - out where 1 - out**2 belongs: the square is missing",
                   LOOK_DX, lambda c: c["dout"] * (1 - np.tanh(c["x"]))),
        wrong_sign("dx", LOOK_DX),
    ),
    hints=(
        "Each out[n, d] depends on x[n, d] alone: dx = dout * (d tanh(x) / dx), entry by entry.",
        "d tanh(x)/dx = 1 - tanh(x)**2, and forward has cached tanh(x) already as self.out.",
        "return dout * (1 - self.out**2): the output, squared, not the input x.",
    ),
)
