"""A scalar Value node with its backward closures (micrograd): the student writes the closures
of +, * and tanh; each case builds one expression of the leaves a, b, c with the student's
Value, runs its backward, and compares the leaves' grads with the exact derivatives and with
central differences. A mistake is told by running the same expression through the reference
Value with mistaken closures (``_Mistaken``): the grads they give."""

import math

import numpy as np

from ..exercise import Case, Exercise, Mistake
from ..solutions.value import Value
from ..student import WrongAnswer, as_tensor

EPS = 1e-6
EXPRESSIONS = [  # (text, the expression of a, b, c in any Value type, dL/da, dL/db, dL/dc)
    ("a * b", lambda a, b, c: a * b, lambda a, b, c: (b, a, 0.0)),
    ("a + a", lambda a, b, c: a + a, lambda a, b, c: (2.0, 0.0, 0.0)),
    ("a * a", lambda a, b, c: a * a, lambda a, b, c: (2 * a, 0.0, 0.0)),
    ("a * b + c", lambda a, b, c: a * b + c, lambda a, b, c: (b, a, 1.0)),
    ("tanh(a * b + c)", lambda a, b, c: (a * b + c).tanh(),
     lambda a, b, c: (b * (1 - math.tanh(a * b + c) ** 2), a * (1 - math.tanh(a * b + c) ** 2),
                      1 - math.tanh(a * b + c) ** 2)),
    ("tanh(a) * a + b", lambda a, b, c: a.tanh() * a + b,
     lambda a, b, c: (math.tanh(a) + a * (1 - math.tanh(a) ** 2), 1.0, 0.0)),
    ("(a * b + a) * c", lambda a, b, c: (a * b + a) * c, lambda a, b, c: ((b + 1) * c, a * c, a * b + a)),
]


class _Float(float):
    """A float with .tanh(), for central differences through the same expressions."""

    def tanh(self):
        return _Float(math.tanh(self))

    def __add__(self, o):
        return _Float(float(self) + o)

    def __mul__(self, o):
        return _Float(float(self) * o)

    __radd__, __rmul__ = __add__, __mul__


def cases(seed: int) -> list[Case]:
    rng = np.random.default_rng([seed, 4])
    found = []
    for i, (text, _, _) in enumerate(EXPRESSIONS):
        a, b, c = (2.0, -3.0, 10.0) if i == 0 and seed == 0 else (float(v) for v in np.round(rng.uniform(-2, 2, 3), 3))
        found.append(Case(f"{text} at a={a:g}, b={b:g}, c={c:g}", i, {"a": a, "b": b, "c": c, "expression": i}))
    return found


def reference(case: Case) -> dict:
    grads = EXPRESSIONS[case["expression"]][2](case["a"], case["b"], case["c"])
    return {"grads": np.array(grads, dtype=np.float64)}


def numeric(case: Case) -> dict:
    f, at = EXPRESSIONS[case["expression"]][1], [case["a"], case["b"], case["c"]]

    def moved(i, by):
        return float(f(*[_Float(v + (by if j == i else 0.0)) for j, v in enumerate(at)]))
    return {"grads": np.array([(moved(i, EPS) - moved(i, -EPS)) / (2 * EPS) for i in range(3)])}


def run(cls, case: Case, call) -> dict:
    leaves = [call("Value(...)", cls, case[k]) for k in "abc"]
    out = call(f"building {EXPRESSIONS[case['expression']][0]}", EXPRESSIONS[case["expression"]][1], *leaves)
    if not hasattr(out, "backward"):
        raise WrongAnswer(f"{EXPRESSIONS[case['expression']][0]} gave a {type(out).__name__}, not a Value")
    call("Value.backward", out.backward)
    return {"grads": as_tensor([getattr(v, "grad", None) for v in leaves], "the grads of a, b, c")}


