"""Mean squared error: the student writes dpred; the loss is given.

N = rows, K = targets per row.
"""

import numpy as np

from ...core import mse
from ..exercise import Case
from .loss_exercise import loss_exercise, shapes
from .mistakes import predicting, wrong_sign

LOOK = "dpred = 2 * (pred - y) / (N * K): the 2 of the square, and the mean over all N*K entries"


def cases(seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    return [Case(f"N={n}, K={k}", n * k, {"pred": rng.standard_normal((n, k)), "y": rng.standard_normal((n, k))})
            for n, k in shapes(seed, [(1, 1), (2, 1), (1, 3), (3, 2), (4, 3)])]


def _diff(c):
    return c["pred"] - c["y"]


EXERCISE = loss_exercise(
    "mse", "mean squared error: write dpred", "mse", cases=cases, core=mse,
    mistakes=(
        predicting("missing_2", "dpred", "dpred misses the 2: the derivative of (pred - y)**2 is 2 (pred - y)", LOOK,
                   lambda c: _diff(c) / _diff(c).size),
        predicting("divided_by_n_only", "dpred", "dpred is divided by N, the rows, where the mean is over all "
                   "N*K entries", LOOK, lambda c: 2 * _diff(c) / len(_diff(c))),
        predicting("missing_1_over_n", "dpred", "dpred misses the 1/(N*K) of the mean: it is the gradient of the "
                   "sum", LOOK, lambda c: 2 * _diff(c)),
        wrong_sign("dpred", "pred - y, not y - pred: the loss grows as pred moves away from y"),
    ),
    hints=(
        "loss = (1/(N*K)) sum (pred - y)**2: each entry of pred appears in exactly one term of the sum.",
        "d/dpred[n, k] of (pred[n, k] - y[n, k])**2 is 2 (pred[n, k] - y[n, k]); then the mean's 1/(N*K).",
        "dpred = 2 * (pred - y) / pred.size",
    ),
)
