"""Batch normalisation in training mode, makemore style: the forward keeps every intermediate
and the student writes each one's gradient in reverse, then dgamma, dbeta and dx are checked.

N = batch size, D = features.
"""

import numpy as np

from ...core import BatchNorm1d
from ..exercise import Case
from .layer_exercise import draw, ladder, layer_exercise
from .mistakes import predicting, wrong_sign

EPS = 1e-5
LOOK_DX = ("the return value, built from dbndiff (both uses of bndiff: dbnraw * bnvar_inv and 2 * bndiff * "
           "dbndiff2) plus the path through bnmeani (dbnmeani / N on every row)")
LOOK_BESSEL = "dbndiff2: the forward divides by N (bnvar = bndiff2.sum(0) / n), so dbndiff2 = dbnvar / n"
LOOK_DGAMMA = "self.grads['gamma']: gamma (D,) scales every row, so dgamma = (dout * bnraw).sum(0)"
LOOK_DBETA = "self.grads['beta']: beta (D,) is added to every row, so dbeta = dout.sum(0)"


def cases(seed: int) -> list[Case]:
    """N >= 3: with N = 2 each column normalises to about (-1, 1) whatever x is, dx is ~1e-6 of
    dout and central differences cannot tell it from 0."""
    shapes = [(n + 2, d) for n, d in ladder(seed, [(1, 1), (1, 2), (2, 3), (3, 2)], high=4)]
    rng = np.random.default_rng(seed)
    return [Case(f"N={n}, D={d}", n * d, draw(rng, x=(n, d), gamma=(d,), beta=(d,), dout=(n, d)))
            for n, d in shapes]


def _parts(c: Case):
    """xhat, rstd and dxhat of the case, as the core's forward makes them."""
    x = c["x"]
    rstd = 1 / np.sqrt(x.var(axis=0) + EPS)  # (D,)
    return (x - x.mean(axis=0)) * rstd, rstd, c["dout"] * c["gamma"]


def _dx(c: Case, mean_path: bool = True, var_path: bool = True, var_n=lambda n: n):
    """dx = rstd * (dxhat - mean_N(dxhat) - xhat * sum_N(dxhat * xhat) / var_n(N)), a path left
    out where asked (the variance path's own mean is 0: xhat sums to 0 over the batch)."""
    xhat, rstd, dxhat = _parts(c)
    dx = dxhat - (dxhat.mean(axis=0) if mean_path else 0)
    if var_path:
        dx = dx - xhat * (dxhat * xhat).sum(axis=0) / var_n(len(xhat))
    return rstd * dx


EXERCISE = layer_exercise(
    "batchnorm", "batch norm, one intermediate at a time: write dgamma, dbeta and every gradient back to dx",
    "BatchNorm1d",
    cases=cases, core=lambda case: BatchNorm1d(case["x"].shape[1], eps=EPS, dtype=np.float64),
    build=lambda cls, case, call: call("BatchNorm1d(...)",
                                       lambda: cls(case["x"].shape[1], eps=EPS, dtype=np.float64)),
    params=("gamma", "beta"),
    mistakes=(
        predicting("missing_mean_and_variance_paths", "dx", "dx = dxhat * rstd misses the paths through the mean "
                   "and the variance: both are computed from every row of x, so each x also moves them", LOOK_DX,
                   lambda c: _dx(c, mean_path=False, var_path=False)),
        predicting("missing_mean_path", "dx", "dx misses the path through the mean: bnmeani depends on every x "
                   "of its column, so dx gets dbnmeani / N on every row", LOOK_DX, lambda c: _dx(c, mean_path=False)),
        predicting("missing_variance_path", "dx", "dx misses the path through the variance: bndiff is used twice "
                   "(in bnraw and in bndiff2), so dbndiff must add 2 * bndiff * dbndiff2", LOOK_DX,
                   lambda c: _dx(c, var_path=False)),
        predicting("bessel_mismatch", "dx", "dx divides by N - 1 in the variance's backward where the forward "
                   "divides by N: the core normalises with the biased variance", LOOK_BESSEL,
                   lambda c: _dx(c, var_n=lambda n: n - 1)),
        wrong_sign("dx", LOOK_DX),
        predicting("not_summed_over_batch", "dgamma", "dgamma is not summed over the batch: every row uses gamma, "
                   "so its gradient adds up the N rows", LOOK_DGAMMA, lambda c: c["dout"] * _parts(c)[0]),
        wrong_sign("dgamma", LOOK_DGAMMA),
        predicting("not_summed_over_batch", "dbeta", "dbeta is not summed over the batch: every row adds beta, "
                   "so its gradient adds up the N rows", LOOK_DBETA, lambda c: c["dout"]),
        wrong_sign("dbeta", LOOK_DBETA),
    ),
    hints=(
        "Go up the forward one line at a time, each gradient the shape of its variable. out = gamma * bnraw + beta "
        "gives dgamma = (dout * bnraw).sum(0), dbeta = dout.sum(0), dbnraw = dout * gamma.",
        "bnraw = bndiff * bnvar_inv: dbnvar_inv = (bndiff * dbnraw).sum(0) and dbndiff = bnvar_inv * dbnraw; "
        "then dbnvar = -0.5 * (bnvar + eps)**-1.5 * dbnvar_inv and dbndiff2 = dbnvar / n on every row.",
        "bndiff is used twice: dbndiff += 2 * bndiff * dbndiff2. Then bndiff = x - bnmeani: dbnmeani = "
        "-dbndiff.sum(0), and dx = dbndiff + dbnmeani / n (the mean reaches every row).",
    ),
)
