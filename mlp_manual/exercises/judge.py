"""Judging a student's answer: each tensor against the core's (exact, close, or the largest
difference) and against central differences, the smallest case where a wrong tensor shows, and
the classic mistake it matches.

A mistake is named only when it explains the student's tensor on every case: where the mistake
changes the answer the student's tensor equals the mistake's, and where it does not the student's
equals the reference. A correct answer therefore never has a mistake named, and one mistake
mixed with another is left unnamed rather than misnamed.

An exercise that is a chain of steps (``Exercise.local``) is judged step by step as well: a
tensor that is right when computed from the student's own earlier tensors is wrong only through
them, and is reported as such, never named; a mistake is matched against what its own step
should have given from the student's earlier tensors.
"""

from dataclasses import dataclass, field

import numpy as np

from .exercise import Case, Exercise, Mistake

RTOL_CORE = 1e-7  # float64 against float64: the same math in another order differs by ~1e-15
RTOL_NUMERIC = 1e-5  # central differences in float64 are good to ~1e-9 on these small inputs


@dataclass(frozen=True)
class Comparison:
    """``kind``: "exact", "close", "differs", "shape" or "nonfinite"; ``text`` says it in words."""

    kind: str
    text: str
    largest: float = 0.0  # the largest absolute difference, where the shapes agree

    @property
    def ok(self) -> bool:
        return self.kind in ("exact", "close")


@dataclass(frozen=True)
class TensorRow:
    name: str
    shape: tuple
    vs_core: Comparison
    vs_numeric: Comparison | None


@dataclass(frozen=True)
class Finding:
    """A wrong tensor: the smallest ``case`` where it shows, the student's and the expected values
    there, and the ``mistake`` it matches (None when none does); ``inherited``: right when
    computed from the student's own earlier tensors (``Exercise.local``), so wrong only through them."""

    tensor: str
    case: Case
    yours: np.ndarray
    expected: np.ndarray
    comparison: Comparison
    mistake: Mistake | None
    inherited: bool = False


@dataclass
class Report:
    """The verdict on one exercise. ``problem``: what stopped the check before every tensor could
    be compared (the code raised, hung, returned something that is no tensor, is not written)."""

    exercise: Exercise
    rows: list[TensorRow] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    problem: str | None = None
    problem_case: Case | None = None
    cases: int = 0
    checked: str | None = None  # the SHA-256 of the student's file as checked, when it was a file
    printed: str = ""  # what the student's code printed: how many lines, the first ones

    @property
    def passed(self) -> bool:
        return self.problem is None and not self.findings and bool(self.rows)

    @property
    def named(self) -> list[str]:
        """The keys of the mistakes named, in the order of the tensors."""
        return [f.mistake.key for f in self.findings if f.mistake is not None]

    def __str__(self) -> str:
        from .report import text
        return text(self)

    def __repr__(self) -> str:  # what a notebook shows as text/plain and a console echoes: the verdict
        return str(self)

    def _repr_html_(self) -> str:
        from .report import html
        return html(self)


def compare(yours: np.ndarray, expected: np.ndarray, rtol: float) -> Comparison:
    """How ``yours`` stands against ``expected``."""
    if yours.shape != expected.shape:
        return Comparison("shape", f"shape {shape_text(yours.shape)}, expected {shape_text(expected.shape)}")
    bad = ~np.isfinite(yours)
    if bad.any():
        what = "NaN" if np.isnan(yours).any() else "inf"
        return Comparison("nonfinite", f"{what} in {int(bad.sum())} of {yours.size} entries")
    if np.array_equal(yours, expected):
        return Comparison("exact", "exact")
    diff = np.abs(yours - expected)
    scale = float(np.abs(expected).max(initial=0.0))
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else ()
    largest = float(diff.max(initial=0.0))
    if largest <= rtol * scale + 1e-12:
        return Comparison("close", f"close (largest difference {largest:.1e})", largest)
    at = f" at {list(map(int, worst))}" if len(worst) else ""
    return Comparison("differs", f"largest difference {largest:.3g}{at}", largest)


def shape_text(shape) -> str:
    """``(3, 4)``, ``(4,)``: a shape as numpy writes it."""
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def rows_of(ex: Exercise, runs: list[tuple[Case, dict, dict, dict | None]]) -> list[TensorRow]:
    """One row per tensor over the cases run: the worst comparison with the core and with
    central differences (``runs``: (case, yours, expected, numeric) of each case)."""
    rows = []
    for name in ex.tensors:
        core = [compare(y[name], e[name], RTOL_CORE) for _, y, e, _ in runs]
        numeric = [compare(y[name], n[name], RTOL_NUMERIC) for _, y, _, n in runs if n and name in n]
        shape = runs[-1][2][name].shape
        rows.append(TensorRow(name, shape, _worst(core), _worst(numeric) if numeric else None))
    return rows


def _worst(comparisons: list[Comparison]) -> Comparison:
    order = {"exact": 0, "close": 1, "differs": 2, "nonfinite": 3, "shape": 4}
    # the most severe; among equals the last, on the largest case, as the table's shape column
    worst = max(reversed(comparisons), key=lambda c: order[c.kind])
    if worst.kind == "close":  # the largest difference over every case
        return max((c for c in comparisons if c.kind == "close"), key=lambda c: c.largest)
    return worst


def findings_of(ex: Exercise, runs: list[tuple[Case, dict, dict, dict | None]]) -> list[Finding]:
    """A finding for each wrong tensor, at the smallest case where it shows."""
    steps = [ex.local(c, y) for c, y, _, _ in runs] if ex.local else None
    found = []
    for name in ex.tensors:
        wrong = [(c, y[name], e[name]) for c, y, e, _ in runs if not compare(y[name], e[name], RTOL_CORE).ok]
        if not wrong:
            continue
        case, yours, expected = min(wrong, key=lambda w: w[0].size)
        judged, inherited = runs, False
        if steps is not None:
            inherited = all(compare(y[name], s[name], RTOL_CORE).ok for (_, y, _, _), s in zip(runs, steps))
            judged = [(c, y, {**s, **y, name: s[name]}, n) for (c, y, _, n), s in zip(runs, steps)]
        found.append(Finding(name, case, yours, expected, compare(yours, expected, RTOL_CORE),
                             None if inherited else match_mistake(ex, name, judged), inherited))
    return found


def match_mistake(ex: Exercise, name: str, runs) -> Mistake | None:
    """The first of the exercise's mistakes on tensor ``name`` that explains the student's
    tensor on every case and changes the answer on at least one."""
    for mistake in (m for m in ex.mistakes if m.tensor == name):
        shows = 0
        for case, yours, expected, _ in runs:
            predicted = mistake.predict(case, expected)
            if predicted is None:  # the mistake cannot be told here: the answer must be right here
                if not compare(yours[name], expected[name], RTOL_CORE).ok:
                    break
                continue
            predicted = np.asarray(predicted, dtype=np.float64)
            if not _same(yours[name], predicted):
                break
            shows += not compare(predicted, expected[name], RTOL_CORE).ok
        else:
            if shows:
                return mistake
    return None


def _same(yours: np.ndarray, predicted: np.ndarray) -> bool:
    """Whether ``yours`` is what a mistake predicts: close, with any inf or NaN at the same places
    (a mistake that divides by zero makes them too)."""
    if yours.shape != predicted.shape:
        return False
    finite = np.isfinite(predicted)
    if not np.array_equal(finite, np.isfinite(yours)) or not np.array_equal(yours[~finite], predicted[~finite],
                                                                            equal_nan=True):
        return False
    return compare(yours[finite], predicted[finite], RTOL_CORE).ok
