"""From a data config to arrays: load, split (stratified for classes), preprocess, validate.

N = samples, D = features, K = regression targets.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from . import synthetic
from .config import DataConfig
from .csvdata import read_csv
from .errors import DataError


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

    @property
    def classification(self) -> bool:
        return self.n_classes is not None

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    @property
    def target_width(self) -> int:
        return 1 if self.classification else self.y_train.shape[1]


def _generated(fn, **keys) -> Callable[[DataConfig, np.random.Generator], Dataset]:
    def load(cfg: DataConfig, rng: np.random.Generator) -> Dataset:
        X, y = fn(rng, **{arg: getattr(cfg, key) for arg, key in keys.items()})
        classes = None if y.dtype.kind == "f" else int(y.max()) + 1
        return Dataset(cfg.name, X, y, n_classes=classes)
    return load


def _real(name: str) -> Callable[[DataConfig, np.random.Generator], Dataset]:
    """A loader from ``realdata``, imported when first used because realdata builds on this module."""
    def load(cfg: DataConfig, rng: np.random.Generator) -> Dataset:
        from . import realdata
        return getattr(realdata, name)(cfg, rng)
    return load


def _csv(cfg: DataConfig, rng: np.random.Generator) -> Dataset:
    if not cfg.path:
        raise DataError("data.path is required for the csv dataset")
    X, y, names = read_csv(cfg.path, cfg.target, cfg.header, cfg.delimiter, cfg.task)
    parts = {}
    for part in ("val", "test"):
        path = getattr(cfg, f"{part}_path")
        if path:
            Xp, yp, part_names = read_csv(path, cfg.target, cfg.header, cfg.delimiter, cfg.task, every_class=False)
            if Xp.shape[1] != X.shape[1]:
                raise DataError(f"{path}: has {Xp.shape[1]} feature columns, {cfg.path} has {X.shape[1]}")
            if names is not None:  # text labels: map by the training file's classes
                unknown = sorted(set(part_names) - set(names))
                if unknown:
                    raise DataError(f"{path}: class labels {unknown[:3]} do not occur in {cfg.path}")
                yp = np.array([names.index(part_names[i]) for i in yp], dtype=np.int64)
            elif part_names is not None:
                raise DataError(f"{path}: has text class labels, {cfg.path} has integer ones")
            elif cfg.task == "classification" and yp.max() > y.max():
                raise DataError(f"{path}: class label {int(yp.max())} does not occur in {cfg.path} "
                                f"(labels 0..{int(y.max())})")
            parts.update({f"X_{part}": Xp, f"y_{part}": yp})
    if cfg.task == "regression":
        return Dataset(cfg.name, X, y, **parts)
    n_classes = len(names) if names else int(max([y.max(), *(parts[k].max() for k in parts if k[0] == "y")])) + 1
    return Dataset(cfg.name, X, y, n_classes=n_classes, class_names=tuple(names) if names else None, **parts)


LOADERS: dict[str, Callable[[DataConfig, np.random.Generator], Dataset]] = {
    "xor": _generated(synthetic.xor, copies="copies", noise="noise"),
    "moons": _generated(synthetic.moons, n="n_samples", noise="noise"),
    "circles": _generated(synthetic.circles, n="n_samples", noise="noise"),
    "spirals": _generated(synthetic.spirals, n="n_samples", noise="noise", arms="arms"),
    "blobs": _generated(synthetic.blobs, n="n_samples", noise="noise", centers="centers"),
    "sine": _generated(synthetic.sine, n="n_samples", noise="noise"),
    "csv": _csv,
    "digits": _real("digits"),
    "mnist1d": _real("mnist1d"),
    "mnist": _real("mnist"),
    "fashion_mnist": _real("fashion_mnist"),
}


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


def load_dataset(cfg: DataConfig, rng: np.random.Generator, dtype=np.float32) -> Dataset:
    """Load the configured dataset, carve test and validation splits, preprocess and cast X.

    A dataset with an official test split keeps it; otherwise ``test_fraction`` of the rows
    become the test set. ``val_fraction`` of the remaining training rows become the
    validation set (unless the loader supplied one).
    """
    ds = LOADERS[cfg.name](cfg, rng)
    for part in ("train", "val", "test"):
        X = getattr(ds, f"X_{part}")
        if X is not None:
            check_arrays(cfg.name, X, getattr(ds, f"y_{part}"), ds.n_classes, part)
    if ds.X_test is None and cfg.test_fraction > 0:
        Xtr, ytr, Xte, yte = split(ds.X_train, ds.y_train, cfg.test_fraction, rng, ds.classification)
        ds = replace(ds, X_train=Xtr, y_train=ytr, X_test=Xte, y_test=yte)
    if ds.X_val is None and cfg.val_fraction > 0:
        Xtr, ytr, Xva, yva = split(ds.X_train, ds.y_train, cfg.val_fraction, rng, ds.classification)
        ds = replace(ds, X_train=Xtr, y_train=ytr, X_val=Xva, y_val=yva)
    for part in ("train", "val", "test"):
        X = getattr(ds, f"X_{part}")
        if X is not None and len(X) == 0:
            raise DataError(f"{cfg.name}: the {part} split is empty; lower data.val_fraction / data.test_fraction "
                            "or add data")
    ds = preprocess(ds, cfg.preprocess)
    cast = (lambda A: None if A is None else np.ascontiguousarray(A, dtype=dtype))
    return replace(ds, X_train=cast(ds.X_train), X_val=cast(ds.X_val), X_test=cast(ds.X_test))
