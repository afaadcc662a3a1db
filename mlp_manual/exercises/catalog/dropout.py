"""Inverted dropout in training: out = x * mask / (1 - p), the mask drawn from the layer's
generator; the student writes dx.

The student's forward is given and draws its mask exactly as the core's (``rng.random(x.shape)
>= p``), and both layers get generators of the same seed, so both keep the same units: the
check compares with the core's own layer. Central differences run the core layer afresh with
that seed for every evaluation, so every evaluation keeps the same units too.

N = batch size, D = features.
"""

import numpy as np

from ...core import Dropout
from ..exercise import Case
from .layer_exercise import draw, ladder, layer_exercise
from .mistakes import predicting, wrong_sign

P = 0.4
LOOK_DX = "the return value: dx = dout * mask / (1 - p), with the mask forward cached (True where a unit was kept)"


class _SameMaskDropout(Dropout):
    """The core's Dropout, its generator seeded afresh at each forward: every forward keeps the
    same units (the first forward's are those of a plain Dropout with a generator of that seed)."""

    def __init__(self, p: float, seed: int):
        super().__init__(p, rng=np.random.default_rng(seed))
        self.seed = seed

    def forward(self, x):
        self.rng = np.random.default_rng(self.seed)
        return super().forward(x)


def _kept(case: Case) -> np.ndarray:
    """The units the core keeps on ``case``, drawn as it draws them."""
    return np.random.default_rng(case["seed"]).random(case["x"].shape, dtype=np.float64) >= P


def cases(seed: int) -> list[Case]:
    """Each case's layers draw from a generator seeded with its ``seed``; ``kept`` (1 where a unit
    is kept) is there for the report, the layers draw their own."""
    shapes = ladder(seed, [(1, 4), (2, 3), (3, 4), (4, 5)])
    rng = np.random.default_rng(seed)
    found = []
    for i, (n, d) in enumerate(shapes):
        inputs = {**draw(rng, x=(n, d), dout=(n, d)), "seed": 1000 * seed + i}
        found.append(Case(f"N={n}, D={d}, p={P}", n * d, {**inputs, "kept": _kept(Case("", 0, inputs)) * 1.0}))
    return found


EXERCISE = layer_exercise(
    "dropout", "out = x * mask / (1 - p): write dx", "Dropout",
    cases=cases, core=lambda case: _SameMaskDropout(P, case["seed"]),
    build=lambda cls, case, call: call("Dropout(...)", lambda: cls(P, rng=np.random.default_rng(case["seed"]))),
    mistakes=(
        predicting("mask_not_applied", "dx", "dx is not masked: a dropped unit passed nothing on in the forward, "
                   "so it gets no gradient; multiply by the mask as well as by 1 / (1 - p)", LOOK_DX,
                   lambda c: c["dout"] / (1 - P)),
        predicting("mask_not_applied", "dx", "dx is dout itself: neither the mask nor the 1 / (1 - p) of the "
                   "forward reach the gradient", LOOK_DX, lambda c: c["dout"]),
        predicting("not_rescaled", "dx", "dx is masked but not rescaled: the forward multiplies the kept units "
                   "by 1 / (1 - p), so their gradient is multiplied by it too", LOOK_DX,
                   lambda c: c["dout"] * _kept(c)),
        wrong_sign("dx", LOOK_DX),
    ),
    hints=(
        "For a fixed mask the forward is linear in x, entry by entry: out[n, d] = x[n, d] * m[n, d] with "
        "m = mask / (1 - p). What is d out[n, d] / d x[n, d]?",
        "A dropped unit (mask False) contributes nothing, so its gradient is 0; a kept one is scaled by "
        "1 / (1 - p) in both directions.",
        "return dout * self.mask / (1 - self.p), with the mask forward cached (do not draw a new one).",
    ),
)
