"""What a cell of a CSV holds: a number, a missing value, or text (a category).

A cell is read stripped of surrounding spaces. An empty one is a missing value, and so is one
whose text is among ``data.missing_values``: R writes ``NA``, pandas ``NaN`` or nothing,
spreadsheets ``#N/A``, databases ``NULL``, UCI's files ``?``. What a missing value becomes is
``data.missing``'s choice: an error naming the cell, or the training split's fill value.
"""

# data.missing_values: the default texts of a missing value (besides an empty cell)
MISSING_VALUES = ("NA", "N/A", "n/a", "#N/A", "NaN", "nan", "null", "NULL", "None", "?")


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def is_missing(cell: str, markers) -> bool:
    """Whether the stripped text ``cell`` is a missing value: empty, or one of ``markers``."""
    return not cell or cell in markers


def missing_problem(cell: str) -> str:
    """How a message names a missing value: ``the cell is empty`` or ``the cell is 'NA'``."""
    return "the cell is empty" if not cell else f"the cell is {cell!r}, a missing value"
