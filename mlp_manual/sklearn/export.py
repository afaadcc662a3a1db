"""A fitted estimator, or a Pipeline ending in one, as an ONNX file: the steps before it become
the graph's preprocessing, the class labels its ``label`` output.

    from mlp_manual.sklearn import to_onnx
    to_onnx(pipeline, "model.onnx")   # Pipeline([("scale", StandardScaler()), ("mlp", MLPClassifier())])

Scalers that fold into ``x -> (x - shift) / scale``: ``StandardScaler`` (with or without mean
and std), ``MinMaxScaler`` with its default range (0, 1), ``MaxAbsScaler``, ``RobustScaler``
and "passthrough" steps; several in a row fold into one. A ``SimpleImputer`` (of NaN) first
becomes the fill of missing values. A ``ColumnTransformer`` may come first, whose groups are
such steps on number columns, or an optional ``SimpleImputer`` and a ``OneHotEncoder`` (text
categories, ``handle_unknown`` "error" or "ignore") on categorical ones: the graph then takes
the number columns and the categorical ones (strings) as two inputs, as for a model file with
categorical columns. A ``TransformedTargetRegressor`` with a ``StandardScaler`` becomes the
standardization of the targets. Any other step is refused by name.

R = raw columns, D = model inputs.
"""

import copy
import dataclasses

import numpy as np
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    RobustScaler,
    StandardScaler,
)
from sklearn.utils.validation import check_is_fitted

from ..datasets.preprocessing import Preprocessing
from ..errors import ExportError
from ..layers import Linear
from .base import MLPBase


def _nonzero(scale: np.ndarray) -> np.ndarray:
    """A scaler's divisor with zeros as 1, as scikit-learn treats a constant feature."""
    return np.where(scale == 0, 1.0, scale)


