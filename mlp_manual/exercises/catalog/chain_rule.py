"""The chain rule on three numbers: L = (a*b + c)^2 at a = 2, b = -3, c = 10, through d = a*b
and e = d + c; the student writes the six gradients. Each is judged from the student's own
gradient of the step after it (``local``), so one mistake is named where it is made."""

import numpy as np

from ..exercise import Case, Exercise, Mistake
from ..student import WrongAnswer, as_tensor
from .mistakes import wrong_sign

TENSORS = ("dL", "de", "dd", "dc", "da", "db")
EPS = 1e-6


def cases(seed: int) -> list[Case]:
    rng = np.random.default_rng([seed, 2])
    points = [(2.0, -3.0, 10.0)] + [tuple(float(v) for v in np.round(rng.uniform(-4, 4, 3), 2)) for _ in range(3)]
    return [Case(f"a={a:g}, b={b:g}, c={c:g}", i, {"a": a, "b": b, "c": c}) for i, (a, b, c) in enumerate(points)]


def _forward(case: Case) -> dict:
    a, b, c = case["a"], case["b"], case["c"]
    return {"a": a, "b": b, "c": c, "d": a * b, "e": a * b + c}


def local(case: Case, yours: dict) -> dict:
    """Each gradient from the one before it as given: the reference when ``yours`` is."""
    v = _forward(case)
    steps = {"dL": 1.0, "de": 2 * v["e"] * yours["dL"], "dd": yours["de"], "dc": yours["de"],
             "da": v["b"] * yours["dd"], "db": v["a"] * yours["dd"]}
    return {k: np.asarray(s, dtype=np.float64) for k, s in steps.items()}


def reference(case: Case) -> dict:
    v = _forward(case)
    de = 2 * v["e"]
    return {k: np.asarray(g, dtype=np.float64)
            for k, g in zip(TENSORS, (1.0, de, de, de, v["b"] * de, v["a"] * de))}


def numeric(case: Case) -> dict:
    """Central differences: L as a function of each value, the others held."""
    v = _forward(case)
    of = {"dL": lambda t: t, "de": lambda t: t**2, "dd": lambda t: (t + v["c"]) ** 2,
          "dc": lambda t: (v["d"] + t) ** 2, "da": lambda t: (t * v["b"] + v["c"]) ** 2,
          "db": lambda t: (v["a"] * t + v["c"]) ** 2}
    at = {"dL": (v["e"]) ** 2, "de": v["e"], "dd": v["d"], "dc": v["c"], "da": v["a"], "db": v["b"]}
    return {k: np.asarray((of[k](at[k] + EPS) - of[k](at[k] - EPS)) / (2 * EPS)) for k in TENSORS}


def run(fn, case: Case, call) -> dict:
    found = call("chain_rule", fn, case["a"], case["b"], case["c"])
    if not isinstance(found, dict):
        raise WrongAnswer(f"chain_rule returned a {type(found).__name__}, not a dict of the six gradients")
    missing = [k for k in TENSORS if k not in found]
    if missing:
        raise WrongAnswer(f"chain_rule's dict has no {', '.join(missing)}: it needs {', '.join(TENSORS)}")
    return {k: as_tensor(found[k], k) for k in TENSORS}


def _mistake(key, tensor, says, look, fn):
    return Mistake(key, tensor, says, look, lambda case, up: np.asarray(fn(_forward(case), up), dtype=np.float64))


LOOK_DE = "the line de = ...: L = e**2, so de = 2 * e * dL"
LOOK_PRODUCT = "d = a*b: the local gradient with respect to a is the OTHER factor, b (and a for b)"
EXERCISE = Exercise(
    "chain_rule", "L = (a*b + c)^2 at a = 2, b = -3, c = 10: the six gradients by hand", "chain_rule",
    TENSORS, cases, reference, run, numeric=numeric, local=local,
    mistakes=(
        _mistake("seed_not_one", "dL", "dL is not 1: the backward pass starts from dL/dL = 1", "dL", lambda v, up: 0.0),
        _mistake("missing_2", "de", "de misses the 2 of e**2: the derivative of e**2 is 2e", LOOK_DE,
                 lambda v, up: v["e"] * up["dL"]),
        _mistake("squared_not_derived", "de", "de is e**2, the value of L, not its derivative 2e", LOOK_DE,
                 lambda v, up: v["e"] ** 2 * up["dL"]),
        wrong_sign("de", LOOK_DE),
        _mistake("sum_local_gradient", "dd", "dd takes a value of the sum as its local gradient; a sum passes the "
                 "gradient on unchanged (local gradient 1)", "the line dd = ...: e = d + c, so dd = 1 * de", lambda v, up: v["c"] * up["de"]),
        _mistake("missing_upstream", "dc", "dc is the local gradient 1 alone: it must be multiplied by the "
                 "upstream gradient de", "the line dc = ...: dc = 1 * de", lambda v, up: 1.0),
        _mistake("missing_upstream", "dd", "dd is the local gradient 1 alone: it must be multiplied by the "
                 "upstream gradient de", "the line dd = ...: dd = 1 * de", lambda v, up: 1.0),
        _mistake("product_local_swapped", "da", "da uses a itself as the local gradient of a*b; with respect to a "
                 "it is the other factor, b", LOOK_PRODUCT, lambda v, up: v["a"] * up["dd"]),
        _mistake("missing_upstream", "da", "da is the local gradient b alone: the chain rule multiplies it by the "
                 "upstream gradient dd", "the line da = ...: da = b * dd", lambda v, up: v["b"]),
        wrong_sign("da", "the line da = ...: da = b * dd"),
        _mistake("product_local_swapped", "db", "db uses b itself as the local gradient of a*b; with respect to b "
                 "it is the other factor, a", LOOK_PRODUCT, lambda v, up: v["b"] * up["dd"]),
        _mistake("missing_upstream", "db", "db is the local gradient a alone: the chain rule multiplies it by the "
                 "upstream gradient dd", "the line db = ...: db = a * dd", lambda v, up: v["a"]),
    ),
    hints=(
        "Go backwards one step at a time: dL = 1, then de from L = e**2, then dd and dc from e = d + c, "
        "then da and db from d = a*b.",
        "Each gradient is (local gradient) x (gradient of the step's output): de = 2*e * dL; a sum has local "
        "gradient 1, so dd = dc = de.",
        "For a product d = a*b, the local gradient with respect to a is b: da = b * dd = -3 * 8 = -24, "
        "db = a * dd = 2 * 8 = 16.",
    ),
)
