"""Rows to predict, read from a file in chunks so that any number of rows takes constant memory:
a CSV (with a header whose columns are matched to the training features by name, or without
one) or a ``.npy`` array.

N = rows of a chunk, D = features, R = raw feature columns, H, W = image height and width.
"""

import csv
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from ..files import check_regular, open_regular
from . import categories as cat
from .cells import MARK_NAMES, is_number
from .columns import CsvRows, column_index, delimiter_hint
from .missing import MissingCells
from .numbers import NumberCells, parse_numbers

# what a message refusing a missing value says a model that fills none
FILLS_NONE = " (this model was trained without data.missing, so it fills none)"


@dataclass(frozen=True)
class ModelColumns:
    """What a model takes from the rows of a file: ``n_features`` raw columns (R; None when
    unknown) called ``feature_names`` (None: it has no names); per column, with ``categories``,
    None for a number or a categorical column's categories, whose cells become codes
    (categories.py), a text not among them being an error or, with ``unseen`` "zeros", -1;
    ``missing``, how a missing cell is taken (the model's data.missing and data.missing_values);
    ``decimal``, the decimal mark of a CSV's numbers (data.decimal); ``dtype``, whose range a
    CSV's numbers must fit."""

    n_features: int | None
    feature_names: tuple[str, ...] | None = None
    categories: tuple | None = None
    unseen: str = "error"
    missing: MissingCells = MissingCells((), remedy=FILLS_NONE, category_remedy=FILLS_NONE)
    decimal: str = "."
    dtype: type = np.float64


