"""A dataset's arrays and what is done to them: split (stratified for classes), preprocess, validate.

N = samples, D = features, K = regression targets.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..errors import DataError


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

    @property
    def classification(self) -> bool:
        return self.n_classes is not None

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    @property
    def class_names_or_numbers(self) -> tuple[str, ...]:
        """What to call each class in tables and plots: ``class_names``, or "0", "1", ... without."""
        return self.class_names or tuple(str(c) for c in range(self.n_classes))

    @property
    def target_width(self) -> int:
        return 1 if self.classification else self.y_train.shape[1]


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


def check_arrays(name: str, X: np.ndarray, y: np.ndarray, n_classes: int | None, part: str) -> None:
    """Raise DataError for empty data, non-finite values, or labels outside 0..C-1."""
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"{name}: {part} data is empty (shape {X.shape})")
    if len(y) != len(X):
        raise DataError(f"{name}: {part} has {len(X)} inputs but {len(y)} targets")
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataError(f"{name}: {part} inputs hold {int(bad.sum())} non-finite values (NaN or inf), "
                        f"the first at row {r}, feature {c}")
    if n_classes is None:
        if not np.all(np.isfinite(y)):
            raise DataError(f"{name}: {part} targets hold non-finite values")
    elif y.min() < 0 or y.max() >= n_classes:
        raise DataError(f"{name}: {part} labels must lie in 0..{n_classes - 1}, found {int(y.min())}..{int(y.max())}")


def preprocess(ds: Dataset, how: str) -> Dataset:
    """Scale to [0, 1] (one min and max over all training values, so images keep their relative
    intensities) or standardise per feature; statistics come from the training split only.
    A constant feature is centred and left unscaled."""
    if how == "none":
        return ds
    X = ds.X_train
    if how == "scale":
        lo, hi = X.min(), X.max()
        shift, scale = lo, (hi - lo) if hi > lo else 1.0
    else:
        shift, scale = X.mean(axis=0), X.std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
    f = (lambda A: None if A is None else (A - shift) / scale)
    return replace(ds, X_train=f(ds.X_train), X_val=f(ds.X_val), X_test=f(ds.X_test))
