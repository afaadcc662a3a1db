"""Reading a user's CSV file into features and targets, with errors that name the line."""

import csv
import os
from typing import NamedTuple

import numpy as np

from ..errors import ConfigError, DataError, did_you_mean, short_repr, short_text
from ..files import open_regular
from ..options import BOOL, PATH, TEXT, Items, Kind, Option, choice, is_integer
from . import categories as cat
from .cells import DECIMAL_MARKS, MARK_NAMES, MISSING_VALUES, is_missing, missing_problem, number_reader, other_mark
from .dataset import MISSING_KINDS


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


def read_csv(path: str | os.PathLike, target: int | str = -1, header: bool = True, delimiter: str = ",",
             task: str = "classification", every_class: bool = True, key: str | None = None, dtype=np.float64,
             columns: tuple | None = None, drop: tuple = (), missing: str = "error", categorical: tuple | None = None,
             known: tuple | None = None, unseen: str = "error", columns_from: str | None = None,
             unseen_remedy: str = " (set data.unseen_category: zeros to read such a value as all zeros)",
             missing_values: tuple = MISSING_VALUES, decimal: str = "."):
    """Read a numeric CSV; one column is the target, the others (or ``columns`` of them, or all
    but ``drop``) are the features.

    Inputs: target, a column index (negative counts from the end) or, with a header, a name;
    columns, the feature columns in order (data.columns), and drop, columns that are not
    features (data.drop), each a name or an index;
    missing, what a missing feature value is (data.missing): "error", or NaN, to be filled; a
    missing value is an empty cell or one of ``missing_values`` (data.missing_values);
    categorical, the feature columns that hold categories (data.categorical: names or indices),
    or None to take those that hold text; known, a model's categories per feature (as
    ``levels``: these columns are categorical), to code the cells by instead of the file's own
    texts, a text they lack being an error (ending in ``unseen_remedy``) or, with ``unseen``
    "zeros", -1; columns_from, where ``columns`` came from (another file's features, matched by
    name), named when the file lacks one;
    decimal, the decimal mark numbers are written with (data.decimal: "." or ",");
    task, "classification" (integer labels 0..C-1, or text labels mapped to 0..C-1 in sorted
    order) or "regression" (numbers); every_class, integer labels must cover 0..max with no gap
    (false for a validation or test file, which may lack a class); key, the config key the path
    came from, named in every error beside the path; dtype, the run's: a number beyond its range
    is an error naming the cell (a float32 run cannot hold 1e39).
    Returns: CsvData (X, y, class_names, feature_names, target_name, levels, categorical).
    """
    name = f"{path} ({key})" if key else path
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise DataError(f"{name}: the delimiter must be a single character, got {delimiter!r}")
    if decimal == delimiter:
        raise DataError(f"{name}: data.decimal and data.delimiter are both {decimal!r}; a file whose numbers are "
                        f"written with {MARK_NAMES[decimal]} separates its cells by another character (such as ';': "
                        "data.delimiter)")
    try:
        with open_regular(path, "r", name=name, newline="", encoding="utf-8-sig") as f:  # -sig: a byte-order mark
            rows = [(i + 1, r) for i, r in enumerate(csv.reader(f, delimiter=delimiter)) if r and any(c.strip() for c in r)]
    except FileNotFoundError:
        rule = "" if os.path.isabs(path) else (" (a relative path in a config file is read from the file's folder, "
                                               "one given with --set from the current folder)")
        raise DataError(f"{name}: no such data file{rule}") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise DataError(f"{name}: cannot read the CSV ({e})") from None
    _check_trailing_delimiter(rows, name, delimiter)
    names = None
    if header and rows:
        names = [c.strip() for c in rows[0][1]]
        broken = next((n for n in names if "\n" in n or "\r" in n), None)
        if broken is not None:
            raise DataError(f"{name}: header cell {broken[:40]!r} holds a line break (a quoted cell spanning "
                            "lines); put each column name on the first line")
        _refuse_repeated_names(names, name)
        rows = rows[1:]
    if not rows:
        raise DataError(f"{name}: no data rows")
    width = len(names) if names else len(rows[0][1])
    for line, r in rows:
        if len(r) != width:
            raise DataError(f"{name}: line {line} has {len(r)} columns, expected {width}"
                            + delimiter_hint(names or [], delimiter, "data.delimiter", "the header"))
    if width < 2:
        first = rows[0][1] if names is None else names
        raise DataError(f"{name}: needs at least 2 columns (features and a target), found {width}"
                        + delimiter_hint(first, delimiter, "data.delimiter"))
    if isinstance(target, str):
        if names is None:
            raise DataError(f"{name}: target {target!r} is a column name, but header is false")
        if target not in names:
            raise DataError(f"{name}: no column named {target!r}; columns: {', '.join(names)}")
        t = names.index(target)
    else:
        if not -width <= target < width:
            raise DataError(f"{name}: target column {target} is out of range for {width} columns")
        t = target % width
    hint = "" if header else " (is the first row a header? set data.header: true)"
    if columns_from and names is not None:
        absent = [c for c in columns if c not in names]
        if absent:
            raise DataError(f"{name}: has no column {absent[0]!r}, a feature of {columns_from}")
    features = feature_columns(names, width, t, columns, drop, name)
    if known is not None:
        if len(known) != len(features):
            raise DataError(f"{name}: has {len(features)} feature columns, the model takes {len(known)}")
        text = [k for k, c in zip(features, known) if c is not None]
    elif categorical is None:
        text = cat.detect(rows, features, names, name, missing_values, decimal, delimiter)
    else:
        text = [column_index(c, names, width, name, "data.categorical") for c in categorical]
        stray = next((k for k in text if k not in features), None)
        if stray is not None:
            raise DataError(f"{name}: data.categorical names {repr(names[stray]) if names else stray}, which is not "
                            "a feature column")
    numbers = [k for k in features if k not in text]
    X = np.empty((len(rows), len(features)))  # (N, D)
    X[:, [features.index(k) for k in numbers]] = parse_numbers(
        rows, numbers, name, "trained on", first_row_hint=hint, column_names=names, dtype=dtype,
        remedy=TRAINING_REMEDY, missing=missing != "error",
        missing_remedy=" (or fill such cells: data.missing: mean, median or most_frequent)",
        text_remedy=" (a column of categories? name it in data.categorical)", missing_values=missing_values,
        decimal=decimal, decimal_remedy=_decimal_remedy(decimal))
    levels = [None] * len(features)
    for k in text:
        j = features.index(k)
        X[:, j], levels[j] = cat.encode(
            rows, k, lambda line: cell_where(name, line, k, names), None if known is None else list(known[j]),
            missing != "error", unseen, unseen_remedy, missing_values=missing_values)
        levels[j] = tuple(levels[j])
    found = {"levels": tuple(levels) if text else None,
             "categorical": tuple(names[k] if names else k for k in sorted(text))}
    feature_names = tuple(names[k] for k in features) if names else None
    target_name = names[t] if names else None
    labels = [r[t].strip() for _, r in rows]
    number = number_reader(decimal)
    if task == "regression":
        y = np.empty((len(rows), 1))
        for i, ((line, _), v) in enumerate(zip(rows, labels)):
            try:
                y[i, 0] = number(v)
            except ValueError:
                mark = other_mark(v, decimal)
                raise DataError(f"{name}: line {line}: target {v!r} is not a number, but data.task is regression"
                                + (f" (written with {MARK_NAMES[mark]}? {_decimal_remedy(decimal)})" if mark else "")
                                ) from None
            if not np.isfinite(y[i, 0]):
                raise DataError(f"{name}: line {line}: target {v!r} is not a finite number")
            if abs(y[i, 0]) > np.finfo(dtype).max:
                raise DataError(f"{name}: line {line}: target {v!r} {beyond(dtype)}: it cannot be trained on in "
                                f"{np.dtype(dtype).name}{TRAINING_REMEDY}")
        return CsvData(X, y, None, feature_names, target_name, **found)
    single_class = DataError(f"{name}: the target column {repr(names[t]) if names else t + 1} holds a single "
                             f"class ({labels[0]!r}); classification needs at least 2 classes")
    try:
        numeric = np.array([number(v) for v in labels])
    except ValueError:
        classes = sorted(set(labels))
        if every_class and len(classes) < 2:
            raise single_class from None
        y = np.array([classes.index(v) for v in labels], dtype=np.int64)
        return CsvData(X, y, classes, feature_names, target_name, **found)
    bad = np.flatnonzero((numeric != np.round(numeric)) | (numeric < 0) | ~np.isfinite(numeric))
    if bad.size:
        line = rows[bad[0]][0]
        raise DataError(f"{name}: line {line}: class label {labels[bad[0]]!r} is not an integer >= 0{REGRESSION_HINT}")
    present = np.unique(numeric)  # sorted
    if every_class and len(present) < 2:
        raise single_class
    if every_class and len(present) < present[-1] + 1:
        found = set(present.tolist())
        missing = next(c for c in range(len(present) + 1) if c not in found)
        top = int(numeric.argmax())
        raise DataError(f"{name}: integer class labels must run 0..C-1 with no gaps, but no row has label "
                        f"{missing} (labels found: {_label_list(present)}; the largest, {labels[top]!r}, is on "
                        f"line {rows[top][0]}){REGRESSION_HINT}")
    return CsvData(X, numeric.astype(np.int64), None, feature_names, target_name, **found)


