"""Softmax cross-entropy as one step: the student writes the softmax, the loss and dlogits.

N = rows, C = classes.
"""

import numpy as np

from ...core import softmax_cross_entropy
from ..exercise import Case
from .loss_exercise import loss_exercise, shapes
from .mistakes import extra_one_over_n, missing_one_over_n, predicting, scaled, wrong_sign

LOOK = "dlogits = (p - onehot(y)) / N: softmax's p, minus 1 at each row's true class, divided by the N rows"


def cases(seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    return [Case(f"N={n}, C={c}", n * c, {"logits": 2 * rng.standard_normal((n, c)), "y": rng.integers(0, c, n)})
            for n, c in shapes(seed, [(1, 2), (2, 2), (2, 3), (3, 4), (5, 3)])]


def _p(c):
    z = c["logits"] - c["logits"].max(axis=1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)


def _n(c):
    return len(c["logits"])


EXERCISE = loss_exercise(
    "softmax_ce", "softmax cross-entropy in one step: the loss and dlogits", "softmax_cross_entropy",
    cases=cases, core=softmax_cross_entropy, x="logits",
    mistakes=(
        missing_one_over_n("dlogits", LOOK, _n),
        predicting("onehot_not_subtracted", "dlogits", "dlogits is softmax's p alone: the 1 of the true class is "
                   "not subtracted", LOOK, lambda c: _p(c) / _n(c)),
        wrong_sign("dlogits", "p - onehot(y), not onehot(y) - p: raising the true class's logit lowers the loss"),
        scaled("divided_by_n_times_c", "dlogits", "dlogits is divided by N*C; the loss is a mean over the N rows "
               "only, each row's term already summing its C classes", LOOK, lambda c: 1 / c["logits"].shape[1]),
        extra_one_over_n("dlogits", LOOK, _n),
        missing_one_over_n("loss", "the loss is the MEAN over the rows of -log p[n, y[n]]", _n),
        wrong_sign("loss", "the loss is -log p: log of a probability is negative, the loss positive"),
    ),
    hints=(
        "-log p[n, y] = -logits[n, y] + log(sum_j exp(logits[n, j])): differentiate that for each logit c.",
        "d/dlogits[n, c] = p[n, c] - (1 if c == y[n] else 0) for one row; the mean over N rows divides by N.",
        "dlogits = p.copy(); dlogits[np.arange(n), y] -= 1; dlogits /= n",
    ),
)
