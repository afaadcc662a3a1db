"""What a cell of a CSV holds: a number, a missing value (missing.py), or text (a category).

A cell is read stripped of surrounding spaces. A number is written with ``data.decimal`` as its
decimal mark: ``.``, or ``,`` as in files exported in many European locales (``0,84``). A
thousands separator is not read: with ``,`` as the mark a ``.`` in a cell makes it text, never a
separator skipped.
"""

from collections.abc import Callable

# data.decimal: the decimal marks a number may be written with
DECIMAL_MARKS = (".", ",")
MARK_NAMES = {".": "a decimal point", ",": "a decimal comma"}


def _comma_number(cell: str) -> float:
    if "." in cell:
        raise ValueError(f"{cell!r} holds a '.', and the decimal mark is ','")
    return float(cell.replace(",", "."))


def number_reader(decimal: str = ".") -> Callable[[str], float]:
    """The function that reads a cell as a number written with ``decimal`` as its decimal mark;
    it raises ValueError for a cell that is not one."""
    return float if decimal == "." else _comma_number


def is_number(cell: str, decimal: str = ".") -> bool:
    try:
        number_reader(decimal)(cell)
    except ValueError:
        return False
    return True


def _other(decimal: str) -> str:
    return next(m for m in DECIMAL_MARKS if m != decimal)


def other_mark(cell: str, decimal: str) -> str | None:
    """The other decimal mark when ``cell`` is not a number written with ``decimal`` but is one
    written with it (``0,84`` read with "."), else None."""
    other = _other(decimal)
    return other if not is_number(cell, decimal) and is_number(cell, other) else None


def marked_otherwise(cells: list[str], decimal: str) -> str | None:
    """The first of ``cells`` (filled, stripped) that is a number only with the other decimal
    mark, when every one of them is a number with it: a column of numbers written with a
    decimal mark that is not ``decimal``. None otherwise."""
    if not all(is_number(c, _other(decimal)) for c in cells):  # stops at the first text of a column of categories
        return None
    return next((c for c in cells if not is_number(c, decimal)), None)


def numbers_as_text(column: str, example: str, decimal: str, delimiter: str) -> str:
    """What to say of a ``column`` (``column 'a'``) whose cells, such as ``example``, are numbers
    written with the decimal mark that is not ``decimal`` (``marked_otherwise``), read from a
    file separated by ``delimiter``: read as texts, they would be categories."""
    mark = other_mark(example, decimal)
    problem = f"{column} holds numbers written with {MARK_NAMES[mark]} ({example!r})"
    categories = " (or list the column in data.categorical to read it as categories)"
    if mark == delimiter:
        return (f"{problem}, which a file separated by {delimiter!r} cannot hold as numbers: separate its cells by "
                f"another character (such as ';': data.delimiter) and set data.decimal: {mark!r}{categories}")
    if decimal == ".":
        return f"{problem}; set data.decimal: {mark!r}{categories}"
    return f"{problem}, but data.decimal is {decimal!r}; write them with {decimal!r}{categories}"