TRAINING_REMEDY = "; correct the value, or train in float64 (dtype: float64)"
REGRESSION_HINT = " (use data.task: regression for numeric targets)"


def _decimal_remedy(decimal: str) -> str:
    """What to do about a number written with the decimal mark that is not ``decimal``."""
    return "set data.decimal: ','" if decimal == "." else f"data.decimal is {decimal!r}"


def column_index(column: int | str, names: list[str] | None, width: int, name, key: str) -> int:
    """The index of ``column`` in a file of ``width`` columns (``names``: its header): a header
    name, or an index (negative from the end). DataError, naming the file and the ``key`` that
    gave the column (data.drop, --keep), with a did-you-mean for a name not in the header."""
    if isinstance(column, str):
        if names is None:
            raise DataError(f"{name}: {key} names column {column!r}, but the file has no header; give its index "
                            "instead (0 is the first)")
        if column not in names:
            raise DataError(f"{name}: {key} names no column of the file: {column!r}"
                            + (did_you_mean(column, names) or f"; columns: {', '.join(names)}"))
        return names.index(column)
    if not -width <= column < width:
        raise DataError(f"{name}: {key} column {column} is out of range for {width} columns")
    return column % width


def feature_columns(names: list[str] | None, width: int, target: int, columns: tuple | None, drop: tuple,
                    name) -> list[int]:
    """The indices of the feature columns of a file of ``width`` columns (``names``: its header)
    whose target is column ``target``: ``columns`` in their order, or every column but the target
    and ``drop``."""
    if columns is not None and drop:
        raise DataError(f"{name}: give data.columns (the features) or data.drop (what is not a feature), not both")

    def index(column, key: str) -> int:
        return column_index(column, names, width, name, key)

    def label(k: int) -> str:
        return repr(names[k]) if names else f"column {k + 1}"

    if columns is not None:
        chosen = [index(c, "data.columns") for c in columns]
        if not chosen:
            raise DataError(f"{name}: data.columns is empty; name the feature columns, or leave it out for all")
        twice = next((k for k in chosen if chosen.count(k) > 1), None)
        if twice is not None:
            raise DataError(f"{name}: data.columns names {label(twice)} twice")
        if target in chosen:
            raise DataError(f"{name}: data.columns holds the target column {label(target)} (data.target)")
        return chosen
    dropped = {index(c, "data.drop") for c in drop}
    if target in dropped:
        raise DataError(f"{name}: data.drop holds the target column {label(target)} (data.target)")
    chosen = [k for k in range(width) if k != target and k not in dropped]
    if not chosen:
        raise DataError(f"{name}: data.drop leaves no feature column")
    return chosen


