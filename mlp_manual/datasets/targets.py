"""The target column of a CSV: numbers for regression, or class labels (integers 0..C-1, or
texts mapped to 0..C-1 in sorted order) for classification.

N = rows.
"""

import numpy as np

from ..errors import DataError
from .cells import MARK_NAMES, number_reader, other_mark
from .columns import CsvRows
from .numbers import TRAINING_REMEDY, beyond, decimal_remedy

REGRESSION_HINT = " (use data.task: regression for numeric targets)"


def read_targets(table: CsvRows, target: int, task: str, decimal: str, dtype, every_class: bool):
    """The cells of column ``target`` of ``table`` as the targets of ``task``: regression
    numbers (N, 1) float64 within ``dtype``'s range, or class indices (N,) int64. Integer labels
    must cover 0..max with no gap when ``every_class`` (false for a validation or test file, which
    may lack a class). Returns: y, and the class names of text labels (sorted; None otherwise)."""
    labels = table.cells(target)
    if task == "regression":
        return _numbers(table, labels, decimal, dtype), None
    number = number_reader(decimal)
    try:
        numeric = np.array([number(v) for v in labels])
    except ValueError:
        classes = sorted(set(labels))
        if every_class and len(classes) < 2:
            raise _single_class(table, target, labels) from None
        return np.array([classes.index(v) for v in labels], dtype=np.int64), classes
    _check_integer_labels(table, labels, numeric, every_class, target)
    return numeric.astype(np.int64), None


def _numbers(table: CsvRows, labels: list[str], decimal: str, dtype) -> np.ndarray:
    """Regression targets (N, 1): finite numbers within ``dtype``'s range."""
    number = number_reader(decimal)
    y = np.empty((len(labels), 1))
    for i, ((line, _), v) in enumerate(zip(table.rows, labels)):
        try:
            y[i, 0] = number(v)
        except ValueError:
            mark = other_mark(v, decimal)
            raise DataError(f"{table.name}: line {line}: target {v!r} is not a number, but data.task is regression"
                            + (f" (written with {MARK_NAMES[mark]}? {decimal_remedy(decimal)})" if mark else "")
                            ) from None
        if not np.isfinite(y[i, 0]):
            raise DataError(f"{table.name}: line {line}: target {v!r} is not a finite number")
        if abs(y[i, 0]) > np.finfo(dtype).max:
            raise DataError(f"{table.name}: line {line}: target {v!r} {beyond(dtype)}: it cannot be trained on in "
                            f"{np.dtype(dtype).name}{TRAINING_REMEDY}")
    return y


def _single_class(table: CsvRows, target: int, labels: list[str]) -> DataError:
    column = repr(table.names[target]) if table.names else target + 1
    return DataError(f"{table.name}: the target column {column} holds a single class ({labels[0]!r}); "
                     "classification needs at least 2 classes")


def _check_integer_labels(table: CsvRows, labels: list[str], numeric: np.ndarray, every_class: bool,
                          target: int) -> None:
    """Numeric class labels must be integers >= 0, and with ``every_class`` at least 2 that run
    0..C-1 with no gap."""
    bad = np.flatnonzero((numeric != np.round(numeric)) | (numeric < 0) | ~np.isfinite(numeric))
    if bad.size:
        line = table.rows[bad[0]][0]
        raise DataError(f"{table.name}: line {line}: class label {labels[bad[0]]!r} is not an integer >= 0"
                        f"{REGRESSION_HINT}")
    present = np.unique(numeric)  # sorted
    if every_class and len(present) < 2:
        raise _single_class(table, target, labels)
    if every_class and len(present) < present[-1] + 1:
        found = set(present.tolist())
        missing = next(c for c in range(len(present) + 1) if c not in found)
        top = int(numeric.argmax())
        raise DataError(f"{table.name}: integer class labels must run 0..C-1 with no gaps, but no row has label "
                        f"{missing} (labels found: {_label_list(present)}; the largest, {labels[top]!r}, is on "
                        f"line {table.rows[top][0]}){REGRESSION_HINT}")


def _label_list(present: np.ndarray) -> str:
    shown = ", ".join(f"{v:g}" for v in present[:5])
    return shown + (f", ..., {present[-1]:g}" if len(present) > 5 else "")
