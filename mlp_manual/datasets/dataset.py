"""A dataset's arrays and what is done to them: split (stratified for classes), preprocess, validate.

N = samples, D = features, K = regression targets.
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import DataError
from .vocabulary import Vocabulary


@dataclass(frozen=True)
class Dataset:
    """Arrays of one run. y is (N,) int64 class labels, or (N, K) float targets for regression;
    val and test are None when absent."""

    name: str
    X_train: np.ndarray  # (N, D)
    y_train: np.ndarray
    X_val: np.ndarray | None = None
    y_val: np.ndarray | None = None
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    n_classes: int | None = None  # None for regression
    class_names: tuple[str, ...] | None = None
    image_shape: tuple[int, ...] | None = None  # e.g. (28, 28), for plots of inputs
    source: str | None = None  # the file and config key the data came from, named in errors
    task_key: str | None = None  # the config key that chose class labels or numbers (data.task of a CSV)
    feature_names: tuple[str, ...] | None = None  # (D,), a CSV's header without the target
    target_names: tuple[str, ...] | None = None  # (K,) for regression, (1,) for classification
    preprocessing: "Preprocessing | None" = None  # fitted by ``preprocess``
    vocabulary: "Vocabulary | None" = None  # text data: X holds (N, T) character indices, y the next one

    @property
    def text(self) -> bool:
        return self.vocabulary is not None

    @property
    def classification(self) -> bool:
        return self.n_classes is not None

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    @property
    def class_names_or_numbers(self) -> tuple[str, ...]:
        """What to call each class in tables and plots: ``class_names``, the characters of text
        data (the boundary token's label first), or "0", "1", ... without."""
        if self.text:
            return tuple(self.vocabulary.label(i) for i in range(self.vocabulary.size))
        return self.class_names or tuple(str(c) for c in range(self.n_classes))

    @property
    def target_width(self) -> int:
        return 1 if self.classification else self.y_train.shape[1]


def target_labels(names: tuple[str, ...] | None, k: int) -> list[str]:
    """What to call K regression targets: their names (a CSV's header cells), else y, or y0, y1, ..."""
    if names:
        return list(names)
    return ["y"] if k == 1 else [f"y{j}" for j in range(k)]


def split(X: np.ndarray, y: np.ndarray, fraction: float, rng: np.random.Generator, stratify: bool):
    """Move ``fraction`` of the rows to a second set, per class when ``stratify``.

    Returns: X_keep, y_keep, X_out, y_out (rows of each in their original order).
    """
    n = len(X)
    if stratify:
        out = []
        for c in np.unique(y):
            idx = rng.permutation(np.flatnonzero(y == c))
            out.append(idx[:int(round(fraction * len(idx)))])
        out = np.concatenate(out)
    else:
        out = rng.permutation(n)[:int(round(fraction * n))]
    mask = np.zeros(n, dtype=bool)
    mask[out] = True
    return X[~mask], y[~mask], X[mask], y[mask]


def check_arrays(name: str, X: np.ndarray, y: np.ndarray, n_classes: int | None, part: str,
                 missing: bool = False) -> None:
    """Raise DataError for empty data, non-finite values (but NaN, a missing value, when
    ``missing`` values are filled), or labels outside 0..C-1."""
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"{name}: {part} data is empty (shape {X.shape})")
    if len(y) != len(X):
        raise DataError(f"{name}: {part} has {len(X)} inputs but {len(y)} targets")
    bad = ~np.isfinite(X) & ~(missing & np.isnan(X))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataError(f"{name}: {part} inputs hold {int(bad.sum())} non-finite values (NaN or inf), "
                        f"the first at row {r}, feature {c}")
    if n_classes is None:
        if not np.all(np.isfinite(y)):
            raise DataError(f"{name}: {part} targets hold non-finite values")
    elif y.min() < 0 or y.max() >= n_classes:
        raise DataError(f"{name}: {part} labels must lie in 0..{n_classes - 1}, found {int(y.min())}..{int(y.max())}")


PREPROCESS_KINDS = ("none", "scale", "standardize")
# data.missing: "error", or how an empty feature cell is filled, from the training split
MISSING_KINDS = ("error", "mean", "median", "most_frequent")


def fill_values(X: np.ndarray, how: str) -> np.ndarray:
    """Each feature's fill value (D,) for its missing (NaN) values: the mean, the median or the
    most frequent of its other training values (the smallest of those equally frequent).
    Raises DataError for a feature with no value at all."""
    empty = np.all(np.isnan(X), axis=0)  # (D,)
    if empty.any():
        raise DataError(f"feature {int(np.argmax(empty)) + 1} has no value in the training split to fill its "
                        f"missing cells with (data.missing: {how})")
    if how == "mean":
        return np.nanmean(X, axis=0)
    if how == "median":
        return np.nanmedian(X, axis=0)
    fill = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        values, counts = np.unique(X[~np.isnan(X[:, j]), j], return_counts=True)  # sorted values
        fill[j] = values[np.argmax(counts)]
    return fill


