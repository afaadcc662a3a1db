"""A fitted estimator, or a Pipeline of scalers ending in one, as an ONNX file: the scalers
become the graph's preprocessing, the class labels its ``label`` output.

    from mlp_manual.sklearn import to_onnx
    to_onnx(pipeline, "model.onnx")   # Pipeline([("scale", StandardScaler()), ("mlp", MLPClassifier())])

Scalers that fold into ``x -> (x - shift) / scale``: ``StandardScaler`` (with or without mean
and std), ``MinMaxScaler`` with its default range (0, 1), ``MaxAbsScaler``, ``RobustScaler``
and "passthrough" steps; several in a row fold into one. Any other step is refused by name.

D = features.
"""

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler
from sklearn.utils.validation import check_is_fitted

from ..datasets.dataset import Preprocessing
from ..errors import ExportError
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
    """(model, ModelInfo) of a fitted mlp-manual estimator, or of a fitted Pipeline of scalers
    ending in one, the scalers folded into the ModelInfo's preprocessing."""
    steps = estimator.steps if isinstance(estimator, Pipeline) else [("estimator", estimator)]
    *scalers, (last_name, last) = steps
    if not isinstance(last, MLPBase):
        raise ExportError(f"{type(last).__name__} is not an mlp-manual estimator (MLPClassifier, MLPRegressor)")
    check_is_fitted(last)
    width = last.n_features_in_
    shift, scale = np.zeros(width), np.ones(width)  # (D,) each: x -> (x - shift) / scale so far
    for name, step in scalers:
        if step is None or step == "passthrough":
            continue
        s, c = scaler_as_shift_scale(step, name, width)
        shift, scale = shift + s * scale, scale * c  # ((x - a) / b - s) / c = (x - (a + s b)) / (b c)
    identity = not np.any(shift) and np.all(scale == 1)
    preprocessing = Preprocessing() if identity else Preprocessing("standardize", shift, scale)
    names = getattr(estimator, "feature_names_in_", None)
    return last.model_, last.model_info(preprocessing, names)


def to_onnx(estimator, path=None):
    """The ONNX model of a fitted mlp-manual estimator, or of a fitted Pipeline of scalers that
    ends in one, with its preprocessing, feature names and class labels (a ``label`` output of
    strings and a ``classes`` metadata entry); written to ``path`` too when given. Needs the
    ``onnx`` package. Raises ExportError for a step or a layer that has no translation."""
    from ..export.onnx import export_model, write_onnx

    proto = export_model(*fitted_model(estimator))
    if path is not None:
        write_onnx(proto, path)
    return proto
