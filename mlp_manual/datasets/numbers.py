"""The number columns of a CSV: every cell a finite number that the run's dtype holds, or a
missing value (missing.py), with errors that name the cell."""

from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from .cells import MARK_NAMES, number_reader, other_mark
from .columns import CsvRows
from .missing import MissingCells

TRAINING_REMEDY = "; correct the value, or train in float64 (dtype: float64)"


def beyond(dtype) -> str:
    """``is beyond float32's range (magnitudes up to 3.4e+38)``, for a message about a value."""
    return f"is beyond {np.dtype(dtype).name}'s range (magnitudes up to {np.finfo(dtype).max:.2g})"


def decimal_remedy(decimal: str) -> str:
    """What to do about a number written with the decimal mark that is not ``decimal``."""
    return "set data.decimal: ','" if decimal == "." else f"data.decimal is {decimal!r}"


@dataclass(frozen=True)
class NumberCells:
    """How the cells of number columns are read, and what a message about one says.

    A cell is a number written with ``decimal`` as its decimal mark, finite and within
    ``dtype``'s range, or a missing value taken as ``missing`` says. A message says what a
    value that is none of these cannot be (``purpose``: "trained on", "predicted from") and
    what to do: ``range_remedy`` for a value beyond the range, ``decimal_remedy`` for a number
    written with the other decimal mark, ``first_row_hint`` for text in the first row (a
    header?), ``text_remedy`` for other text.
    """

    purpose: str
    dtype: type = np.float64
    decimal: str = "."
    missing: MissingCells = MissingCells()
    range_remedy: str = ""
    text_remedy: str = ""
    decimal_remedy: str = ""
    first_row_hint: str = ""

    def not_a_number(self, where: str, cell: str, first_row: bool) -> DataError:
        mark = other_mark(cell, self.decimal)
        hint = f" (written with {MARK_NAMES[mark]}? {self.decimal_remedy})" if mark else \
            self.first_row_hint if first_row and self.first_row_hint else self.text_remedy
        return DataError(f"{where}: {cell!r} is not a number{hint}")


def parse_numbers(table: CsvRows, columns: list[int], how: NumberCells) -> np.ndarray:
    """The cells ``columns`` (indices into each row) of ``table`` as numbers, as ``how`` says:
    a missing value is NaN when ``how.missing`` fills it; every other cell that is not a finite
    number in the dtype's range is a DataError naming the line and the column.
    Returns: X (N, len(columns)) float64.
    """
    X = np.empty((len(table.rows), len(columns)))
    largest = np.finfo(how.dtype).max
    number = number_reader(how.decimal)
    for i, (line, r) in enumerate(table.rows):
        for j, k in enumerate(columns):
            cell = r[k]
            try:
                X[i, j] = number(cell)
            except ValueError:
                X[i, j] = np.nan  # text: a missing value, or a mistake
                if not how.missing.holds(cell.strip()):
                    raise how.not_a_number(table.where(line, k), cell.strip(), i == 0) from None
            if X[i, j] != X[i, j] and how.missing.holds(cell.strip()):  # NaN: empty, NA, or "nan" itself
                if how.missing.filled:
                    continue
                raise how.missing.refused(table.where(line, k), cell.strip(), f"value cannot be {how.purpose}")
            if not np.isfinite(X[i, j]):
                raise DataError(f"{table.where(line, k)}: {cell.strip()!r} is not a finite number "
                                f"(NaN and infinity cannot be {how.purpose})")
            if abs(X[i, j]) > largest:
                raise DataError(f"{table.where(line, k)}: {cell.strip()!r} {beyond(how.dtype)}: it cannot "
                                f"be {how.purpose} in {np.dtype(how.dtype).name}{how.range_remedy}")
    return X
