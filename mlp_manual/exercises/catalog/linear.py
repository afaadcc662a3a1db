"""The linear layer: out = x @ W + b; the student writes dW, db and dx.

N = batch size, D = input features, H = output features.
"""

import numpy as np

from ...core import Linear
from ..exercise import Case
from .layer_exercise import draw, layer_exercise, ladder
from .mistakes import accumulated, extra_one_over_n, missing_one_over_n, predicting, transposed, wrong_sign

LOOK_DW = "self.grads['W']: dW[d, h] sums x[n, d] * dout[n, h] over the batch, dW = x.T @ dout, shape (D, H)"
LOOK_DB = "self.grads['b']: b[h] is added to every row, so db[h] sums dout[n, h] over the N rows: dout.sum(axis=0)"
LOOK_DX = "the return value: dx = dout @ W.T, shape (N, D)"


def cases(seed: int) -> list[Case]:
    shapes = ladder(seed, [(1, 1, 1), (1, 2, 3), (2, 2, 2), (3, 4, 2), (4, 3, 3)])
    rng = np.random.default_rng(seed)
    return [Case(f"N={n}, D={d}, H={h}", n * d * h, draw(rng, x=(n, d), W=(d, h), b=(h,), dout=(n, h)))
            for n, d, h in shapes]


def _core(case):
    d, h = case["W"].shape
    return Linear(d, h, rng=np.random.default_rng(0), dtype=np.float64)


def _build(cls, case, call):
    d, h = case["W"].shape
    return call("Linear(...)", lambda: cls(d, h, rng=np.random.default_rng(0), dtype=np.float64))


EXERCISE = layer_exercise(
    "linear", "out = x @ W + b: write dW, db and dx", "Linear",
    cases=cases, core=_core, build=_build, params=("W", "b"), layer="linear",
    mistakes=(
        accumulated("dW", LOOK_DW),
        transposed("dW", LOOK_DW),
        wrong_sign("dW", LOOK_DW),
        extra_one_over_n("dW", LOOK_DW),
        predicting("bias_not_summed", "db", "db is not summed over the batch: it holds one row of dout, "
                   "where every row adds to the bias", LOOK_DB, lambda c: c["dout"][0] if len(c["dout"]) > 1 else None),
        predicting("bias_wrong_axis", "db", "db is summed over the wrong axis: over the H outputs of each row "
                   "(axis=1) instead of over the N rows (axis=0)", LOOK_DB, lambda c: c["dout"].sum(axis=1)),
        extra_one_over_n("db", LOOK_DB),
        wrong_sign("db", LOOK_DB),
        predicting("bias_as_dout", "db", "db is dout itself, not summed over the batch: b (H,) is added to "
                   "all N rows, so its gradient adds up the N rows", LOOK_DB, lambda c: c["dout"]),
        transposed("dx", LOOK_DX),
        wrong_sign("dx", LOOK_DX),
    ),
    hints=(
        "Write out one entry: out[n, h] = sum_d x[n, d] * W[d, h] + b[h]. Then d out[n, h] / d W[d, h] = x[n, d].",
        "W[d, h] is used in every row n, so its gradient sums over n: dW[d, h] = sum_n x[n, d] * dout[n, h]. "
        "As a matrix product, with shapes (D, N) @ (N, H): x.T @ dout.",
        "b[h] is added to out[n, h] for every n: db = dout.sum(axis=0), shape (H,). "
        "dx[n, d] = sum_h dout[n, h] * W[d, h]: dx = dout @ W.T.",
    ),
)
