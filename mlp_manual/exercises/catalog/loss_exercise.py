"""What the loss exercises share: the student's function ``f(pred, y) -> (loss, dpred)`` runs on
the case's ``pred`` and ``y``; both the loss and its gradient are compared with the core's
function and with central differences of the loss.

Case inputs: the model's output (N, K) float64, named as the exercise says (``pred``, ``logits``),
and ``y`` (the targets the loss takes).
"""

import numpy as np

from ...gradcheck.numgrad import numerical_gradient
from ..exercise import Case, Exercise
from ..student import WrongAnswer, as_tensor

EPS = 1e-6


def loss_exercise(name: str, title: str, entry: str, *, cases, core, x: str = "pred", **more) -> Exercise:
    """An Exercise on a loss function ``entry``, checked against ``core(x, y)``; ``x`` names the
    model's output in the cases ("pred", "logits"), the gradient tensor is "d" + x; ``more``:
    mistakes, hints."""
    grad = f"d{x}"
    tensors = ("loss", grad)

    def reference(case: Case) -> dict:
        loss, g = core(case[x].copy(), case["y"].copy())
        return {"loss": np.asarray(loss, dtype=np.float64), grad: g}

    def numeric(case: Case) -> dict:
        pred = case[x].copy()
        return {grad: numerical_gradient(lambda: core(pred, case["y"])[0], pred, eps=EPS)}

    def run(fn, case: Case, call) -> dict:
        found = call(entry, fn, case[x].copy(), case["y"].copy())
        if not isinstance(found, (tuple, list)) or len(found) != 2:
            raise WrongAnswer(f"{entry} returned {type(found).__name__}, not the pair (loss, {grad})")
        return {"loss": as_tensor(found[0], "the loss"), grad: as_tensor(found[1], grad)}

    return Exercise(name, title, entry, tensors, cases, reference, run, numeric=numeric, **more)


def shapes(seed: int, fixed: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The fixed (N, K), then two drawn from ``seed`` (N in 1..8, K in 2..6)."""
    rng = np.random.default_rng([seed, 3])
    return list(fixed) + [(int(rng.integers(1, 9)), int(rng.integers(2, 7))) for _ in range(2)]
