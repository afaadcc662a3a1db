"""The ReLU activation: out = max(x, 0); the student writes dx.

N = batch size, D = features.
"""

import dataclasses

import numpy as np

from ...core import ReLU
from ..exercise import Case
from .layer_exercise import draw, ladder, layer_exercise
from .mistakes import predicting, wrong_sign

LOOK_DX = "the return value: dx = dout * (x > 0), shape (N, D); the mask comes from the cached input x"


def cases(seed: int) -> list[Case]:
    """Some entries of x are exactly 0, where ReLU has a kink and the core takes the subgradient 0."""
    shapes = ladder(seed, [(1, 3), (2, 3), (3, 4), (4, 5)])
    rng = np.random.default_rng(seed)
    found = []
    for n, d in shapes:
        arrays = draw(rng, x=(n, d), dout=(n, d))
        arrays["x"][rng.random((n, d)) < 0.25] = 0.0
        arrays["x"].flat[0] = 0.0  # every case has a kink
        found.append(Case(f"N={n}, D={d}", n * d, arrays))
    found.insert(0, Case("N=1, D=3, no zero", 3, draw(rng, x=(1, 3), dout=(1, 3))))
    found.append(Case("N=3, D=4, no zero", 12, draw(rng, x=(3, 4), dout=(3, 4))))
    return found


def _numeric_away_from_kinks(numeric):
    """Central differences say nothing at x == 0 (the one-sided slopes are 0 and 1): they are
    only taken on the cases without an exact zero."""
    def at(case: Case):
        return numeric(case) if not (case["x"] == 0).any() else None
    return at


EXERCISE = layer_exercise(
    "relu", "out = max(x, 0): write dx", "ReLU",
    cases=cases, core=lambda case: ReLU(), build=lambda cls, case, call: call("ReLU()", cls), layer="relu",
    mistakes=(
        predicting("mask_from_dout", "dx", "dx is masked where dout > 0: the mask must come from the forward's "
                   "input x (where x > 0 the unit passed its input on), not from the gradient", LOOK_DX,
                   lambda c: c["dout"] * (c["dout"] > 0)),
        predicting("relu_ge_at_zero", "dx", "dx lets the gradient through at x == 0 (x >= 0): the core takes "
                   "the subgradient 0 at the kink, so the mask is x > 0", LOOK_DX,
                   lambda c: c["dout"] * (c["x"] >= 0)),
        predicting("missing_activation_derivative", "dx", "dx is dout itself: the ReLU's derivative (1 where "
                   "x > 0, 0 elsewhere) is missing", LOOK_DX, lambda c: c["dout"]),
        wrong_sign("dx", LOOK_DX),
    ),
    hints=(
        "Where x > 0 ReLU is the identity, elsewhere it is the constant 0. What is d out / d x on each side?",
        "The local derivative is 1 where x > 0 and 0 elsewhere (also at x == 0 exactly: the subgradient 0). "
        "Multiply the upstream gradient by it.",
        "return dout * (x > 0), with x the input cached by forward (not dout > 0).",
    ),
)
EXERCISE = dataclasses.replace(EXERCISE, numeric=_numeric_away_from_kinks(EXERCISE.numeric))
