"""One Adam step: the student writes the moments, the bias correction and the update; the
reference is the core's Adam (core/optimizers.py) stepped once from the case's state.
There is no gradient to take differences of: the core is the only reference."""

import numpy as np

from ...core import Adam
from ..exercise import Case, Exercise, Mistake
from ..student import WrongAnswer, as_tensor
from .mistakes import predicting

LR, B1, B2, EPS = 0.01, 0.9, 0.999, 1e-8
LOOK_P = "p = p - lr * m_hat / (sqrt(v_hat) + eps), with m_hat = m / (1 - beta1**t), v_hat = v / (1 - beta2**t)"


def cases(seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    steps = [(1, 1, True), (2, 2, False), (3, 1, True), (4, 5, False), (6, 100, False), (2, 3, False)]
    steps += [(int(rng.integers(1, 9)), int(rng.integers(2, 50)), False) for _ in range(2)]
    found = []
    for size, t, fresh in steps:
        tiny = size == 2 and t == 3  # gradients of the size of eps, where eps's place in the formula shows
        scale = 1e-8 if tiny else 1.0
        state = {"p": rng.standard_normal(size), "g": scale * rng.standard_normal(size)}
        state["m"] = np.zeros(size) if fresh else 0.1 * scale * rng.standard_normal(size)
        state["v"] = np.zeros(size) if fresh else 0.1 * scale**2 * rng.random(size)
        found.append(Case(f"{size} entr{'y' if size == 1 else 'ies'}, step t={t}", size * 10 + t, {**state, "t": t}))
    return found


def reference(case: Case) -> dict:
    adam = Adam(beta1=B1, beta2=B2, eps=EPS)
    adam.state.update(t=case["t"] - 1, m={"p": case["m"].copy()}, v={"p": case["v"].copy()})
    p = case["p"].copy()
    adam.step([("p", p, case["g"].copy())], LR)
    return {"m": adam.state["m"]["p"], "v": adam.state["v"]["p"], "p": p}


def run(fn, case: Case, call) -> dict:
    args = [case[k].copy() for k in ("p", "g", "m", "v")]
    found = call("adam_step", fn, *args, case["t"], LR, (B1, B2), EPS)
    if not isinstance(found, (tuple, list)) or len(found) != 3:
        raise WrongAnswer(f"adam_step returned {type(found).__name__}, not the triple (p, m, v)")
    return {k: as_tensor(a, k) for k, a in zip(("p", "m", "v"), found)}


def local(case: Case, yours: dict) -> dict:
    """p from the student's own m and v; m and v as the reference has them."""
    return {**reference(case), "p": _p(case, yours)}


def _p(c, up, correct1=True, correct2=True, t=None, eps_inside=False):
    """The new p from the moments ``up["m"]``, ``up["v"]``, the update made as the flags say."""
    m, v = up["m"], up["v"]
    t = c["t"] if t is None else t
    m_hat = m / (1 - B1**t) if correct1 else m
    v_hat = v / (1 - B2**t) if correct2 else v
    return c["p"] - LR * m_hat / (np.sqrt(v_hat + EPS) if eps_inside else np.sqrt(v_hat) + EPS)


EXERCISE = Exercise(
    "adam", "one Adam step: the moments, the bias correction, the update", "adam_step", ("m", "v", "p"),
    cases, reference, run, local=local,
    mistakes=(
        predicting("v_from_g", "v", "v averages g where it must average g**2, the squared gradient",
                   "v = beta2 * v + (1 - beta2) * g**2", lambda c: B2 * c["v"] + (1 - B2) * c["g"]),
        Mistake("no_bias_correction", "p", "Adam without its bias correction: m and v are used as they are, "
                "too small in the first steps by (1 - beta**t)", LOOK_P, lambda c, up: _p(c, up, False, False)),
        Mistake("m_not_corrected", "p", "only v is bias-corrected: m_hat = m / (1 - beta1**t) is missing",
                LOOK_P, lambda c, up: _p(c, up, correct1=False)),
        Mistake("v_not_corrected", "p", "only m is bias-corrected: v_hat = v / (1 - beta2**t) is missing",
                LOOK_P, lambda c, up: _p(c, up, correct2=False)),
        Mistake("step_off_by_one", "p", "the bias correction counts steps from 0: t is 1 at the first step, "
                "so the correction uses beta**t, not beta**(t - 1)", LOOK_P,
                lambda c, up: _p(c, up, t=c["t"] - 1)),
        Mistake("step_plus_one", "p", "the bias correction uses beta**(t + 1): t is already the step number",
                LOOK_P, lambda c, up: _p(c, up, t=c["t"] + 1)),
        Mistake("eps_inside_sqrt", "p", "eps is added under the square root; Adam adds it after: "
                "sqrt(v_hat) + eps", LOOK_P, lambda c, up: _p(c, up, eps_inside=True)),
        Mistake("wrong_sign", "p", "p moves with the gradient: the step has the wrong sign", "p = p - lr * ...: a step "
                "goes against the gradient", lambda c, up: 2 * c["p"] - _p(c, up)),
    ),
    hints=(
        "Update the two running means first, from g and from g**2; then correct each for starting at 0.",
        "m_hat = m / (1 - beta1**t) and v_hat = v / (1 - beta2**t), with t the step number (1 at the first step).",
        "p = p - lr * m_hat / (np.sqrt(v_hat) + eps)",
    ),
)
