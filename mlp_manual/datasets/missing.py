"""Missing values: which cells of a CSV are one, and what a reader does with one.

An empty cell is a missing value, and so is one whose text is among ``data.missing_values``: R
writes ``NA``, pandas ``NaN`` or nothing, spreadsheets ``#N/A``, databases ``NULL``, UCI's files
``?``. What a missing value becomes is ``data.missing``'s choice: an error naming the cell, or
(read as NaN here) the training split's fill value (preprocessing.py).
"""

from dataclasses import dataclass

from ..errors import DataError

# data.missing_values: the default texts of a missing value (besides an empty cell)
MISSING_VALUES = ("NA", "N/A", "n/a", "#N/A", "NaN", "nan", "null", "NULL", "None", "?")
# what a message refusing a missing value of a training file suggests, for a number and a category
FILL_REMEDY = " (or fill such cells: data.missing: mean, median or most_frequent)"
FILL_CATEGORY_REMEDY = " (or fill such cells: data.missing: most_frequent)"


def is_missing(cell: str, markers) -> bool:
    """Whether the stripped text ``cell`` is a missing value: empty, or one of ``markers``."""
    return not cell or cell in markers


def missing_problem(cell: str) -> str:
    """How a message names a missing value: ``the cell is empty`` or ``the cell is 'NA'``."""
    return "the cell is empty" if not cell else f"the cell is {cell!r}, a missing value"


@dataclass(frozen=True)
class MissingCells:
    """How a reader takes a missing cell (empty, or one of ``texts``): as NaN, to be filled
    (``filled``), or as a mistake, whose message ends in ``remedy`` (a number's cell) or
    ``category_remedy`` (a category's)."""

    texts: tuple[str, ...] = MISSING_VALUES
    filled: bool = False
    remedy: str = FILL_REMEDY
    category_remedy: str = FILL_CATEGORY_REMEDY

    def holds(self, cell: str) -> bool:
        """Whether the stripped text ``cell`` is a missing value."""
        return is_missing(cell, self.texts)

    def refused(self, where: str, cell: str, what: str, category: bool = False) -> DataError:
        """The error for the missing ``cell`` at ``where``: ``a missing {what}``, then how to fix it."""
        remedy = self.category_remedy if category else self.remedy
        return DataError(f"{where}: {missing_problem(cell)}; a missing {what}: fill it in or remove the row{remedy}")
