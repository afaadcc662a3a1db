"""Reading a user's CSV file into features and targets, with errors that name the line: the
file's rows and header here, then its columns (columns.py), its number cells and missing values
(numbers.py, missing.py), its categories (categories.py) and its target (targets.py).

N = rows, D = feature columns.
"""

import csv
import os
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from ..errors import ConfigError, DataError, short_repr, short_text
from ..files import open_regular
from ..options import BOOL, PATH, TEXT, Items, Kind, Option, choice, is_integer
from . import categories as cat
from .cells import DECIMAL_MARKS, MARK_NAMES
from .columns import CsvRows, column_index, feature_columns, refuse_absent, target_index, width_of
from .missing import MISSING_VALUES, MissingCells
from .numbers import TRAINING_REMEDY, NumberCells, decimal_remedy, parse_numbers
from .preprocessing import MISSING_KINDS
from .targets import read_targets


def column_name(item, key: str):
    """A CSV column of data.columns, data.drop or data.categorical: a header name, or an index
    (negative from the end)."""
    if not (isinstance(item, str) or is_integer(item)):
        raise ConfigError(f"{key} must be a column name or index, got {short_repr(item)}")
    return item


def missing_text(item, key: str) -> str:
    """A cell's text that marks a missing value (data.missing_values), stripped as cells are."""
    if not isinstance(item, str):
        quote = " (YAML reads null, NULL and ~ as nothing: quote it, 'null')" if item is None else ""
        raise ConfigError(f"{key} must be a string, got {short_repr(item)}{quote}")
    return item.strip()


COLUMNS = Items("a list of column names or indices", column_name)
SOME_COLUMNS = Items("a list of column names or indices, or null", column_name, or_none=True)  # null: the default
PATHS = {  # the files of a dataset read from files (csv, text)
    "path": Option(PATH, None, help="the CSV or text file"),
    "val_path": Option(PATH, None, help="a validation file of the same layout (instead of val_fraction)"),
    "test_path": Option(PATH, None, help="a test file of the same layout (instead of test_fraction)"),
}
# The options a config's data section sets for the csv dataset.
OPTIONS = {
    **PATHS,
    "target": Option(Kind("a column name or index", lambda v: isinstance(v, str) or is_integer(v)), -1,
                     help="the target column, index or header name"),
    "columns": Option(SOME_COLUMNS, None, help="the feature columns, in this order (default: all)"),
    "drop": Option(COLUMNS, (), help="columns that are not features (an ID column)"),
    "missing": choice(MISSING_KINDS, "error", "what a missing feature value becomes"),
    "missing_values": Option(Items("a list of strings", missing_text), MISSING_VALUES,
                             help="cells that are missing values, as an empty cell is"),
    "categorical": Option(SOME_COLUMNS, None, help="columns of categories (default: text columns)"),
    "unseen_category": choice(cat.UNSEEN_KINDS, "error", "a category training lacks: error, or all 0"),
    "header": Option(BOOL, True, help="the first row holds column names"),
    "delimiter": Option(TEXT, ",", lambda v: len(v) == 1, "be a single character", "the character between cells"),
    "decimal": Option(TEXT, ".", lambda v: v in DECIMAL_MARKS, "be '.' or ','",
                      "the decimal mark of numbers: '.', or ',' (0,84; no thousands separator)"),
    "task": choice(("classification", "regression"), "classification", "class labels or numbers"),
}


@dataclass(frozen=True)
class CsvOptions:
    """How a CSV is read: the options a config's data section sets for it (OPTIONS but the
    paths), their defaults OPTIONS's. ``unseen_category`` applies to a file read against a
    model's categories (``read_csv``'s ``known``)."""

    target: int | str = OPTIONS["target"].default
    header: bool = OPTIONS["header"].default
    delimiter: str = OPTIONS["delimiter"].default
    decimal: str = OPTIONS["decimal"].default
    task: str = OPTIONS["task"].default
    columns: tuple | None = OPTIONS["columns"].default
    drop: tuple = OPTIONS["drop"].default
    categorical: tuple | None = OPTIONS["categorical"].default
    missing: str = OPTIONS["missing"].default
    missing_values: tuple = OPTIONS["missing_values"].default
    unseen_category: str = OPTIONS["unseen_category"].default

    @classmethod
    def of(cls, data) -> "CsvOptions":
        """The options of a config's data section (``DataSettings``)."""
        return cls(**{f.name: getattr(data, f.name) for f in fields(cls)})


class CsvData(NamedTuple):
    X: np.ndarray  # (N, D) float64
    y: np.ndarray  # (N,) int64 class indices, or (N, 1) float64 regression targets
    class_names: list[str] | None  # text labels in sorted order (class index = position)
    feature_names: tuple[str, ...] | None  # (D,) the header without the target; None without one
    target_name: str | None  # the target column's header cell
    # per feature column: None for a number, or the texts of a categorical column (sorted), which
    # X holds as codes (categories.py); None when no column is categorical
    levels: tuple[tuple[str, ...] | None, ...] | None = None
    categorical: tuple = ()  # the categorical columns (names, or indices without a header), to read another file


