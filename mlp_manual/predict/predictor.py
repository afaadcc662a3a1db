"""Predicting with a trained model on raw rows: the model file's stored preprocessing, the model
in evaluation mode, batches, and answers in the data's own terms (class labels, target names).

N = rows, R = raw features, D = model inputs, H, W = image height and width, C = classes,
K = output units.
"""

import csv
import os
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import TextIO

import numpy as np

from ..datasets.categories import shown as cat_shown
from ..datasets.dataset import target_labels
from ..datasets.numbers import beyond
from ..datasets.rows import ModelColumns, RowFile
from ..errors import DataError
from ..layers.user_modules import check_user_layers
from ..losses import LOSSES
from ..model import Model
from ..training.evaluation import model_outputs
from .model_file import read_model
from .model_info import ModelInfo

DIGITS = {2: 5, 4: 9, 8: 17}  # significant digits that write a float16, float32, float64 exactly


class Predictor:
    """A trained model with the description of its data, predicting from raw rows.

    Inputs: model, info (as ``read_model`` returns them). ``X`` below is raw rows: (N, R), or
    (N, H, W) for a model trained on images, as in the training data, before any preprocessing;
    a categorical column holds codes, each the index of a category in
    ``info.preprocessing.categories[column]`` (-1: unseen, read as zeros when the model does).
    """

    def __init__(self, model: Model, info: ModelInfo):
        self.model, self.info = model.eval(), info
        self.loss = LOSSES[info.loss] if info.task == "classification" else None
        self._layers_checked = False  # a user's layers are tried once, on the first rows predicted

    @property
    def classes(self) -> list | None:
        """Class labels (C,) as they appeared in the training data; None for regression."""
        return None if self.info.classes is None else list(self.info.classes)

    @property
    def fills_missing(self) -> bool:
        """Whether a missing input (NaN, an empty CSV cell) is filled by the stored preprocessing
        (the run had data.missing), rather than refused."""
        return self.info.preprocessing is not None and self.info.preprocessing.fill is not None

    @property
    def feature_names(self) -> list[str] | None:
        """The training CSV's feature columns (D,), in the order the model takes them."""
        return None if self.info.feature_names is None else list(self.info.feature_names)

    def inputs(self, X, name: str = "X", first_row: int = 0, where: Callable[..., str] | None = None) -> np.ndarray:
        """Raw rows -> model inputs (N, D) in the model's dtype. Raises DataError, naming ``name``
        and the row (counted from ``first_row``), for a wrong shape or a value that is not finite
        in the model's dtype, as it is or once preprocessed. ``where(row, feature)``, when given,
        names a row and a feature instead (a CSV's line and column)."""
        X = np.asarray(X)
        where = where or _array_where(name, first_row)
        shape, n = self.info.input_shape, self.info.raw_features
        if X.dtype.kind not in "biuf":
            raise DataError(f"{name}: holds {X.dtype} values, not numbers")
        if X.ndim == 3 and shape is not None and X.shape[1:] == shape:
            X = X.reshape(len(X), -1)  # (N, H * W)
        if X.ndim != 2 or (n is not None and X.shape[1] != n):
            expected = f"(rows, {n})" + (f" or (rows, {', '.join(map(str, shape))})" if shape else "")
            raise DataError(f"{name}: has shape {X.shape}, the model takes {expected}")
        bad = ~np.isfinite(X)
        if self.fills_missing:
            bad &= ~np.isnan(X)  # a missing value, which the preprocessing fills
        if bad.any():
            row, column = np.argwhere(bad)[0]
            raise DataError(f"{where(row, column)}: {X[row, column]} is not a finite number (NaN and infinity "
                            "cannot be predicted from)")
        self._check_codes(X, where)
        dtype = self.model.dtype
        if X.dtype.kind == "f" and X.dtype.itemsize > dtype.itemsize:
            too_big = np.abs(X) > np.finfo(dtype).max
            if too_big.any():
                row, column = np.argwhere(too_big)[0]
                raise DataError(f"{where(row, column)}: {X[row, column]} {beyond(dtype)}: it cannot be predicted "
                                f"from in {dtype.name}, the model's dtype")
        raw = X
        if self.info.preprocessing:  # in float64, as in training
            X = self.info.preprocessing.apply(X.astype(np.float64))
        with np.errstate(over="ignore"):  # a value the cast makes infinite is reported below
            X = np.ascontiguousarray(X, dtype=dtype)
        bad = ~np.isfinite(X)
        if bad.any():
            row, column = np.argwhere(bad)[0]
            if self.info.preprocessing.categories is not None:  # only a number column can overflow
                column = self.info.preprocessing.numbers[column]
            raise DataError(f"{where(row, column)}: {raw[row, column]} is beyond {dtype.name}'s range once "
                            f"preprocessed as in training ({self.info.preprocessing.kind}): the training values of "
                            "this feature span a much smaller range")
        return X

    def _check_codes(self, X: np.ndarray, where: Callable[..., str]) -> None:
        """DataError, naming the cell, for a categorical column's value that is not a code of
        one of its categories (-1 too, for a model that reads an unseen category as zeros)."""
        p = self.info.preprocessing
        for j in p.categorical if p else ():
            k = len(p.categories[j])
            codes = X[:, j]
            bad = (codes != np.round(codes)) | (codes < (-1 if p.unseen == "zeros" else 0)) | (codes >= k)
            bad &= ~np.isnan(codes)  # missing, checked above
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise DataError(f"{where(row, j)}: {codes[row]} is not the code of a category (an integer 0..{k - 1}, "
                                f"the index of one of {cat_shown(p.categories[j])})")

    def outputs(self, X, name: str = "X", first_row: int = 0, where: Callable[..., str] | None = None) -> np.ndarray:
        """The model's outputs (N, K) for raw rows, computed in batches; DataError, naming the row
        (as ``inputs`` does), when a row's outputs overflow the model's dtype."""
        X = self.inputs(X, name, first_row, where)  # (N, D)
        if len(X) == 0:
            return np.empty((0, self.model.output_width(X.shape[1])), dtype=self.model.dtype)
        if not self._layers_checked:
            check_user_layers(self.model, X)
            self._layers_checked = True
        with np.errstate(all="ignore"):  # an overflow inside the model is reported below, by its row
            out = model_outputs(self.model, X)  # (N, K)
        bad = ~np.isfinite(out).all(axis=1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataError(f"{(where or _array_where(name, first_row))(row)}: the model's outputs overflow "
                            f"{self.model.dtype.name} (the row's inputs reach {np.abs(X[row]).max():.3g} once "
                            "preprocessed, far beyond the training data's); no prediction is written for it")
        targets = self.info.target_preprocessing
        return out if targets is None else targets.invert(out.astype(np.float64))  # in the targets' units

    def predict(self, X) -> np.ndarray:
        """Class labels (N,) for a classifier; predicted values (N,), or (N, K) for K targets."""
        out = self.outputs(X)
        if self.loss is None:
            return out[:, 0] if out.shape[1] == 1 else out
        return np.asarray(self.info.classes)[self.loss.predict(out)]

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (N, C) in float64, columns in the order of ``classes``; rows sum to 1."""
        if self.loss is None:
            raise DataError("a regression model gives no class probabilities")
        return self.loss.probabilities(self.outputs(X))

    def header(self, proba: bool = False) -> list[str]:
        """The columns ``predict_file`` writes: ``prediction``, then ``p_<label>`` per class with
        ``proba``; for regression ``prediction``, or ``prediction_<target>`` per target."""
        if self.loss is not None:
            return ["prediction"] + ([f"p_{c}" for c in self.info.classes] if proba else [])
        width = self.model.output_width(self.info.n_features) if self.info.n_features else 1
        if width == 1:
            return ["prediction"]
        return [f"prediction_{t}" for t in target_labels(self.info.target_names, width)]

    def csv_rows(self, X, proba: bool = False, name: str = "X", first_row: int = 0,
                 where: Callable[..., str] | None = None) -> list[list[str]]:
        """The rows of ``predict_file`` for raw rows X, numbers written with the model's precision;
        errors name rows as ``inputs`` does."""
        out = self.outputs(X, name, first_row, where)  # (N, K)
        digits = DIGITS.get(self.model.dtype.itemsize, 17)
        number = (lambda v: f"{v:.{digits}g}")
        if self.loss is None:
            return [[number(v) for v in row] for row in out]
        labels = [str(self.info.classes[i]) for i in self.loss.predict(out)]
        if not proba:
            return [[label] for label in labels]
        return [[label, *map(number, row)] for label, row in zip(labels, self.loss.probabilities(out))]


def _array_where(name: str, first_row: int) -> Callable[..., str]:
    """``where`` for an array: ``X: row 5, column 1``, rows counted from ``first_row``."""
    return lambda row, column=None: f"{name}: row {first_row + row}" + ("" if column is None else f", column {column}")


def load_predictor(path: str | os.PathLike) -> Predictor:
    """The model file at ``path`` ready to predict. A file saved without a description of its data
    still loads, with a warning that its inputs are used as they are."""
    model, info = read_model(path)
    if info.preprocessing is None:
        warnings.warn(f"{path}: {NO_PREPROCESSING}", stacklevel=2)
    return Predictor(model, info)


NO_PREPROCESSING = ("this model file carries no description of its preprocessing (it was saved without one): "
                    "inputs are given to the model as they are")


def model_columns(predictor: Predictor) -> ModelColumns:
    """What the predictor's model takes from the rows of a file, as its preprocessing says (a
    model file without one: numbers, only an empty cell missing)."""
    info, p = predictor.info, predictor.info.preprocessing
    columns = ModelColumns(info.raw_features, info.feature_names, dtype=predictor.model.dtype)
    if p is None:
        return columns
    return replace(columns, categories=p.categories, unseen=p.unseen, decimal=p.decimal,
                   missing=replace(columns.missing, texts=p.missing_values or (), filled=predictor.fills_missing))


def predict_file(predictor: Predictor, path, out: TextIO, proba: bool = False, delimiter: str = ",",
                 chunk_rows: int = 4096, on_progress: Callable[[int], None] | None = None, keep: tuple = ()) -> int:
    """Predict every row of the CSV or ``.npy`` file ``path`` and write the ``header`` and one CSV
    row per input row to ``out``, a chunk at a time; the CSV columns ``keep`` (an ID column) come
    first, copied as they are. ``on_progress(bytes read)`` is called after each chunk. Returns the
    number of rows written."""
    rows = RowFile(path, model_columns(predictor), delimiter, chunk_rows, keep)
    writer = csv.writer(out, lineterminator="\n")
    written = 0
    for first_row, X in rows:  # the header is written once the first chunk is known to be good
        lines = predictor.csv_rows(X, proba, str(path), first_row, rows.where)
        if keep:
            lines = [kept + line for kept, line in zip(rows.kept, lines)]
        if first_row == 0:
            writer.writerow((rows.kept_header() if keep else []) + predictor.header(proba))
        writer.writerows(lines)
        written += len(X)
        if on_progress:
            on_progress(rows.bytes_read)
    return written