@dataclass(frozen=True)
class Preprocessing:
    """A fitted preprocessing ``x -> (x - shift) / scale``, the same in training and prediction.

    kind "none": the inputs are used as they are. "scale": shift and scale are numbers, the
    training minimum and (max - min) over all values, so images keep their relative intensities.
    "standardize": shift and scale are (D,) arrays, each feature's training mean and standard
    deviation; a constant feature gets scale 1, so it is centred and left unscaled.
    """

    kind: str = "none"
    shift: float | np.ndarray = 0.0
    scale: float | np.ndarray = 1.0
    fill: np.ndarray | None = None  # (D,): what a missing (NaN) input becomes first; None: none is filled

    @classmethod
    def fit(cls, kind: str, X: np.ndarray, missing: str = "error") -> "Preprocessing":
        """Fit ``kind`` on the training inputs X (N, D), after filling their missing values as
        ``missing`` says (a MISSING_KINDS name; "error": X has none)."""
        fill = None
        if missing != "error":
            fill = fill_values(X, missing)
            X = np.where(np.isnan(X), fill, X)
        if kind == "none":
            return cls(fill=fill)
        if kind == "scale":
            lo, hi = X.min(), X.max()
            return cls(kind, float(lo), float(hi - lo) if hi > lo else 1.0, fill)  # the difference in X's dtype
        std = X.std(axis=0)  # (D,)
        return cls(kind, X.mean(axis=0), np.where(std > 0, std, 1.0), fill)

    def apply(self, X: np.ndarray | None, dtype=None) -> np.ndarray | None:
        """(N, D) raw inputs -> (N, D) model inputs: float64, or ``dtype`` when given, unless the
        kind is "none". Bytes (uint8 images) under "scale" are looked up in a table of the 256
        values, computed as for any input, then cast: the same numbers, without the (N, D)
        float64 temporaries."""
        if X is None or (self.kind == "none" and self.fill is None):
            return X
        if self.fill is not None:
            X = np.where(np.isnan(X), self.fill, X)  # (N, D)
            if self.kind == "none":
                return X if dtype is None else X.astype(dtype)
        if X.dtype == np.uint8 and self.kind == "scale":
            table = (np.arange(256) - self.shift) / self.scale  # (256,) float64
            return table.astype(np.float64 if dtype is None else dtype)[X]
        out = (X - self.shift) / self.scale
        return out if dtype is None else out.astype(dtype)

    def to_json(self) -> dict:
        """``{"kind": "none"}``, ``{"kind": "scale", "shift": x, "scale": y}`` or
        ``{"kind": "standardize", "shift": [...], "scale": [...]}`` (one number per feature)."""
        as_json = (lambda v: float(v) if np.ndim(v) == 0 else [float(x) for x in v])
        spec = {"kind": "none"} if self.kind == "none" else \
            {"kind": self.kind, "shift": as_json(self.shift), "scale": as_json(self.scale)}
        return spec if self.fill is None else {**spec, "fill": as_json(self.fill)}

    @classmethod
    def from_json(cls, spec, n_features: int | None) -> "Preprocessing":
        """The inverse of ``to_json``; raises ValueError saying what is wrong. ``n_features``
        (when known) is the length the per-feature lists of "standardize" must have."""
        if not isinstance(spec, dict) or spec.get("kind") not in PREPROCESS_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PREPROCESS_KINDS)}")
        kind = spec["kind"]
        if set(spec) - {"fill"} != ({"kind"} if kind == "none" else {"kind", "shift", "scale"}):
            raise ValueError(f"{kind} has keys {sorted(spec)}")
        fill = None
        if "fill" in spec:
            v = spec["fill"]
            if not isinstance(v, list) or (n_features is not None and len(v) != n_features) \
                    or not all(_finite_number(x) for x in v):
                raise ValueError(f"fill must be a list of {n_features} finite numbers, one per feature")
            fill = np.array(v, dtype=np.float64)
        if kind == "none":
            return cls(fill=fill)
        values = {}
        for key in ("shift", "scale"):
            v = spec[key]
            items = v if kind == "standardize" and isinstance(v, list) else [v]
            if kind == "standardize" and (not isinstance(v, list) or (n_features is not None and len(v) != n_features)):
                raise ValueError(f"{key} must be a list of {n_features} numbers, one per feature")
            if not all(_finite_number(x) for x in items) or (key == "scale" and min(items) <= 0):
                raise ValueError(f"{key} must hold finite numbers" + (" > 0" if key == "scale" else ""))
            values[key] = np.array(v, dtype=np.float64) if kind == "standardize" else float(v)
        return cls(kind, values["shift"], values["scale"], fill)

    def invert(self, X: np.ndarray) -> np.ndarray:
        """Model inputs (N, D) back to raw units (for plots)."""
        return X if self.kind == "none" else X * self.scale + self.shift


def _finite_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def preprocess(ds: Dataset, how: str, dtype=None, fitted: "Preprocessing | None" = None,
               missing: str = "error") -> Dataset:
    """Fit ``how`` (a ``PREPROCESS_KINDS`` name), after filling missing values as ``missing``
    says, on the training split only, or take ``fitted`` statistics as they are, apply it to
    every split (giving ``dtype`` arrays when given), and record it in ``ds.preprocessing``."""
    try:
        p = fitted or Preprocessing.fit(how, ds.X_train, missing)
    except DataError as e:
        raise DataError(f"{ds.source or ds.name}: {e}") from None
    return replace(ds, X_train=p.apply(ds.X_train, dtype), X_val=p.apply(ds.X_val, dtype),
                   X_test=p.apply(ds.X_test, dtype), preprocessing=p)
