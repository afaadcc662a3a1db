"""The residual block: out = x + f(x), f = tanh(x @ W + b) given; the student writes dx and
has f's backward fill dW and db.

N = batch size, D = features (f keeps the width).
"""

import numpy as np

from ...core import Linear, Residual, Tanh
from ..exercise import Case
from .layer_exercise import draw, ladder, layer_exercise
from .mistakes import predicting, wrong_sign

LOOK_DX = "the return value: x is used twice (by f and by the skip), so dx = dout + df, df = f's backward of dout"


def cases(seed: int) -> list[Case]:
    shapes = ladder(seed, [(1, 2), (2, 3), (3, 4)])
    rng = np.random.default_rng(seed)
    return [Case(f"N={n}, D={d}", n * d, draw(rng, x=(n, d), W=(d, d), b=(d,), dout=(n, d))) for n, d in shapes]


def _core(case: Case):
    """The core's Residual around Linear + Tanh, its params and grads those of the Linear (W, b)."""
    d = case["W"].shape[0]
    block = Residual([Linear(d, d, rng=np.random.default_rng(0), dtype=np.float64), Tanh()])
    block.params, block.grads = block.layers[0].params, block.layers[0].grads
    return block


def _df(case: Case) -> np.ndarray:
    """f's backward alone: the gradient of x along the path through f."""
    block = _core(case)
    block.params["W"], block.params["b"] = case["W"].copy(), case["b"].copy()
    block.forward(case["x"].copy())
    linear, tanh = block.layers
    return linear.backward(tanh.backward(case["dout"].copy()))


def _build(cls, case, call):
    return call("Residual(...)", lambda: cls(case["W"].shape[0], rng=np.random.default_rng(0), dtype=np.float64))


EXERCISE = layer_exercise(
    "residual", "out = x + f(x): write dx, with f's backward filling dW and db", "Residual",
    cases=cases, core=_core, build=_build, params=("W", "b"),
    mistakes=(
        predicting("missing_skip_path", "dx", "dx misses the skip path: out = x + f(x) passes dout straight "
                   "back to x as well, so dx = dout + df, not df alone", LOOK_DX, _df),
        predicting("gradient_overwritten", "dx", "dx is dout alone: the gradient through f was overwritten "
                   "where it must be added (x is used twice, its gradients accumulate, micrograd's +=)",
                   LOOK_DX, lambda c: c["dout"]),
        wrong_sign("dx", LOOK_DX),
    ),
    hints=(
        "x is used twice: once by f, once by the sum. A variable used twice gets the sum of both gradients.",
        "Along the skip, d out / d x is the identity: that path gives dout. Along f, run f's backward in "
        "reverse order (tanh, then linear): that path gives df and fills dW, db.",
        "df = self.linear.backward(self.tanh.backward(dout)); return dout + df.",
    ),
)