class RowFile:
    """The rows of ``path``, a file of the rows ``model`` takes, as chunks of at most
    ``chunk_rows`` rows.

    A ``.npy`` file is read by memory mapping and yields (N, D) or (N, H, W) arrays as stored,
    for the caller to check against the model; a CSV, its cells separated by ``delimiter``,
    yields (N, R) float64 arrays of finite numbers within the model's dtype's range (and codes),
    its columns in the training order. Iterating yields (index of the first row, rows);
    ``bytes_read`` says how far it got, and ``where`` names a row of the chunk last yielded (and
    a feature) in a message. ``keep`` names CSV columns whose cells are copied, as text, into
    ``kept`` for each row yielded.
    """

    def __init__(self, path: str | os.PathLike, model: ModelColumns, delimiter: str = ",", chunk_rows: int = 4096,
                 keep: tuple = ()):
        self.path, self.name, self.model = path, str(path), model
        self.keep = tuple(keep)  # columns copied as they are (a name, or an index without a header)
        self.kept: list[list[str]] = []  # the cells of ``keep`` of each row of the chunk last yielded
        self.delimiter, self.chunk_rows = delimiter, chunk_rows
        if model.decimal == delimiter:
            raise DataError(f"{path}: the model reads numbers written with {MARK_NAMES[model.decimal]} (data.decimal: "
                            f"{model.decimal!r}), so the file must separate its cells by another character: give it "
                            "with --delimiter (such as --delimiter ';')")
        try:
            self.size = check_regular(path).st_size
        except FileNotFoundError:
            raise DataError(f"{path}: no such input file") from None
        except OSError as e:
            raise DataError(f"{path}: cannot read the input file ({e.strerror or e})") from None
        self.bytes_read = 0
        self._start, self._lines, self._columns_of, self._header = 0, None, None, None

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        if str(self.path).endswith(".npy"):
            if self.keep:
                raise DataError(f"{self.name}: a .npy array has no columns to keep (--keep); give a CSV")
            return self._npy_chunks()
        return self._csv_chunks()

    def _npy_chunks(self):
        with open_regular(self.path, "rb") as f:
            magic = f.read(6)
        if magic.startswith(b"PK"):
            raise DataError(f"{self.name}: not a .npy array (an .npz archive?); save one array with numpy.save")
        if magic != b"\x93NUMPY":
            raise DataError(f"{self.name}: not a .npy array (it does not start as numpy.save writes one)")
        try:
            X = np.load(self.path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise DataError(f"{self.name}: not a readable .npy array ({e})") from None
        if X.dtype.kind not in "biuf" or X.ndim not in (2, 3):
            raise DataError(f"{self.name}: holds a {X.ndim}-D {X.dtype} array; expected numbers, one row per "
                            "sample: (rows, features), or (rows, height, width) for an image model")
        for start in range(0, max(len(X), 1), self.chunk_rows):  # an empty array still gives one chunk
            chunk = np.array(X[start:start + self.chunk_rows])  # copied out of the memory map
            self.bytes_read = int(self.size * min(1.0, (start + len(chunk)) / len(X)))
            self._start = start
            yield start, chunk

    def _csv_chunks(self):
        try:
            with open_regular(self.path, "rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
                yield from self._parse(csv.reader(text, delimiter=self.delimiter), raw)
        except (UnicodeDecodeError, csv.Error) as e:
            raise DataError(f"{self.name}: cannot read the CSV ({e})") from None

    def _parse(self, reader, raw) -> Iterator[tuple[int, np.ndarray]]:
        records = ((reader.line_num, r) for r in reader if r and any(c.strip() for c in r))
        first = next(records, None)
        if first is None:
            raise DataError(f"{self.name}: the file holds no rows")
        names = [c.strip() for c in first[1]] if self._is_header(first[1]) else None
        columns = self._columns(names, len(first[1]))
        self._columns_of, self._header = columns, names
        self._kept_of = [self._kept_column(c, names, len(first[1])) for c in self.keep]
        width = len(first[1])
        chunk, start = [] if names else [first], 0
        for record in records:
            chunk.append(record)
            if len(chunk) == self.chunk_rows:
                yield start, self._numbers(chunk, columns, width, names)
                start += len(chunk)
                chunk = []
                self.bytes_read = raw.tell()
        if chunk or start == 0:
            yield start, self._numbers(chunk, columns, width, names)
        self.bytes_read = self.size

    def _is_header(self, cells: list[str]) -> bool:
        """A first row is a header when it holds every training feature name (names that look
        like numbers), or when a cell that should be a number is neither a number nor a missing
        value: any cell, but those of the categorical columns of a row as wide as the model's
        raw rows."""
        stripped, model = [c.strip() for c in cells], self.model
        if model.feature_names and set(model.feature_names) <= set(stripped):
            return True
        numbers = range(len(stripped))
        if model.categories is not None and len(stripped) == len(model.categories):
            numbers = [j for j, c in enumerate(model.categories) if c is None]
        return any(not (is_number(stripped[j], model.decimal) or model.missing.holds(stripped[j])) for j in numbers)

    def _columns(self, names: list[str] | None, width: int) -> list[int]:
        """Indices of the training features in the file's columns."""
        features, n_features = self.model.feature_names, self.model.n_features
        if names is None or not features:
            if n_features is not None and width != n_features:
                named = " (the model has no feature names to match a header against)" if names else ""
                raise DataError(f"{self.name}: has {width} columns, the model takes {n_features} features{named}")
            return list(range(width))
        missing = [f for f in features if f not in names]
        if missing:
            hint = delimiter_hint(names, self.delimiter, "--delimiter")
            raise DataError(f"{self.name}: missing feature column{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(missing)} (the model takes {', '.join(features)}){hint}")
        twice = next((f for f in features if names.count(f) > 1), None)
        if twice is not None:
            raise DataError(f"{self.name}: the header names column {twice!r} more than once")
        return [names.index(f) for f in features]

    def _kept_column(self, column: str, names: list[str] | None, width: int) -> int:
        """The index of a ``keep`` column: a header name, or in a file without a header an index."""
        if names is None and column.lstrip("-").isdigit():
            column = int(column)
        return column_index(column, names, width, self.name, "--keep")

    def kept_header(self) -> list[str]:
        """The output's names of the ``keep`` columns: their header names, or ``column_<index>``."""
        return [self._header[k] if self._header else f"column_{k}" for k in self._kept_of]

    def where(self, row: int, feature: int | None = None) -> str:
        """``new.csv: line 3, column 2 (stem_mm)`` or ``x.npy: row 5, column 1``: row ``row`` of
        the chunk last yielded, and the model's input feature ``feature``, as the file has them."""
        if self._lines is None:
            return f"{self.name}: row {self._start + row}" + ("" if feature is None else f", column {feature}")
        text = f"{self.name}: line {self._lines[row]}"
        if feature is None:
            return text
        column = self._columns_of[feature]
        return f"{text}, column {column + 1}" + (f" ({self._header[column]})" if self._header else "")

    def _numbers(self, records: list, columns: list[int], width: int, names) -> np.ndarray:
        self._lines = [line for line, _ in records]
        for line, cells in records:
            if len(cells) != width:
                raise DataError(f"{self.name}: line {line} has {len(cells)} columns, expected {width}"
                                + delimiter_hint(names or [], self.delimiter, "--delimiter", "the header"))
        self.kept = [[cells[k] for k in self._kept_of] for _, cells in records]
        model, table = self.model, CsvRows(self.name, records, names)
        how = NumberCells("predicted from", model.dtype, model.decimal, model.missing, ", the model's dtype",
                          decimal_remedy=f"the model was trained with data.decimal: {model.decimal!r}")
        if model.categories is None:
            return parse_numbers(table, columns, how)
        X = np.empty((len(records), len(columns)))  # (N, R)
        of_numbers = [j for j, c in enumerate(model.categories) if c is None]
        X[:, of_numbers] = parse_numbers(table, [columns[j] for j in of_numbers], how)
        for j, known in enumerate(model.categories):
            if known is not None:
                X[:, j], _ = cat.encode(table, columns[j], model.missing, list(known), model.unseen)
        return X