def beyond(dtype) -> str:
    """``is beyond float32's range (magnitudes up to 3.4e+38)``, for a message about a value."""
    return f"is beyond {np.dtype(dtype).name}'s range (magnitudes up to {np.finfo(dtype).max:.2g})"


def delimiter_hint(cells: list[str], delimiter: str, option: str, what: str = "the line") -> str:
    """``; the line is one column: is the file separated by ';'? (data.delimiter)`` when a line
    (``what``) read as one cell holds another common delimiter, else "": the one rule for a file
    read with the wrong delimiter."""
    other = [d for d in ";,\t|" if d != delimiter and len(cells) == 1 and d in cells[0]]
    return f"; {what} is one column: is the file separated by {other[0]!r}? ({option})" if other else ""


def parse_numbers(rows: list, columns: list[int], name, purpose: str, first_row_hint: str = "",
                  column_names: list[str] | None = None, dtype=np.float64, remedy: str = "",
                  missing: bool = False, missing_remedy: str = "", text_remedy: str = "",
                  missing_values=(), decimal: str = ".", decimal_remedy: str = "") -> np.ndarray:
    """The cells ``columns`` (indices into each row) of ``rows`` [(line, cells), ...] as numbers.

    Every cell must be a number that ``dtype`` holds as a finite value, or, with ``missing``, a
    missing value (empty, or one of ``missing_values``: read as NaN); the error names the line
    and the column (1-based, and its name when ``column_names`` is given) and says what such a
    value cannot be: ``purpose`` (and, beyond the dtype's range, what to do: ``remedy``; for a
    missing value, ``missing_remedy``; for text, ``text_remedy``, or for a number written with
    the decimal mark that is not ``decimal``, ``decimal_remedy``).
    Returns: X (N, len(columns)) float64.
    """
    X = np.empty((len(rows), len(columns)))
    largest = np.finfo(dtype).max
    number = number_reader(decimal)
    for i, (line, r) in enumerate(rows):
        for j, k in enumerate(columns):
            cell = r[k]
            try:
                X[i, j] = number(cell)
            except ValueError:
                X[i, j] = np.nan  # text: a missing value, or a mistake
                if not is_missing(cell.strip(), missing_values):
                    mark = other_mark(cell.strip(), decimal)
                    hint = f" (written with {MARK_NAMES[mark]}? {decimal_remedy})" if mark else \
                        first_row_hint if i == 0 and first_row_hint else text_remedy
                    raise DataError(f"{cell_where(name, line, k, column_names)}: {cell.strip()!r} is not a "
                                    f"number{hint}") from None
            if X[i, j] != X[i, j] and is_missing(cell.strip(), missing_values):  # NaN: empty, NA, or "nan" itself
                if missing:
                    continue
                raise DataError(f"{cell_where(name, line, k, column_names)}: {missing_problem(cell.strip())}; a "
                                f"missing value cannot be {purpose}: fill it in or remove the row{missing_remedy}")
            if not np.isfinite(X[i, j]):
                where = cell_where(name, line, k, column_names)
                raise DataError(f"{where}: {cell.strip()!r} is not a finite number "
                                f"(NaN and infinity cannot be {purpose})")
            if abs(X[i, j]) > largest:
                where = cell_where(name, line, k, column_names)
                raise DataError(f"{where}: {cell.strip()!r} {beyond(dtype)}: it cannot "
                                f"be {purpose} in {np.dtype(dtype).name}{remedy}")
    return X


def cell_where(name, line: int, column: int, column_names) -> str:
    return f"{name}: line {line}, column {column + 1}" + (f" ({column_names[column]})" if column_names else "")


def _label_list(present: np.ndarray) -> str:
    shown = ", ".join(f"{v:g}" for v in present[:5])
    return shown + (f", ..., {present[-1]:g}" if len(present) > 5 else "")


def _refuse_repeated_names(names: list[str], name) -> None:
    """A header must name each column once: a model finds its features by name, and a second
    target column would be read as a feature."""
    first: dict[str, int] = {}
    for k, column in enumerate(names):
        if column in first:
            raise DataError(f"{name}: the header names column {short_text(repr(column))} twice (columns "
                            f"{first[column] + 1} and {k + 1}); give each column its own name")
        first[column] = k


def _check_trailing_delimiter(rows: list, name, delimiter: str) -> None:
    """A file whose every line ends with the delimiter has an empty last column: say so."""
    if len(rows) > 1 and all(len(r) > 1 and r[-1].strip() == "" for _, r in rows):
        raise DataError(f"{name}: every line ends with a trailing {delimiter!r}, which makes an empty last "
                        "column; remove the trailing delimiters")
