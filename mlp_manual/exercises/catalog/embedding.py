"""The embedding table: out[n] = W[x[n, 0]], ..., W[x[n, T-1]] side by side; the student writes dW.
x holds integer indices and has no gradient: backward returns None, and no dx is compared.

N = batch size, T = context (indices per row), V = vocabulary (rows of W), E = embedding dim.
"""

import numpy as np

from ...core import Embedding
from ..exercise import Case
from .layer_exercise import index_layer_exercise, ladder
from .mistakes import accumulated, predicting, wrong_sign

LOOK_DW = ("self.grads['W']: each position (n, t) adds its slice dout[n, t*E:(t+1)*E] to row x[n, t] of dW; "
           "a row picked twice gets both: np.add.at(dW, x, dout.reshape(N, T, E))")


def _case(rng: np.random.Generator, n: int, t: int, v: int, e: int, x=None) -> Case:
    x = rng.integers(0, v, size=(n, t)) if x is None else np.array(x)
    return Case(f"N={n}, T={t}, V={v}, E={e}", n * t * e + v,
                {"x": x, "W": rng.standard_normal((v, e)), "dout": rng.standard_normal((n, t * e))})


def cases(seed: int) -> list[Case]:
    """The smallest case picks row 0 twice: where rows repeat, their gradients add up."""
    rng = np.random.default_rng(seed)
    found = [_case(rng, 1, 2, 2, 1, x=[[0, 0]]), _case(rng, 2, 3, 3, 2, x=[[1, 0, 1], [2, 1, 1]])]
    found += [_case(rng, n, t, v, e) for n, t, v, e in ladder(seed, [(3, 2, 4, 3), (4, 3, 5, 2)], high=5)]
    return found


def _overwritten(case: Case):
    """What numpy leaves when each picked row is assigned (``dW[x] = ...``, or ``dW[x] += ...``,
    which reads every row before writing any): one position's slice per row, not their sum."""
    x, (v, e) = case["x"], case["W"].shape
    dW = np.zeros((v, e))
    dW[x] = case["dout"].reshape(*x.shape, e)
    return dW


def _core(case: Case):
    v, e = case["W"].shape
    return Embedding(v, case["x"].shape[1], e, rng=np.random.default_rng(0), dtype=np.float64)


def _build(cls, case, call):
    v, e = case["W"].shape
    return call("Embedding(...)", lambda: cls(v, case["x"].shape[1], e, rng=np.random.default_rng(0),
                                               dtype=np.float64))


EXERCISE = index_layer_exercise(
    "embedding", "out = W[x] side by side: write dW (x is indices: no dx)", "Embedding",
    cases=cases, core=_core, build=_build, params=("W",), layer="embedding",
    mistakes=(
        accumulated("dW", "self.grads[\"W\"] = ...: each backward sets the gradient anew"),
        predicting("repeated_rows_overwritten", "dW", "dW keeps only one gradient for a row picked more than "
                   "once: `dW[x] = ...` assigns, and `dW[x] += ...` with a fancy index also writes each row "
                   "once; a row used at several positions must get the sum of their gradients", LOOK_DW,
                   _overwritten),
        wrong_sign("dW", LOOK_DW),
    ),
    hints=(
        "out[n, t*E:(t+1)*E] = W[x[n, t]]: row x[n, t] of W is copied there. Which entries of out does row v "
        "of W reach?",
        "Row v reaches every position (n, t) with x[n, t] == v, so dW[v] is the sum of dout[n, t*E:(t+1)*E] "
        "over those positions, and 0 for a row never picked. Watch rows picked twice.",
        "dW = np.zeros_like(W); np.add.at(dW, x, dout.reshape(N, T, E)) adds every position (dW[x] += ... "
        "does not: it writes a repeated row once). return None.",
    ),
)
