"""Layer normalisation: out = gamma * (x - mean) / sqrt(var + eps) + beta, the statistics over
the D features of each row; the student writes dgamma, dbeta and dx.

N = batch size, D = features.
"""

import numpy as np

from ...core import LayerNorm
from ..exercise import Case
from .layer_exercise import draw, ladder, layer_exercise
from .mistakes import predicting, scale_shift, wrong_sign

EPS = 1e-5
LOOK_DX = ("the return value: dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), the means over "
           "the D features of each row (axis=1, keepdims=True), dxhat = dout * gamma")


def cases(seed: int) -> list[Case]:
    """D >= 3: with D = 2 each row normalises to about (-1, 1) whatever x is, dx is ~1e-6 of dout
    and central differences cannot tell it from 0."""
    shapes = [(n, d + 2) for n, d in ladder(seed, [(1, 1), (2, 1), (3, 2), (4, 3)], high=4)]
    rng = np.random.default_rng(seed)
    return [Case(f"N={n}, D={d}", n * d, draw(rng, x=(n, d), gamma=(d,), beta=(d,), dout=(n, d)))
            for n, d in shapes]


def _parts(c: Case):
    """xhat, rstd and dxhat of the case, as the core's forward makes them."""
    x = c["x"]
    rstd = 1 / np.sqrt(x.var(axis=1, keepdims=True) + EPS)  # (N, 1)
    return (x - x.mean(axis=1, keepdims=True)) * rstd, rstd, c["dout"] * c["gamma"]


def _wrong_axis(c: Case):
    xhat, rstd, dxhat = _parts(c)
    return rstd * (dxhat - dxhat.mean(axis=0, keepdims=True) - xhat * (dxhat * xhat).mean(axis=0, keepdims=True))


def _no_statistics_paths(c: Case):
    _, rstd, dxhat = _parts(c)
    return dxhat * rstd


def _no_variance_path(c: Case):
    _, rstd, dxhat = _parts(c)
    return rstd * (dxhat - dxhat.mean(axis=1, keepdims=True))


EXERCISE = layer_exercise(
    "layernorm", "out = gamma * xhat + beta, xhat normalised over each row: write dgamma, dbeta, dx", "LayerNorm",
    cases=cases, core=lambda case: LayerNorm(case["x"].shape[1], eps=EPS, dtype=np.float64),
    build=lambda cls, case, call: call("LayerNorm(...)", lambda: cls(case["x"].shape[1], eps=EPS, dtype=np.float64)),
    params=("gamma", "beta"), layer="layernorm",
    mistakes=(
        *scale_shift(lambda c: _parts(c)[0], "xhat"),
        predicting("normalised_over_wrong_axis", "dx", "dx takes its means over the batch (axis=0) where layer "
                   "norm normalises each row over its D features (axis=1)", LOOK_DX, _wrong_axis),
        predicting("missing_mean_and_variance_paths", "dx", "dx = dxhat * rstd misses the paths through the mean "
                   "and the variance: both depend on every x of the row, so each x also moves them", LOOK_DX,
                   _no_statistics_paths),
        predicting("missing_variance_path", "dx", "dx misses the path through the variance: the term "
                   "- xhat * mean(dxhat * xhat) that comes from rstd depending on x", LOOK_DX, _no_variance_path),
        wrong_sign("dx", LOOK_DX),
    ),
    hints=(
        "Split it: out = gamma * xhat + beta gives dgamma, dbeta and dxhat = dout * gamma. Then xhat = (x - mean) "
        "* rstd, where mean and rstd = 1 / sqrt(var + eps) are functions of the whole row of x.",
        "x reaches xhat three ways: directly, through the mean, through the variance. Summing the three gives, "
        "with means over the D features of a row: dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).",
        "dgamma = (dout * xhat).sum(axis=0); dbeta = dout.sum(axis=0); dxhat = dout * gamma; return rstd * "
        "(dxhat - dxhat.mean(axis=1, keepdims=True) - xhat * (dxhat * xhat).mean(axis=1, keepdims=True)).",
    ),
)