class _Mistaken(Value):
    """The reference Value, its closures making the mistakes named in ``wrong``: "assign_add",
    "assign_mul", "assign_tanh" (= for +=), "mul_swapped", "tanh_input", "no_upstream_mul",
    "no_upstream_tanh"."""

    def __init__(self, data, wrong, prev=()):
        super().__init__(data, prev)
        self.wrong = wrong

    def _give(self, v, amount, how):
        v.grad = amount if how in self.wrong else v.grad + amount

    def __add__(self, o):
        out = _Mistaken(self.data + o.data, self.wrong, (self, o))
        out._backward = lambda: (self._give(self, out.grad, "assign_add"), self._give(o, out.grad, "assign_add"))
        return out

    def __mul__(self, o):
        out = _Mistaken(self.data * o.data, self.wrong, (self, o))
        up = (lambda: 1.0) if "no_upstream_mul" in self.wrong else (lambda: out.grad)
        mine, theirs = (self.data, o.data) if "mul_swapped" in self.wrong else (o.data, self.data)
        out._backward = lambda: (self._give(self, mine * up(), "assign_mul"),
                                 self._give(o, theirs * up(), "assign_mul"))
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = _Mistaken(t, self.wrong, (self,))
        local = 1 - (self.data if "tanh_input" in self.wrong else t) ** 2
        out._backward = lambda: self._give(self, local * (1.0 if "no_upstream_tanh" in self.wrong else out.grad),
                                           "assign_tanh")
        return out


def _mistake(key: str, wrong: set, says: str, look: str) -> Mistake:
    def predict(case, expected):
        leaves = [_Mistaken(case[k], wrong) for k in "abc"]
        EXPRESSIONS[case["expression"]][1](*leaves).backward()
        return np.array([v.grad for v in leaves])
    return Mistake(key, "grads", says, look, predict)


ASSIGN = "a Value used twice (a + a, or a by two Values) must get the SUM of both gradients: `+=`, never `=`"
EXERCISE = Exercise(
    "value", "a scalar Value with backward closures for +, * and tanh (micrograd)", "Value", ("grads",),
    cases, reference, run, numeric=numeric,
    mistakes=(
        _mistake("assign_not_accumulate", {"assign_add", "assign_mul", "assign_tanh"},
                 "the closures assign the gradient (`=`) where it must accumulate (`+=`): a Value used twice "
                 "keeps only its last use's gradient", ASSIGN),
        _mistake("assign_not_accumulate", {"assign_add"}, "__add__'s closure assigns (`=`) where it must accumulate "
                 "(`+=`): a + a gets 1, not 2", ASSIGN),
        _mistake("assign_not_accumulate", {"assign_mul"}, "__mul__'s closure assigns (`=`) where it must accumulate "
                 "(`+=`): a * a gets a, not 2a", ASSIGN),
        _mistake("mul_local_swapped", {"mul_swapped"}, "__mul__ gives each factor its own data as local gradient; "
                 "the local gradient of a*b with respect to a is the OTHER factor, b",
                 "__mul__'s closure: self.grad += other.data * out.grad, other.grad += self.data * out.grad"),
        _mistake("tanh_derivative_of_input", {"tanh_input"}, "tanh's derivative is taken from its input: 1 - x**2, "
                 "where it is 1 - t**2 with t = tanh(x), the output", "tanh's closure: (1 - t**2) * out.grad"),
        _mistake("missing_upstream", {"no_upstream_mul"}, "__mul__'s closure leaves out out.grad: the local "
                 "gradient must be multiplied by the gradient flowing back", "__mul__'s closure: ... * out.grad"),
        _mistake("missing_upstream", {"no_upstream_tanh"}, "tanh's closure leaves out out.grad: the local gradient "
                 "must be multiplied by the gradient flowing back", "tanh's closure: ... * out.grad"),
    ),
    hints=(
        "Each closure does: input.grad += (d out / d input) * out.grad, for each input of the operation.",
        "d(a + b)/da = 1; d(a * b)/da = b.data; d tanh(a)/da = 1 - tanh(a)**2 = 1 - t**2 with t = out.data.",
        "self.grad += other.data * out.grad; other.grad += self.data * out.grad (and += 1.0 * out.grad for +).",
    ),
)
