"""What the layer exercises share: a student's class is built, given the reference's parameters,
run forward on ``x`` and backward on a random upstream gradient ``dout`` (twice, as a trainer
calls it once a step: the second call's gradients are the ones judged, so a ``+=`` into
``self.grads`` shows); its output, its
``dx`` and each parameter's gradient are compared with the core layer's and with central
differences of sum(out * dout).

Case inputs: ``x`` (N, D) and ``dout`` (N, H), and one array per parameter (``W``, ``b``,
``gamma``, ...), named as in the layer's ``params``.
"""

import numpy as np

from ...gradcheck.numgrad import numerical_gradient
from ..exercise import Case, Exercise
from ..student import WrongAnswer, as_tensor

EPS = 1e-6


def layer_exercise(name: str, title: str, entry: str, *, cases, core, build, params=(), **more) -> Exercise:
    """An Exercise on a layer class ``entry``: ``core(case)`` makes the core layer, ``build(cls,
    case, call)`` the student's (both before their parameters are set from the case); ``params``
    names the parameters; ``more``: the Exercise's mistakes, hints, layer."""
    return _exercise(name, title, entry, cases, (core, build), params, True, more)


def index_layer_exercise(name: str, title: str, entry: str, *, cases, core, build, params=(), **more) -> Exercise:
    """``layer_exercise`` for a layer whose ``x`` holds integer indices (the embedding): x has no
    gradient, so backward's return is not compared and there is no ``dx``."""
    return _exercise(name, title, entry, cases, (core, build), params, False, more)


def _exercise(name, title, entry, cases, layers, params, with_dx: bool, more: dict) -> Exercise:
    core, build = layers
    tensors = ("out",) + ("dx",) * with_dx + tuple(f"d{k}" for k in params)

    def reference(case: Case) -> dict:
        layer = _with_params(core(case), case, params)
        out = layer.forward(case["x"].copy())
        dx = layer.backward(case["dout"].copy())
        return {"out": out, **({"dx": dx} if with_dx else {}), **{f"d{k}": layer.grads[k] for k in params}}

    def numeric(case: Case) -> dict:
        layer = _with_params(core(case), case, params)
        x = case["x"].copy()
        found = {"dx": numerical_gradient(lambda: _forward(layer, x), x, case["dout"], eps=EPS)} if with_dx else {}
        for k in params:
            found[f"d{k}"] = numerical_gradient(lambda: _forward(layer, x), layer.params[k], case["dout"], eps=EPS)
        return found

    def run(cls, case: Case, call) -> dict:
        layer = build(cls, case, call)
        for k in params:
            if not isinstance(getattr(layer, "params", None), dict):
                return _no_params(entry)
            layer.params[k] = case[k].copy()
        out = as_tensor(call(f"{entry}.forward", layer.forward, case["x"].copy()), f"{entry}.forward's return")
        call(f"{entry}.backward", layer.backward, case["dout"].copy())
        # a trainer calls backward once a step on the same layer: its second call must give the same
        dx = call(f"{entry}.backward (called a second time)", layer.backward, case["dout"].copy())
        dx = {"dx": as_tensor(dx, f"{entry}.backward's return (dx)")} if with_dx else {}
        grads = getattr(layer, "grads", {})
        if not isinstance(grads, dict):
            raise WrongAnswer(f"self.grads is a {type(grads).__name__}, not a dict keyed like self.params "
                              f"({', '.join(params)})")
        return {"out": out, **dx, **{f"d{k}": as_tensor(grads.get(k), f'self.grads["{k}"]') for k in params}}

    return Exercise(name, title, entry, tensors, cases, reference, run, numeric=numeric, **more)


def _with_params(layer, case: Case, params):
    for k in params:
        layer.params[k] = case[k].copy()
    return layer


def _forward(layer, x):
    # a stochastic layer (dropout) keeps the mask its case fixed: forward must not draw again
    return layer.forward(x)


def _no_params(entry: str):
    raise WrongAnswer(f"{entry} has no params dict: call super().__init__() first in its __init__")


def draw(rng: np.random.Generator, **shapes) -> dict:
    """Standard normal float64 arrays of the given shapes, drawn in the order given."""
    return {k: rng.standard_normal(s) for k, s in shapes.items()}


def ladder(seed: int, fixed: list[tuple], random_count: int = 2, high: int = 7) -> list[tuple]:
    """The fixed shapes (smallest first), then ``random_count`` shapes of the same length drawn
    from ``seed`` with every size in 1..high."""
    rng = np.random.default_rng([seed, 1])
    width = len(fixed[0])
    return list(fixed) + [tuple(int(v) for v in rng.integers(1, high + 1, size=width)) for _ in range(random_count)]
