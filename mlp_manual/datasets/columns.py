"""The columns of a CSV: its rows as read, how a message names a cell or a column, and which
columns are the target and the features (data.target, data.columns, data.drop)."""

from dataclasses import dataclass

from ..errors import DataError, did_you_mean


@dataclass(frozen=True)
class CsvRows:
    """A CSV's data rows as read, [(line number, cells), ...], and what messages name them by:
    ``name``, the file (its path, and the config key it came from), and ``names``, the cells of
    its header (None without one)."""

    name: str
    rows: list
    names: list[str] | None = None

    def where(self, line: int, column: int) -> str:
        """``d.csv (data.path): line 3, column 2 (stem_mm)``: a cell, its column counted from 1."""
        return f"{self.name}: line {line}, column {column + 1}" + (f" ({self.names[column]})" if self.names else "")

    def label(self, k: int) -> str:
        """``'stem_mm'``, or ``column 3`` without a header."""
        return repr(self.names[k]) if self.names else f"column {k + 1}"

    def cells(self, k: int) -> list[str]:
        """The cells of column ``k``, stripped of surrounding spaces."""
        return [r[k].strip() for _, r in self.rows]


def delimiter_hint(cells: list[str], delimiter: str, option: str, what: str = "the line") -> str:
    """``; the line is one column: is the file separated by ';'? (data.delimiter)`` when a line
    (``what``) read as one cell holds another common delimiter, else "": the one rule for a file
    read with the wrong delimiter."""
    other = [d for d in ";,\t|" if d != delimiter and len(cells) == 1 and d in cells[0]]
    return f"; {what} is one column: is the file separated by {other[0]!r}? ({option})" if other else ""


def width_of(table: CsvRows, delimiter: str) -> int:
    """The columns every row of ``table`` has (those of its header, when it has one); DataError
    for a row of another width, or a file of fewer than 2 columns (features and a target)."""
    width = len(table.names) if table.names else len(table.rows[0][1])
    for line, r in table.rows:
        if len(r) != width:
            raise DataError(f"{table.name}: line {line} has {len(r)} columns, expected {width}"
                            + delimiter_hint(table.names or [], delimiter, "data.delimiter", "the header"))
    if width < 2:
        first = table.rows[0][1] if table.names is None else table.names
        raise DataError(f"{table.name}: needs at least 2 columns (features and a target), found {width}"
                        + delimiter_hint(first, delimiter, "data.delimiter"))
    return width


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


def target_index(target: int | str, table: CsvRows, width: int) -> int:
    """The index of the target column (data.target): a header name, or an index (negative from
    the end)."""
    name, names = table.name, table.names
    if isinstance(target, str):
        if names is None:
            raise DataError(f"{name}: target {target!r} is a column name, but header is false")
        if target not in names:
            raise DataError(f"{name}: no column named {target!r}; columns: {', '.join(names)}")
        return names.index(target)
    if not -width <= target < width:
        raise DataError(f"{name}: target column {target} is out of range for {width} columns")
    return target % width


def refuse_absent(columns: tuple, table: CsvRows, columns_from: str) -> None:
    """DataError for a name of ``columns``, features of ``columns_from`` (another file, a model),
    that the header of ``table`` lacks."""
    absent = [c for c in columns if c not in table.names]
    if absent:
        raise DataError(f"{table.name}: has no column {absent[0]!r}, a feature of {columns_from}")


def feature_columns(table: CsvRows, width: int, target: int, columns: tuple | None, drop: tuple) -> list[int]:
    """The indices of the feature columns of ``table``, a file of ``width`` columns whose target
    is column ``target``: ``columns`` in their order, or every column but the target and
    ``drop``."""
    name = table.name
    if columns is not None and drop:
        raise DataError(f"{name}: give data.columns (the features) or data.drop (what is not a feature), not both")

    def index(column, key: str) -> int:
        return column_index(column, table.names, width, name, key)

    if columns is not None:
        chosen = [index(c, "data.columns") for c in columns]
        if not chosen:
            raise DataError(f"{name}: data.columns is empty; name the feature columns, or leave it out for all")
        twice = next((k for k in chosen if chosen.count(k) > 1), None)
        if twice is not None:
            raise DataError(f"{name}: data.columns names {table.label(twice)} twice")
        if target in chosen:
            raise DataError(f"{name}: data.columns holds the target column {table.label(target)} (data.target)")
        return chosen
    dropped = {index(c, "data.drop") for c in drop}
    if target in dropped:
        raise DataError(f"{name}: data.drop holds the target column {table.label(target)} (data.target)")
    chosen = [k for k in range(width) if k != target and k not in dropped]
    if not chosen:
        raise DataError(f"{name}: data.drop leaves no feature column")
    return chosen
