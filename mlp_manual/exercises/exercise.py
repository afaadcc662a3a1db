"""What an exercise declares: the cases it is checked on, the reference answer, the student's
answer on the same case, and the classic mistakes it can name.

An exercise is checked tensor by tensor. For every case (smallest first) the student's code and
the reference (the core's own implementation) run on the same float64 inputs; each tensor the
exercise names (``out``, ``dx``, ``dW``, ...) is compared with the reference and, where the
exercise gives them, with float64 central differences.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Case:
    """One input the code is run on: ``label`` says it in a few words (``N=1, D=2, H=3``),
    ``size`` orders the cases (the smallest input where a mistake shows is the first one),
    ``inputs`` holds the float64 arrays (or numbers) both sides receive."""

    label: str
    size: int
    inputs: dict = field(default_factory=dict)

    def __getitem__(self, key: str):
        return self.inputs[key]


@dataclass(frozen=True)
class Mistake:
    """A classic mistake, told by what it does to one tensor: ``predict(case, expected)`` gives
    the tensor the mistaken code would return on ``case`` (``expected``: the reference's tensors
    there), or None where the mistake cannot be told on that case. ``says`` names it as a
    teacher would; ``look`` says where to look."""

    key: str
    tensor: str
    says: str
    look: str
    predict: Callable[[Case, dict], np.ndarray | None]


@dataclass(frozen=True)
class Exercise:
    """One exercise.

    ``name``, ``title``: its command-line name and one line; ``entry``: the name the student
    writes (a class or a function) in the file ``name + ".py"``; ``tensors``: what is compared,
    in the order shown; ``cases(seed)``: the cases, smallest first; ``reference(case)`` and
    ``numeric(case)`` (or None): the expected tensors, by the core and by central differences;
    ``run(entry, case, call)``: the student's tensors, calling their code through
    ``call(what, fn, *args)``; ``mistakes``: what it can name; ``hints``: one more each time;
    ``layer``: the core layer type the student's class replaces in ``check --train``, if any;
    ``local(case, yours)`` (or None), for an exercise whose tensors are the steps of one chain:
    each tensor as computed from the student's OWN earlier tensors, so that every step is judged
    alone, a tensor wrong only through an earlier one is not blamed, and each mistake is matched
    against what its own step should have given."""

    name: str
    title: str
    entry: str
    tensors: tuple[str, ...]
    cases: Callable[[int], list[Case]]
    reference: Callable[[Case], dict]
    run: Callable
    numeric: Callable[[Case], dict] | None = None
    mistakes: tuple[Mistake, ...] = ()
    hints: tuple[str, ...] = ()
    layer: str | None = None
    local: Callable[[Case, dict], dict] | None = None

    @property
    def file(self) -> str:
        return f"{self.name}.py"
