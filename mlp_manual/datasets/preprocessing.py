"""The preprocessing of raw features into model inputs, fitted on the training split and kept
for prediction: missing values filled, numbers scaled or standardized, categories one-hot.

N = samples, R = raw feature columns, D = model inputs.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from . import categories as cat
from .cells import DECIMAL_MARKS

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
    """A fitted preprocessing of raw features (N, R) into model inputs (N, D), the same in
    training and prediction.

    First, with ``fill``, a missing (NaN) value becomes its column's fill value. Then the
    numbers become ``(x - shift) / scale``: kind "none" uses them as they are; "scale": shift and
    scale are numbers, the training minimum and (max - min) over all values, so images keep
    their relative intensities; "standardize": shift and scale are arrays, each number column's
    training mean and standard deviation (a constant column gets scale 1: centred, unscaled).
    With ``categories``, a categorical column (its codes, categories.py) becomes one 0/1
    column per category instead: the model inputs are the number columns, then the one-hot
    columns of each categorical column in order.
    """

    kind: str = "none"
    shift: float | np.ndarray = 0.0
    scale: float | np.ndarray = 1.0
    fill: np.ndarray | None = None  # (R,): what a missing input becomes first (a category's code); None: none
    categories: tuple | None = None  # (R,): None for a number column, or a categorical column's categories
    unseen: str = "error"  # data.unseen_category, kept for prediction: an unseen category is an error, or zeros
    # data.missing_values, kept for prediction: the texts of a missing value besides an empty cell;
    # None for a model not trained on a CSV (only an empty cell is missing)
    missing_values: tuple[str, ...] | None = None
    decimal: str = "."  # data.decimal, kept for prediction: the decimal mark of a CSV's numbers

    @property
    def numbers(self) -> list[int]:
        """The raw columns that are numbers (all of them without categories)."""
        if self.categories is None:
            raise ValueError("the number columns are known only with categories")
        return [j for j, c in enumerate(self.categories) if c is None]

    @property
    def categorical(self) -> list[int]:
        """The raw columns that hold categories."""
        return [] if self.categories is None else [j for j, c in enumerate(self.categories) if c is not None]

    def raw_width(self, width: int) -> int:
        """R, the raw columns of a model that takes ``width`` inputs."""
        return width if self.categories is None else len(self.categories)

    def input_names(self, names: tuple[str, ...]) -> list[str]:
        """The model inputs' names from the raw columns' ``names``: a number column's name, then
        ``colour=red`` for each category."""
        if self.categories is None:
            return list(names)
        return [names[j] for j in self.numbers] + [f"{names[j]}={c}" for j in self.categorical
                                                   for c in self.categories[j]]

    @classmethod
    def fit(cls, kind: str, X: np.ndarray, missing: str = "error", levels: tuple | None = None,
            unseen: str = "error", missing_values: tuple[str, ...] | None = None,
            decimal: str = ".") -> "Preprocessing":
        """Fit ``kind`` on the training inputs X (N, R), after filling their missing values as
        ``missing`` says (a MISSING_KINDS name; "error": X has none). With ``levels`` (the
        texts a categorical column's codes index), the categories are those in X, each column's
        most frequent one filling its missing values. ``missing_values`` and ``decimal`` are kept as
        they are."""
        categories = None
        if levels is not None:
            categories = tuple(None if lv is None else tuple(lv[int(c)] for c in np.unique(X[:, j][~np.isnan(X[:, j])]))
                               for j, lv in enumerate(levels))
            X = cls(categories=categories).recode(X, levels)
        fill = None
        if missing != "error":
            fill = fill_values(X, missing)
            if categories:  # a categorical column's missing value is its most frequent category
                coded = [j for j, c in enumerate(categories) if c is not None]
                fill[coded] = fill_values(X[:, coded], "most_frequent")
            X = np.where(np.isnan(X), fill, X)
        if categories is not None:
            X = X[:, [j for j, c in enumerate(categories) if c is None]]  # (N, number columns)
        if kind == "none" or X.shape[1] == 0:
            return cls(fill=fill, categories=categories, unseen=unseen, missing_values=missing_values, decimal=decimal)
        if kind == "scale":
            lo, hi = X.min(), X.max()
            return cls(kind, float(lo), float(hi - lo) if hi > lo else 1.0, fill,  # the difference in X's dtype
                       categories, unseen, missing_values, decimal)
        std = X.std(axis=0)  # (D,)
        return cls(kind, X.mean(axis=0), np.where(std > 0, std, 1.0), fill, categories, unseen, missing_values,
                   decimal)

    def recode(self, X: np.ndarray, levels: tuple, part: str = "", source: str = "",
               names: tuple[str, ...] | None = None) -> np.ndarray:
        """Raw features X (N, R) whose categorical codes index ``levels`` -> codes into this
        preprocessing's categories. A category it lacks is -1 when ``unseen`` is "zeros", else a
        DataError naming ``source``, the ``part`` (split) that holds it and the column (by its
        name in ``names``, when given)."""
        out = X.copy()
        for j in self.categorical:
            out[:, j] = cat.translate(X[:, j], list(levels[j]), list(self.categories[j]))
            unseen = np.flatnonzero(out[:, j] == -1)
            if self.unseen == "error" and unseen.size:
                value = levels[j][int(X[unseen[0], j])]
                column = repr(names[j]) if names else f"feature {j + 1}"
                raise DataError(f"{source}: the {part} split has the category {value!r} in {column}, which "
                                f"the training split lacks ({cat.shown(self.categories[j])}); set "
                                "data.unseen_category: zeros to read such a value as all zeros, or move the rows")
        return out

    def apply(self, X: np.ndarray | None, dtype=None) -> np.ndarray | None:
        """(N, R) raw inputs -> (N, D) model inputs: float64, or ``dtype`` when given, unless the
        kind is "none". Bytes (uint8 images) under "scale" are looked up in a table of the 256
        values, computed as for any input, then cast: the same numbers, without the (N, D)
        float64 temporaries."""
        if X is None or (self.kind == "none" and self.fill is None and self.categories is None):
            return X
        if self.fill is not None:
            X = np.where(np.isnan(X), self.fill, X)  # (N, R)
            if self.kind == "none" and self.categories is None:
                return X if dtype is None else X.astype(dtype)
        if self.categories is not None:
            numbers = X[:, self.numbers]  # (N, number columns)
            if self.kind != "none":
                numbers = (numbers - self.shift) / self.scale
            out = np.hstack([numbers] + [cat.one_hot(X[:, j], len(self.categories[j]))  # (N, D)
                                         for j in self.categorical])
            return out if dtype is None else out.astype(dtype)
        if X.dtype == np.uint8 and self.kind == "scale":
            table = (np.arange(256) - self.shift) / self.scale  # (256,) float64
            return table.astype(np.float64 if dtype is None else dtype)[X]
        out = (X - self.shift) / self.scale
        return out if dtype is None else out.astype(dtype)

    def to_json(self) -> dict:
        """``{"kind": "none"}``, ``{"kind": "scale", "shift": x, "scale": y}`` or
        ``{"kind": "standardize", "shift": [...], "scale": [...]}`` (one number per number
        column), with ``fill`` (one per raw column) when missing values are filled, and
        ``categories`` (per raw column: null, or its categories) and ``unseen`` with categories,
        ``missing_values`` when kept, and ``decimal`` when it is not "."."""
        as_json = (lambda v: float(v) if np.ndim(v) == 0 else [float(x) for x in v])
        spec = {"kind": "none"} if self.kind == "none" else \
            {"kind": self.kind, "shift": as_json(self.shift), "scale": as_json(self.scale)}
        if self.fill is not None:
            spec["fill"] = as_json(self.fill)
        if self.categories is not None:
            spec["categories"] = [None if c is None else list(c) for c in self.categories]
            spec["unseen"] = self.unseen
        if self.missing_values is not None:
            spec["missing_values"] = list(self.missing_values)
        if self.decimal != ".":
            spec["decimal"] = self.decimal
        return spec

    @classmethod
    def from_json(cls, spec, n_features: int | None) -> "Preprocessing":
        """The inverse of ``to_json``; raises ValueError saying what is wrong. ``n_features``
        (when known) is the number of model inputs, which the lists must fit."""
        if not isinstance(spec, dict) or spec.get("kind") not in PREPROCESS_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PREPROCESS_KINDS)}")
        kind = spec["kind"]
        if set(spec) - {"fill", "categories", "unseen", "missing_values", "decimal"} != (
                {"kind"} if kind == "none" else {"kind", "shift", "scale"}):
            raise ValueError(f"{kind} has keys {sorted(spec)}")
        categories, unseen, raw, numbers = None, "error", n_features, n_features
        if "categories" in spec or "unseen" in spec:
            categories, unseen = spec.get("categories"), spec.get("unseen")
            if not isinstance(categories, list) or not all(
                    c is None or (isinstance(c, list) and c and all(isinstance(t, str) for t in c)
                                  and len(set(c)) == len(c)) for c in categories):
                raise ValueError("categories must be a list holding, per raw column, null or distinct texts")
            if unseen not in cat.UNSEEN_KINDS:
                raise ValueError(f"unseen must be one of {', '.join(cat.UNSEEN_KINDS)}")
            categories = tuple(None if c is None else tuple(c) for c in categories)
            raw, numbers = len(categories), sum(c is None for c in categories)
            if n_features is not None and numbers + sum(len(c) for c in categories if c) != n_features:
                raise ValueError(f"categories must give {n_features} model inputs with the number columns")
        fill = None
        if "fill" in spec:
            v = spec["fill"]
            if not isinstance(v, list) or (raw is not None and len(v) != raw) or not all(_finite_number(x) for x in v):
                raise ValueError(f"fill must be a list of {raw} finite numbers, one per raw column")
            fill = np.array(v, dtype=np.float64)
        missing_values = spec.get("missing_values")
        if missing_values is not None:
            if not (isinstance(missing_values, list) and all(isinstance(t, str) for t in missing_values)):
                raise ValueError("missing_values must be a list of texts")
            missing_values = tuple(missing_values)
        decimal = spec.get("decimal", ".")
        if decimal not in DECIMAL_MARKS:
            raise ValueError(f"decimal must be one of {', '.join(map(repr, DECIMAL_MARKS))}")
        if kind == "none":
            return cls(fill=fill, categories=categories, unseen=unseen, missing_values=missing_values, decimal=decimal)
        values = {}
        for key in ("shift", "scale"):
            v = spec[key]
            items = v if kind == "standardize" and isinstance(v, list) else [v]
            if kind == "standardize" and (not isinstance(v, list) or (numbers is not None and len(v) != numbers)):
                raise ValueError(f"{key} must be a list of {numbers} numbers, one per number column")
            if not all(_finite_number(x) for x in items) or (key == "scale" and min(items, default=1) <= 0):
                raise ValueError(f"{key} must hold finite numbers" + (" > 0" if key == "scale" else ""))
            values[key] = np.array(v, dtype=np.float64) if kind == "standardize" else float(v)
        return cls(kind, values["shift"], values["scale"], fill, categories, unseen, missing_values, decimal)

    def invert(self, X: np.ndarray) -> np.ndarray:
        """Model inputs (N, D) back to raw units (for plots of number columns)."""
        return X if self.kind == "none" else X * self.scale + self.shift


def _finite_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
