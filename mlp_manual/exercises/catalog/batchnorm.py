"""Batch normalisation in training mode, makemore style: the forward keeps every intermediate
and the student writes each one's gradient in reverse. dx, dgamma and dbeta are checked against
the core; each intermediate's gradient (the student's ``self.intermediate_grads``) against its
closed form, and all of them against central differences (an intermediate's: perturbed as a node
of the graph, the forward rerun from it on).

N = batch size, D = features.
"""

import dataclasses

import numpy as np

from ...core import BatchNorm1d
from ...gradcheck.numgrad import numerical_gradient
from ..exercise import Case, Mistake
from ..student import WrongAnswer, as_tensor
from .layer_exercise import EPS as NUMERIC_EPS
from .layer_exercise import draw, ladder, layer_exercise
from .mistakes import predicting, scale_shift, wrong_sign

EPS = 1e-5
LOOK_DX = ("the return value, built from dbndiff (both uses of bndiff: dbnraw * bnvar_inv and 2 * bndiff * "
           "dbndiff2) plus the path through bnmeani (dbnmeani / N on every row)")
LOOK_BESSEL = "dbndiff2: the forward divides by N (bnvar = bndiff2.sum(0) / n), so dbndiff2 = dbnvar / n"
LOOK_DBNDIFF = "dbndiff: the sum of bndiff's two uses, bnvar_inv * dbnraw + 2 * bndiff * dbndiff2"


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


INTERMEDIATES = ("dbnraw", "dbnvar_inv", "dbnvar", "dbndiff2", "dbndiff", "dbnmeani")
NODES = ("bnmeani", "bndiff", "bndiff2", "bnvar", "bnvar_inv", "bnraw", "out")


def _nodes(c: Case, given: dict) -> dict:
    """The forward's intermediates, each from the ones before it, except those ``given``."""
    x, gamma, beta, n = c["x"], c["gamma"], c["beta"], len(c["x"])
    rules = {"bnmeani": lambda v: x.sum(0) / n, "bndiff": lambda v: x - v["bnmeani"],
             "bndiff2": lambda v: v["bndiff"] ** 2, "bnvar": lambda v: v["bndiff2"].sum(0) / n,
             "bnvar_inv": lambda v: (v["bnvar"] + EPS) ** -0.5, "bnraw": lambda v: v["bndiff"] * v["bnvar_inv"],
             "out": lambda v: gamma * v["bnraw"] + beta}
    found = {}
    for name in NODES:
        found[name] = given[name] if name in given else rules[name](found)
    return found


def _closed_form(c: Case) -> dict:
    """Each intermediate's gradient, the total derivative of sum(out * dout) by that node."""
    v, n = _nodes(c, {}), len(c["x"])
    dbnraw = c["dout"] * c["gamma"]
    dbnvar_inv = (v["bndiff"] * dbnraw).sum(0)
    dbnvar = -0.5 * (v["bnvar"] + EPS) ** -1.5 * dbnvar_inv
    dbndiff2 = np.broadcast_to(dbnvar / n, v["bndiff2"].shape).copy()
    dbndiff = v["bnvar_inv"] * dbnraw + 2 * v["bndiff"] * dbndiff2
    return {"dbnraw": dbnraw, "dbnvar_inv": dbnvar_inv, "dbnvar": dbnvar, "dbndiff2": dbndiff2,
            "dbndiff": dbndiff, "dbnmeani": -dbndiff.sum(0)}


def _numeric_intermediates(c: Case) -> dict:
    found = {}
    for name in INTERMEDIATES:
        node = _nodes(c, {})[name[1:]].copy()
        # the five-point stencil: (bnvar + eps)**-0.5 curves sharply where a column's values lie close
        found[name] = numerical_gradient(lambda: _nodes(c, {name[1:]: node})["out"], node, c["dout"],
                                         eps=NUMERIC_EPS, order=4)
    return found


def _with_intermediates(ex):
    """``ex`` comparing the intermediates' gradients too, read from the student's layer."""
    built = []

    def build(cls, case, call):
        built.append(call("BatchNorm1d(...)", lambda: cls(case["x"].shape[1], eps=EPS, dtype=np.float64)))
        return built[-1]

    def run(cls, case, call):
        found = ex.run(cls, case, call)
        grads = getattr(built.pop(), "intermediate_grads", None)
        if not isinstance(grads, dict):
            raise WrongAnswer("self.intermediate_grads is not a dict of the intermediates' gradients: keep the "
                              "line of the scaffold that sets it after your part")
        return {**found, **{k: as_tensor(grads.get(k), f'self.intermediate_grads["{k}"]') for k in INTERMEDIATES}}
    return build, run


EXERCISE = layer_exercise(
    "batchnorm", "batch norm, one intermediate at a time: write dgamma, dbeta and every gradient back to dx",
    "BatchNorm1d",
    cases=cases, core=lambda case: BatchNorm1d(case["x"].shape[1], eps=EPS, dtype=np.float64),
    build=lambda cls, case, call: _STUDENT[0](cls, case, call),
    params=("gamma", "beta"),
    mistakes=(
        *scale_shift(lambda c: _parts(c)[0], "bnraw"),
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
        predicting("missing_variance_path", "dbndiff", "dbndiff has only its first use (bnvar_inv * dbnraw): "
                   "bndiff is used twice, in bnraw and in bndiff2, so add 2 * bndiff * dbndiff2", LOOK_DBNDIFF,
                   lambda c: _parts(c)[1] * _parts(c)[2]),
        predicting("bessel_mismatch", "dbndiff", "dbndiff's variance path divides by N - 1 where the forward "
                   "divides by N", LOOK_BESSEL, lambda c: _dx(c, mean_path=False, var_n=lambda n: n - 1)),
        Mistake("dbndiff_aliased", "dbndiff", "dbndiff was changed after it was complete: `dx = dbndiff` makes dx "
                "another name for the same array, so `dx += ...` adds to dbndiff too; copy it (dbndiff.copy())",
                "the line that starts dx from dbndiff", lambda case, expected: expected["dx"]),
        predicting("bessel_mismatch", "dbndiff2", "dbndiff2 divides by N - 1 where the forward divides by N: "
                   "bnvar = bndiff2.sum(0) / n, the biased variance the core normalises with", LOOK_BESSEL,
                   lambda c: np.broadcast_to(_closed_form(c)["dbnvar"] / (len(c["x"]) - 1), c["x"].shape)),
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
_STUDENT = _with_intermediates(EXERCISE)
EXERCISE = dataclasses.replace(
    EXERCISE, tensors=EXERCISE.tensors + INTERMEDIATES, run=_STUDENT[1],
    reference=lambda case, core=EXERCISE.reference: {**core(case), **_closed_form(case)},
    numeric=lambda case, core=EXERCISE.numeric: {**core(case), **_numeric_intermediates(case)})