def scaler_as_shift_scale(step, name: str, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The fitted scikit-learn scaler ``step`` as (shift, scale), each (D,): ``(x - shift) / scale``."""
    check_is_fitted(step)
    zeros, ones = np.zeros(width), np.ones(width)
    if isinstance(step, StandardScaler):
        shift = step.mean_ if step.with_mean else zeros
        return np.asarray(shift, float), _nonzero(np.asarray(step.scale_, float)) if step.with_std else ones
    if isinstance(step, MinMaxScaler):
        if tuple(step.feature_range) != (0, 1) or step.clip:
            raise ExportError(f"pipeline step {name!r}: a MinMaxScaler exports with feature_range (0, 1) and "
                              "clip=False only")
        return np.asarray(step.data_min_, float), _nonzero(np.asarray(step.data_range_, float))
    if isinstance(step, MaxAbsScaler):
        return zeros, _nonzero(np.asarray(step.scale_, float))
    if isinstance(step, RobustScaler):
        shift = step.center_ if step.with_centering else zeros
        scale = step.scale_ if step.with_scaling else ones
        return np.asarray(shift, float), _nonzero(np.asarray(scale, float))
    raise ExportError(f"pipeline step {name!r} ({type(step).__name__}) has no ONNX translation here; "
                      "the steps before the estimator may be StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler")


def fitted_model(estimator) -> tuple:
    """(model, ModelInfo) of a fitted mlp-manual estimator, or of a fitted Pipeline ending in
    one, its steps folded into the ModelInfo's preprocessing: scalers, a SimpleImputer, or a
    ColumnTransformer of them and OneHotEncoders; a TransformedTargetRegressor's StandardScaler
    becomes the target preprocessing."""
    targets = None
    if isinstance(estimator, TransformedTargetRegressor):
        targets = _target_scaler(estimator)
        estimator = estimator.regressor_
    steps = estimator.steps if isinstance(estimator, Pipeline) else [("estimator", estimator)]
    *before, (last_name, last) = steps
    if not isinstance(last, MLPBase):
        raise ExportError(f"{type(last).__name__} is not an mlp-manual estimator (MLPClassifier, MLPRegressor)")
    check_is_fitted(last)
    names = getattr(estimator, "feature_names_in_", None)
    model = last._network()  # its linear layers given coefs_ and intercepts_
    if before and isinstance(before[0][1], ColumnTransformer):
        columns, order = _columns(*before[0])
        preprocessing = columns.fold(before[1:], last.n_features_in_)
        model = _inputs_in_order(model, order)
    else:
        preprocessing = Folded(last.n_features_in_).fold(before, last.n_features_in_)
    info = last.model_info(preprocessing, names)
    return model, dataclasses.replace(info, target_preprocessing=targets)


class Folded:
    """Preprocessing folded from scikit-learn steps: per raw column a fill value (or None), a
    (shift, scale), or the categories of a one-hot encoded column."""

    def __init__(self, width: int):
        self.fill = [None] * width  # (R,)
        self.shift, self.scale = np.zeros(width), np.ones(width)  # (R,) each: x -> (x - shift) / scale so far
        self.categories: list = [None] * width
        self.unseen = None

    def steps(self, steps, columns: list[int]) -> None:
        """Fold a chain of ``steps`` [(name, step)] applied to the number ``columns``."""
        for name, step in steps:
            if step is None or step == "passthrough":
                continue
            if isinstance(step, SimpleImputer):
                _plain_imputer(step, name)
                if any(self.fill[j] is not None for j in columns) or np.any(self.shift[columns]) \
                        or np.any(self.scale[columns] != 1) or not _is_nan(step.missing_values):
                    raise ExportError(f"pipeline step {name!r}: a SimpleImputer exports as the first step of its "
                                      "columns, filling NaN")
                check_is_fitted(step)
                if len(step.statistics_) != len(columns) or np.isnan(np.asarray(step.statistics_, float)).any():
                    raise ExportError(f"pipeline step {name!r}: a SimpleImputer exports when every column had a "
                                      "value to fill with")
                for j, v in zip(columns, step.statistics_):
                    self.fill[j] = float(v)
                continue
            s, c = scaler_as_shift_scale(step, name, len(columns))
            # ((x - a) / b - s) / c = (x - (a + s b)) / (b c)
            self.shift[columns], self.scale[columns] = self.shift[columns] + s * self.scale[columns], \
                self.scale[columns] * c

    def one_hot(self, steps, columns: list[int], name: str) -> None:
        """Fold an optional SimpleImputer (most_frequent) and a OneHotEncoder of ``columns``."""
        *first, (last_name, encoder) = steps
        if not isinstance(encoder, OneHotEncoder) or len(first) > 1:
            raise ExportError(f"{name!r}: a group of categorical columns exports as an optional SimpleImputer and a "
                              "OneHotEncoder")
        check_is_fitted(encoder)
        if encoder.drop is not None or getattr(encoder, "_infrequent_enabled", False) \
                or encoder.handle_unknown not in ("error", "ignore"):
            raise ExportError(f"{name!r}: a OneHotEncoder exports with drop=None, no infrequent categories and "
                              "handle_unknown 'error' or 'ignore'")
        unseen = "zeros" if encoder.handle_unknown == "ignore" else "error"
        if self.unseen not in (None, unseen):
            raise ExportError(f"{name!r}: every OneHotEncoder must handle unknown categories alike")
        self.unseen = unseen
        fills = [None] * len(columns)
        if first:
            imputer = first[0][1]
            if not isinstance(imputer, SimpleImputer) or imputer.missing_values not in ("", None) \
                    and not _is_nan(imputer.missing_values):
                raise ExportError(f"{name!r}: the step before a OneHotEncoder may be a SimpleImputer only")
            _plain_imputer(imputer, name)
            check_is_fitted(imputer)
            fills = list(imputer.statistics_)
        for j, categories, fill in zip(columns, encoder.categories_, fills):
            if not all(isinstance(c, str) for c in categories):
                raise ExportError(f"{name!r}: a OneHotEncoder exports with text categories only, column {j} has "
                                  f"{list(categories)[:3]}")
            self.categories[j] = tuple(categories)
            if fill is not None:
                self.fill[j] = float(list(categories).index(fill))

    def fold(self, steps, width: int) -> Preprocessing:
        """The Preprocessing these columns, then the scalers of ``steps`` on every column, make."""
        if steps and any(c is not None for c in self.categories):
            raise ExportError("a step after a ColumnTransformer with a OneHotEncoder has no ONNX translation here")
        self.steps(steps, list(range(width)))
        numbers = [j for j, c in enumerate(self.categories) if c is None]
        filled = [v is not None for v in self.fill]
        if any(filled) and not all(filled):
            raise ExportError("every column needs a SimpleImputer, or none does")
        fill = np.array(self.fill, dtype=float) if all(filled) else None
        shift, scale = self.shift[numbers], self.scale[numbers]
        categorical = any(c is not None for c in self.categories)
        categories = tuple(self.categories) if categorical else None
        if not np.any(shift) and np.all(scale == 1):
            return Preprocessing(fill=fill, categories=categories, unseen=self.unseen or "error")
        return Preprocessing("standardize", shift, scale, fill, categories, self.unseen or "error")


def _columns(name: str, transformer) -> tuple[Folded, list]:
    """A fitted ColumnTransformer folded, and its output columns' order: (raw column, category
    index or None) for each."""
    check_is_fitted(transformer)
    width = transformer.n_features_in_
    folded, order, used = Folded(width), [], []
    names = list(getattr(transformer, "feature_names_in_", []))
    for part, step, columns in transformer.transformers_:
        if step == "drop" or (isinstance(columns, (list, tuple, np.ndarray)) and len(columns) == 0):
            if part == "remainder" and len(columns):
                raise ExportError(f"pipeline step {name!r} drops columns {list(columns)}; an exported model takes "
                                  "every column it is given")
            continue
        index = _column_indices(columns, names, width, name)
        used += index
        steps = step.steps if isinstance(step, Pipeline) else [(part, step)]
        if part == "remainder":
            steps = []  # passthrough
        if steps and isinstance(steps[-1][1], OneHotEncoder):
            folded.one_hot(steps, index, part)
            order += [(j, k) for j in index for k in range(len(folded.categories[j]))]
        else:
            folded.steps(steps, index)
            order += [(j, None) for j in index]
    if sorted(used) != list(range(width)):
        raise ExportError(f"pipeline step {name!r} must use every column once")
    return folded, order


def _column_indices(columns, names: list[str], width: int, name: str) -> list[int]:
    """A ColumnTransformer's column selection (a name, an index, a slice, a list of names or
    indices, a mask) as indices."""
    if callable(columns):
        raise ExportError(f"pipeline step {name!r} chooses columns with a function; give names or indices")
    if isinstance(columns, slice):
        return list(range(width))[columns]
    picked = np.atleast_1d(np.asarray(columns))
    if picked.dtype == bool:
        return np.flatnonzero(picked).tolist()
    if picked.dtype.kind in "iu":
        return [int(j) % width for j in picked]
    missing = [c for c in picked if c not in names]
    if missing:
        raise ExportError(f"pipeline step {name!r} names columns {missing[:3]} it was not fitted with")
    return [names.index(c) for c in picked]


def _inputs_in_order(model, order: list):
    """``model`` whose first linear layer takes its inputs in mlp-manual's order (number columns,
    then each categorical column's categories) instead of a ColumnTransformer's ``order``."""
    ours = sorted(order, key=lambda o: (o[1] is not None, o[0], -1 if o[1] is None else o[1]))
    if ours == order:
        return model
    first = model.layers[0]
    if not isinstance(first, Linear):
        raise ExportError("a ColumnTransformer whose columns come in another order needs a linear first layer")
    model = copy.deepcopy(model)
    model.layers[0].params["W"] = first.params["W"][[order.index(o) for o in ours]]  # (D, H), rows reordered
    return model


def _target_scaler(estimator) -> Preprocessing:
    """A fitted TransformedTargetRegressor's StandardScaler as a target Preprocessing."""
    check_is_fitted(estimator)
    scaler = estimator.transformer_
    if not isinstance(scaler, StandardScaler) or estimator.func is not None:
        raise ExportError("a TransformedTargetRegressor exports with transformer=StandardScaler() only")
    shift, scale = scaler_as_shift_scale(scaler, "transformer", len(np.atleast_1d(scaler.scale_)))
    return Preprocessing("standardize", shift, scale)


def _plain_imputer(imputer: SimpleImputer, name: str) -> None:
    """ExportError unless ``imputer`` only fills: no indicator columns added, no column dropped or kept empty."""
    if imputer.add_indicator or imputer.keep_empty_features:
        raise ExportError(f"pipeline step {name!r}: a SimpleImputer exports with add_indicator=False and "
                          "keep_empty_features=False only")


def _is_nan(v) -> bool:
    return isinstance(v, float) and np.isnan(v)


def to_onnx(estimator, path=None):
    """The ONNX model of a fitted mlp-manual estimator, or of a fitted Pipeline (or
    TransformedTargetRegressor) that ends in one (see the module's docstring for the steps that
    translate), with its preprocessing, feature names and class labels (a ``label`` output of
    strings and a ``classes`` metadata entry); written to ``path`` too when given. Needs the
    ``onnx`` package. Raises ExportError for a step or a layer that has no translation."""
    from ..export.onnx import export_model, write_onnx

    proto = export_model(*fitted_model(estimator))
    if path is not None:
        write_onnx(proto, path)
    return proto
