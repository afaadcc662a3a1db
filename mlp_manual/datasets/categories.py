"""Categorical feature columns: which columns of a CSV hold categories, their cells as codes,
and the one-hot columns a model takes in their place.

A categorical column is stored in a raw feature array as codes: the index of the cell's text
in the column's sorted list of categories, NaN for an empty cell (a missing value), and -1 for a
category the list lacks when such a value is encoded as all zeros (data.unseen_category: zeros).

N = rows, K = categories of a column.
"""

import numpy as np

from .. import machine
from ..errors import DataError
from ..readable import readable_bytes
from .cells import is_number, marked_otherwise, numbers_as_text
from .columns import CsvRows
from .missing import MissingCells, is_missing

# data.unseen_category: what a category the training split never had becomes: an error naming
# it, or all-zero one-hot columns
UNSEEN_KINDS = ("error", "zeros")
# A text column detected as categorical with more distinct texts than this, in more than half
# of the rows, is an ID or free text, not a category: one-hot columns for it would be one per row
MAX_DETECTED = 100


def detect(table: CsvRows, features: list[int], missing_values=(), decimal: str = ".",
           delimiter: str = ",") -> list[int]:
    """The feature columns (indices into each row) of ``table`` that hold text: more than half
    of their filled cells (neither empty nor one of ``missing_values``) are not numbers written
    with ``decimal`` as the decimal mark. A column with fewer texts than that is numbers with a
    mistake, which the reader of numbers reports by its cell. DataError for a text column whose
    every filled cell is a number written with the other decimal mark (``0,84``: numbers, not
    categories; ``delimiter`` is the file's), and for one with a different text in most rows (an
    ID or free text)."""
    chosen = []
    for k in features:
        cells = [c for c in table.cells(k) if not is_missing(c, missing_values)]
        texts = sum(not is_number(c, decimal) for c in cells)
        if texts * 2 <= len(cells):
            continue
        label = table.label(k)
        example = marked_otherwise(cells, decimal)
        if example is not None:
            column = f"column {label}" if table.names else label
            raise DataError(f"{table.name}: {numbers_as_text(column, example, decimal, delimiter)}")
        distinct = len(set(cells))
        if distinct > MAX_DETECTED and distinct * 2 > len(table.rows):
            raise DataError(f"{table.name}: {label} holds text with {distinct} different values in {len(table.rows)} "
                            "rows, too many to be categories (an ID or free text?); leave it out with data.drop, or "
                            "name the categorical columns in data.categorical")
        chosen.append(k)
    return chosen


# the end of the message about a category a model's categories lack
UNSEEN_REMEDY = (" (the model was trained with data.unseen_category: error; one trained with zeros reads it as all "
                 "zeros)")


def encode(table: CsvRows, column: int, missing: MissingCells, known: list[str] | None = None,
           unseen: str = "error") -> tuple[np.ndarray, list[str]]:
    """The cells of ``column`` of ``table`` as codes (N,) float64, and the categories they
    index: ``known`` (a model's) when given, else the column's own distinct texts, sorted.

    A cell is stripped of surrounding spaces. A missing one is NaN when ``missing`` fills it,
    else a DataError; a text not in ``known`` is -1 when ``unseen`` is "zeros", else a
    DataError naming the cell.
    """
    cells = table.cells(column)
    categories = known if known is not None else sorted(set(c for c in cells if not missing.holds(c)))
    index = {c: i for i, c in enumerate(categories)}
    codes = np.empty(len(cells))
    for i, ((line, _), cell) in enumerate(zip(table.rows, cells)):
        if missing.holds(cell):
            if not missing.filled:
                raise missing.refused(table.where(line, column), cell, "category cannot be used", category=True)
            codes[i] = np.nan
        elif cell in index:
            codes[i] = index[cell]
        elif unseen == "zeros":
            codes[i] = -1
        else:
            raise DataError(f"{table.where(line, column)}: {cell!r} is not one of the categories the model was "
                            f"trained on ({shown(categories)}){UNSEEN_REMEDY}")
    return codes, categories


def shown(categories) -> str:
    """The first few categories, for a message."""
    return ", ".join(map(repr, categories[:5])) + (", ..." if len(categories) > 5 else "")


ONE_HOT_BYTES_PER_VALUE = 8 * 3  # float64: the one-hot columns, the inputs they are stacked into, the cast


def check_one_hot_size(categories: tuple, rows: int, names: tuple[str, ...] | None, source: str) -> None:
    """DataError, before any one-hot column is made, when ``rows`` rows of the model inputs
    that ``categories`` give (per raw column: None for a number, or its categories) would need
    more memory than a run may use; it names the column with the most categories."""
    width = sum(1 if c is None else len(c) for c in categories)
    need = rows * width * ONE_HOT_BYTES_PER_VALUE
    beyond = machine.beyond_limit(need)
    if beyond is None:
        return
    j = max(range(len(categories)), key=lambda j: len(categories[j] or ()))
    column = repr(names[j]) if names else f"feature {j + 1}"
    raise DataError(f"{source}: {column} has {len(categories[j]):,} categories, one model input each; the {width:,} "
                    f"inputs of {rows:,} rows need {readable_bytes(need)}, {beyond}: leave the column out with "
                    "data.drop, or group its rare values into one")


def one_hot(codes: np.ndarray, k: int) -> np.ndarray:
    """Codes (N,) -> (N, K) float64: a 1 in column ``code``; a row of zeros for -1 (unseen)."""
    return (codes[:, None] == np.arange(k)[None, :]).astype(np.float64)  # (N, K)


def translate(codes: np.ndarray, levels: list[str], categories: list[str]) -> np.ndarray:
    """Codes (N,) into ``levels`` -> codes into ``categories``: -1 for a level not among them,
    NaN kept."""
    index = {c: i for i, c in enumerate(categories)}
    table = np.array([index.get(c, -1) for c in levels] + [0], dtype=np.float64)  # the last: a NaN's placeholder
    missing = np.isnan(codes)
    out = table[np.where(missing, len(levels), codes).astype(np.int64)]
    out[missing] = np.nan
    return out
