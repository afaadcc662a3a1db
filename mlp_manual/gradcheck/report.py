"""What a gradient check found: one row per tensor, the structural checks, a table and a dict.

Verdicts, from best to worst:
- PASS: every checked entry has relative error at most ``tol`` (1e-7 by default);
- KINK: passes, except entries whose perturbation crossed a non-differentiable point, where
  the analytic value lies between the two one-sided difference quotients (a valid subgradient);
- WARN: the worst relative error is between ``tol`` and ``warn`` (1e-4): suspicious, not proof;
- FAIL: an entry (or the directional check) is off by more than ``warn``, or the gradient is
  missing, misshapen or not finite.

An input of integer indices (an embedding's) has no gradient: its row is N/A, which passes.
"""

from dataclasses import asdict, dataclass, field

import numpy as np


@dataclass
class TensorRow:
    """The comparison of one analytic gradient with its numerical reference."""

    name: str  # "dx", "W", "layers.2.W", "dlogits"
    shape: tuple[int, ...]
    checked: int  # entries compared one by one
    max_abs: float  # over checked entries, kinks excluded
    max_rel: float
    worst: tuple[int, ...] | None  # index of max_rel
    verdict: str
    kinks: int = 0
    directional: float | None = None  # relative error of g^T J u, when entries were sampled
    note: str = ""

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def describe(self) -> str:
        """The note column: sampling, kinks, and whatever else explains the verdict."""
        parts = []
        if self.checked < self.size and self.verdict != NOT_DIFFERENTIABLE:
            parts.append(f"sampled {self.checked}/{self.size}, directional {_num(self.directional)}")
        if self.kinks:
            parts.append(f"{self.kinks} kink{'s' if self.kinks > 1 else ''}")
        if self.note:
            parts.append(self.note)
        return "; ".join(parts)


@dataclass
class StructureCheck:
    """A property every backward must have, independent of the numbers it returns."""

    name: str  # e.g. "backward is linear in dout"
    ok: bool
    detail: str = ""


@dataclass
class GradcheckReport:
    """Everything one check_layer / check_loss / check_model call found."""

    label: str  # what was checked, e.g. "Linear(in_features=5, ...) x(6, 5) train"
    rows: list[TensorRow]
    structure: list[StructureCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    settings: dict = field(default_factory=dict)  # eps, tol, warn, seed, max_elements

    @property
    def passed(self) -> bool:
        """No tensor FAILs and every structural check holds (WARN and KINK pass)."""
        return all(r.verdict != "FAIL" for r in self.rows) and all(s.ok for s in self.structure)

    @property
    def failed_tensors(self) -> list[str]:
        return [r.name for r in self.rows if r.verdict == "FAIL"]

    def row(self, name: str) -> TensorRow:
        """The row of tensor ``name``."""
        return next(r for r in self.rows if r.name == name)

    def __str__(self) -> str:
        return format_reports([self], self.notes)

    def to_dict(self) -> dict:
        return {"label": self.label, "passed": self.passed,
                "tensors": [_row_dict(r) for r in self.rows],
                "structure": [asdict(s) for s in self.structure],
                "notes": list(self.notes), "settings": dict(self.settings)}


@dataclass
class SuiteReport:
    """Several checks reported as one table (what ``mlp-gradcheck`` prints)."""

    reports: list[GradcheckReport]
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.reports)

    def counts(self) -> dict[str, int]:
        return counts(self.reports)

    def __str__(self) -> str:
        return format_reports(self.reports, self.notes)

    def to_dict(self) -> dict:
        return {"passed": self.passed, "counts": self.counts(), "notes": list(self.notes),
                "checks": [r.to_dict() for r in self.reports]}


NOT_DIFFERENTIABLE = "N/A"  # the verdict of an input of integer indices, which has no gradient


def not_differentiable(name: str, shape) -> TensorRow:
    """The row of an input of integer indices: nothing to compare, and nothing wrong."""
    return TensorRow(name, tuple(shape), 0, float("nan"), float("nan"), None, NOT_DIFFERENTIABLE,
                     note="integer indices: not differentiable, no gradient to check")


def counts(reports: list[GradcheckReport]) -> dict[str, int]:
    """Tensors per verdict, and structural checks that failed."""
    out = {"passed": 0, "failed": 0, "warnings": 0, "kinks": 0, "not_differentiable": 0, "structural_failures": 0}
    key = {"PASS": "passed", "FAIL": "failed", "WARN": "warnings", "KINK": "kinks",
           NOT_DIFFERENTIABLE: "not_differentiable"}
    for report in reports:
        for r in report.rows:
            out[key[r.verdict]] += 1
        out["structural_failures"] += sum(not s.ok for s in report.structure)
    return out


def summary_line(reports: list[GradcheckReport]) -> str:
    """``N passed, M failed, W warnings, K with kinks`` (tensors), plus structural failures."""
    c = counts(reports)
    line = f"{c['passed']} passed, {c['failed']} failed, {c['warnings']} warnings, {c['kinks']} with kinks"
    if c["not_differentiable"]:
        line += f", {c['not_differentiable']} not differentiable (integer indices)"
    if c["structural_failures"]:
        line += f"; {c['structural_failures']} structural check(s) failed"
    return line


HEADER = ("check", "tensor", "shape", "max abs err", "max rel err", "worst", "verdict", "note")


def table_rows(reports: list[GradcheckReport], only_failures: bool = False) -> list[tuple[str, ...]]:
    """One tuple of cells per tensor; the check's label only on its first row."""
    cells = []
    for report in reports:
        label = report.label
        for r in report.rows:
            if only_failures and r.verdict != "FAIL":
                continue
            cells.append((label, r.name, _shape(r.shape), _num(r.max_abs), _num(r.max_rel),
                          "-" if r.worst is None else _shape(r.worst), r.verdict, r.describe()))
            label = ""
    return cells


def format_reports(reports: list[GradcheckReport], notes=(), only_failures: bool = False) -> str:
    """Notes, an aligned table, structural problems, then the closing summary line."""
    lines = [f"note: {n}" for n in notes]
    rows = table_rows(reports, only_failures)
    if rows:
        table = [HEADER, *rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
        right = {3, 4}  # numbers are right-aligned
        for row in table:
            text = "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
            lines.append(text.rstrip())
        lines.insert(len(notes) + 1, "-" * max(len(line) for line in lines[len(notes):]))
    for report in reports:
        for s in report.structure:
            if not s.ok:
                lines.append(f"FAIL  {report.label}: {s.name}: {s.detail}")
    lines.append(summary_line(reports))
    return "\n".join(lines)


def _num(v: float | None) -> str:
    return "-" if v is None or np.isnan(v) else f"{v:.1e}"


def _shape(shape) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _finite_or_none(v):
    return None if v is None or not np.isfinite(v) else float(v)


def _row_dict(r: TensorRow) -> dict:
    return {"name": r.name, "shape": list(r.shape), "checked": r.checked, "size": r.size,
            "max_abs_error": _finite_or_none(r.max_abs), "max_rel_error": _finite_or_none(r.max_rel),
            "worst_index": None if r.worst is None else list(r.worst), "verdict": r.verdict,
            "kinks": r.kinks, "directional_rel_error": _finite_or_none(r.directional), "note": r.note}