def read_csv(path: str | os.PathLike, options: CsvOptions = CsvOptions(), *, key: str | None = None,
             dtype=np.float64, every_class: bool = True, known: tuple | None = None,
             columns_from: str | None = None) -> CsvData:
    """Read a numeric CSV as ``options`` say (data.target, data.columns, ...): one column is
    the target, the others (or ``options.columns`` of them, or all but ``options.drop``) are
    the features; a missing feature value is an error or, with data.missing, NaN, to be filled.

    Inputs: key, the config key the path came from, named in every error beside the path;
    dtype, the run's: a number beyond its range is an error naming the cell (a float32 run
    cannot hold 1e39); every_class, integer labels must cover 0..max with no gap (false for a
    validation or test file, which may lack a class); known, a model's categories per feature
    (as ``levels``: these columns are categorical), to code the cells by instead of the file's
    own texts, a text they lack being an error or, with ``options.unseen_category`` "zeros",
    -1; columns_from, where ``options.columns`` came from (another file's features, matched by
    name), named when the file lacks one.
    Returns: CsvData (X, y, class_names, feature_names, target_name, levels, categorical).
    """
    name = f"{path} ({key})" if key else path
    _check_marks(options, name)
    table = _header(_read_rows(path, name, options.delimiter), name, options.header)
    width = width_of(table, options.delimiter)
    t = target_index(options.target, table, width)
    if columns_from and table.names is not None:
        refuse_absent(options.columns, table, columns_from)
    features = feature_columns(table, width, t, options.columns, options.drop)
    text = _categorical(table, features, width, options, known)
    X, levels = _features(table, features, text, options, dtype, known)
    names = table.names
    y, classes = read_targets(table, t, options.task, options.decimal, dtype, every_class)
    return CsvData(X, y, classes, tuple(names[k] for k in features) if names else None, names[t] if names else None,
                   tuple(levels) if text else None, tuple(names[k] if names else k for k in sorted(text)))


def _check_marks(options: CsvOptions, name) -> None:
    delimiter, decimal = options.delimiter, options.decimal
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise DataError(f"{name}: the delimiter must be a single character, got {delimiter!r}")
    if decimal == delimiter:
        raise DataError(f"{name}: data.decimal and data.delimiter are both {decimal!r}; a file whose numbers are "
                        f"written with {MARK_NAMES[decimal]} separates its cells by another character (such as ';': "
                        "data.delimiter)")


def _read_rows(path, name, delimiter: str) -> list:
    """The file's rows that hold a cell, [(line, cells), ...]."""
    try:
        with open_regular(path, "r", name=name, newline="", encoding="utf-8-sig") as f:  # -sig: a byte-order mark
            rows = [(i + 1, r) for i, r in enumerate(csv.reader(f, delimiter=delimiter)) if r and any(c.strip() for c in r)]
    except FileNotFoundError:
        rule = "" if os.path.isabs(path) else (" (a relative path in a config file is read from the file's folder, "
                                               "one given with --set from the current folder)")
        raise DataError(f"{name}: no such data file{rule}") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise DataError(f"{name}: cannot read the CSV ({e})") from None
    if len(rows) > 1 and all(len(r) > 1 and r[-1].strip() == "" for _, r in rows):
        raise DataError(f"{name}: every line ends with a trailing {delimiter!r}, which makes an empty last "
                        "column; remove the trailing delimiters")
    return rows


def _header(rows: list, name, header: bool) -> CsvRows:
    """The data rows, and with ``header`` the first row's cells as the column names: each name
    once (a model finds its features by name, and a second target column would be read as a
    feature), on the first line."""
    names = None
    if header and rows:
        names = [c.strip() for c in rows[0][1]]
        broken = next((n for n in names if "\n" in n or "\r" in n), None)
        if broken is not None:
            raise DataError(f"{name}: header cell {broken[:40]!r} holds a line break (a quoted cell spanning "
                            "lines); put each column name on the first line")
        first: dict[str, int] = {}
        for k, column in enumerate(names):
            if column in first:
                raise DataError(f"{name}: the header names column {short_text(repr(column))} twice (columns "
                                f"{first[column] + 1} and {k + 1}); give each column its own name")
            first[column] = k
        rows = rows[1:]
    if not rows:
        raise DataError(f"{name}: no data rows")
    return CsvRows(name, rows, names)


def _categorical(table: CsvRows, features: list[int], width: int, options: CsvOptions,
                 known: tuple | None) -> list[int]:
    """The feature columns that hold categories: those ``known`` gives them for, else those
    data.categorical names, else those that hold text (categories.detect)."""
    if known is not None:
        if len(known) != len(features):
            raise DataError(f"{table.name}: has {len(features)} feature columns, the model takes {len(known)}")
        return [k for k, c in zip(features, known) if c is not None]
    if options.categorical is None:
        return cat.detect(table, features, options.missing_values, options.decimal, options.delimiter)
    text = [column_index(c, table.names, width, table.name, "data.categorical") for c in options.categorical]
    stray = next((k for k in text if k not in features), None)
    if stray is not None:
        raise DataError(f"{table.name}: data.categorical names {repr(table.names[stray]) if table.names else stray}, "
                        "which is not a feature column")
    return text


def _features(table: CsvRows, features: list[int], text: list[int], options: CsvOptions, dtype,
              known: tuple | None) -> tuple[np.ndarray, list]:
    """X (N, D): the number columns' values and the categorical columns' codes; and per
    feature None, or the categories its codes index."""
    missing = MissingCells(options.missing_values, filled=options.missing != "error")
    hint = "" if options.header else " (is the first row a header? set data.header: true)"
    how = NumberCells("trained on", dtype, options.decimal, missing, TRAINING_REMEDY,
                      " (a column of categories? name it in data.categorical)", decimal_remedy(options.decimal), hint)
    numbers = [k for k in features if k not in text]
    X = np.empty((len(table.rows), len(features)))  # (N, D)
    X[:, [features.index(k) for k in numbers]] = parse_numbers(table, numbers, how)
    levels = [None] * len(features)
    for k in text:
        j = features.index(k)
        X[:, j], found = cat.encode(table, k, missing, None if known is None else list(known[j]),
                                    options.unseen_category)
        levels[j] = tuple(found)
    return X, levels
