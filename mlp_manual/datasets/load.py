"""From a data config to arrays: the table of dataset loaders, then splits, preprocessing and checks.

N = samples, D = features.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import DataError, out_of_memory
from ..options import Option, declares
from ..readable import readable_bytes
from . import csvfile, real, synthetic, text
from .categories import translate
from .csvfile import read_csv
from .dataset import Dataset, check_arrays, preprocess, split
from .preprocessing import Preprocessing
from .settings import DataSettings


@declares(csvfile.OPTIONS)
def _csv(cfg: DataSettings, rng: np.random.Generator, dtype=np.float64) -> Dataset:
    if not cfg.path:
        raise DataError("data.path is required for the csv dataset")
    options = csvfile.CsvOptions.of(cfg)
    table = read_csv(cfg.path, options, key="data.path", dtype=dtype)
    X, y, names = table.X, table.y, table.class_names
    parts, tables = {}, [table]
    # the other files: the training file's categorical columns, and its features by name when it has names
    like = replace(options, categorical=table.categorical)
    by_name = {"columns_from": f"{cfg.path} (data.path)"} if table.feature_names else {}
    if table.feature_names:
        like = replace(like, columns=table.feature_names, drop=())
    for part in ("val", "test"):
        path = getattr(cfg, f"{part}_path")
        if path:
            other = read_csv(path, like, key=f"data.{part}_path", dtype=dtype, every_class=False, **by_name)
            Xp, yp, part_names = other.X, other.y, other.class_names
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
            tables.append(other)
    levels = _shared_levels(tables)
    columns = {"feature_names": table.feature_names, "levels": levels, "missing_values": cfg.missing_values,
               "decimal": cfg.decimal,
               "target_names": None if table.target_name is None else (table.target_name,)}
    if cfg.task == "regression":
        return Dataset(cfg.name, X, y, source=f"{cfg.path} (data.path)", task_key="data.task", **columns, **parts)
    n_classes = len(names) if names else int(max([y.max(), *(parts[k].max() for k in parts if k[0] == "y")])) + 1
    return Dataset(cfg.name, X, y, n_classes=n_classes, class_names=tuple(names) if names else None,
                   source=f"{cfg.path} (data.path)", task_key="data.task", **columns, **parts)


def _shared_levels(tables: list) -> tuple | None:
    """The texts of each categorical feature over the CSVs ``tables`` (training, then the
    validation and test files), sorted; every table's X recoded, in place, to index them."""
    if tables[0].levels is None:
        return None
    levels = tuple(None if lv is None else tuple(sorted(set().union(*(t.levels[j] for t in tables))))
                   for j, lv in enumerate(tables[0].levels))
    for t in tables:
        for j, lv in enumerate(levels):
            if lv is not None:
                t.X[:, j] = translate(t.X[:, j], list(t.levels[j]), list(lv))
    return levels


# (config, generator, the run's dtype) -> Dataset; a loader of values that may not fit the dtype
# (a user's file) refuses them, naming where they are. Each module of loaders lists its own
# (``LOADERS`` in synthetic.py, real.py, text.py), each loader declaring the data options it reads
# (``options``, in options.py's vocabulary) besides the keys every dataset has (config/schema.py).
LOADERS: dict[str, Callable[[DataSettings, np.random.Generator, np.dtype], Dataset]] = {
    **synthetic.LOADERS, "csv": _csv, **real.LOADERS, **text.LOADERS}


def key_owners() -> dict[str, list[str]]:
    """Each data option -> the datasets that read it."""
    owners: dict[str, list[str]] = {}
    for name, loader in LOADERS.items():
        for key in getattr(loader, "options", {}):  # a loader that declares none reads the common keys
            owners.setdefault(key, []).append(name)
    return owners


def dataset_options() -> dict[str, Option]:
    """Every data option any dataset declares, by key, in the order of LOADERS: the keys of a
    config's data section besides the common ones. A key two datasets read is one option (the
    same declaration), so that it means one thing whichever dataset is named."""
    options: dict[str, Option] = {}
    for name, loader in LOADERS.items():
        for key, option in getattr(loader, "options", {}).items():
            if options.setdefault(key, option) is not option:
                raise TypeError(f"data.{key}: {name} declares an option of its own under a key another dataset "
                                "declares; share the declaration")
    return options


def dataset_label(name: str, path: str | None) -> str:
    """How messages and titles name a config's dataset (``data.name``, ``data.path``): its name,
    or for a dataset read from a file (csv, text) the file's name (``iris.csv``)."""
    return Path(str(path)).name if name in ("csv", "text") and path else name


def load_dataset(cfg: DataSettings, rng: np.random.Generator, dtype=np.float32,
                 fitted: Preprocessing | None = None, fitted_targets: Preprocessing | None = None) -> Dataset:
    """Load the configured dataset, carve test and validation splits, preprocess and cast X.
    The preprocessing is fitted on the training split, or is ``fitted`` when given (a saved model's),
    and so is the targets' (data.target_preprocess): with ``fitted``, ``fitted_targets`` (None:
    the targets are used as they are).

    A dataset with an official test split keeps it; otherwise ``test_fraction`` of the rows
    become the test set. ``val_fraction`` of the remaining training rows become the
    validation set (unless the loader supplied one). A MemoryError on the way becomes a
    MachineError naming the dataset.
    """
    try:
        return _load(cfg, rng, dtype, fitted, fitted_targets)
    except MemoryError:
        raise out_of_memory(f"loading {dataset_label(cfg.name, cfg.path)}", _file_size(cfg)) from None


def _file_size(cfg: DataSettings) -> str | None:
    """``its file holds about 3.2 GB``-style words for the data files of ``cfg``, when it has any."""
    paths = [p for p in (getattr(cfg, k, None) for k in ("path", "val_path", "test_path")) if p]
    try:
        size = sum(Path(p).stat().st_size for p in paths)
    except OSError:
        return None
    return f"its files hold {readable_bytes(size).removeprefix('about ')}" if paths else None


def _load(cfg: DataSettings, rng: np.random.Generator, dtype, fitted: Preprocessing | None,
          fitted_targets: Preprocessing | None) -> Dataset:
    ds = LOADERS[cfg.name](cfg, rng, np.dtype(dtype))
    for part in ("train", "val", "test"):
        X = getattr(ds, f"X_{part}")
        if X is not None:
            check_arrays(ds.source or cfg.name, X, getattr(ds, f"y_{part}"), ds.n_classes, part, filled(cfg))
    if ds.X_test is None and cfg.test_fraction > 0:
        Xtr, ytr, Xte, yte = split(ds.X_train, ds.y_train, cfg.test_fraction, rng, ds.classification)
        ds = replace(ds, X_train=Xtr, y_train=ytr, X_test=Xte, y_test=yte)
    if ds.X_val is None and cfg.val_fraction > 0:
        Xtr, ytr, Xva, yva = split(ds.X_train, ds.y_train, cfg.val_fraction, rng, ds.classification)
        ds = replace(ds, X_train=Xtr, y_train=ytr, X_val=Xva, y_val=yva)
    for part in ("train", "val", "test"):
        X = getattr(ds, f"X_{part}")
        if X is not None and len(X) == 0:
            raise DataError(f"{ds.source or cfg.name}: too few rows for the requested splits: the {part} split "
                            "is empty; lower data.val_fraction / data.test_fraction or add rows")
    with np.errstate(over="ignore", invalid="ignore"):  # what overflows is reported below, by its split and feature
        ds = preprocess(ds, cfg.preprocess, dtype, fitted, cfg.missing if filled(cfg) else "error",
                        cfg.unseen_category)
        if not ds.scalable:  # character indices stay integers
            return ds
        cast = (lambda A: None if A is None else np.ascontiguousarray(A, dtype=dtype))
        ds = replace(ds, X_train=cast(ds.X_train), X_val=cast(ds.X_val), X_test=cast(ds.X_test))
    _check_preprocessed(ds, cfg, np.dtype(dtype))
    if fitted is not None:
        return ds if fitted_targets is None else _scale_targets(ds, cfg, fitted_targets)
    return _scale_targets(ds, cfg) if cfg.target_preprocess != "none" else ds


def _scale_targets(ds: Dataset, cfg: DataSettings, fitted: Preprocessing | None = None) -> Dataset:
    """Regression targets (N, K) of every split standardized by the training split's mean and
    standard deviation (data.target_preprocess), or by ``fitted`` (a saved model's), recorded in
    ``ds.target_preprocessing``."""
    if ds.classification:
        raise DataError(f"{ds.source or cfg.name}: data.target_preprocess: {cfg.target_preprocess} is for regression "
                        "targets, and this data has classes")
    p = fitted or Preprocessing.fit(cfg.target_preprocess, ds.y_train)
    return replace(ds, y_train=p.apply(ds.y_train), y_val=p.apply(ds.y_val), y_test=p.apply(ds.y_test),
                   target_preprocessing=p)


def filled(cfg: DataSettings) -> bool:
    """Whether the configured data may hold missing feature values, to be filled (data.missing)."""
    return cfg.name == "csv" and cfg.missing != "error"


def _check_preprocessed(ds: Dataset, cfg: DataSettings, dtype: np.dtype) -> None:
    """DataError, naming the feature, when preprocessing overflowed: statistics of raw values near
    the dtype's limit (a sum or a square beyond float64), or a value scaled beyond the dtype."""
    p = ds.preprocessing
    stats = np.isfinite(p.shift) & np.isfinite(p.scale)  # (D,) for standardize, a number for scale
    if np.ndim(stats) == 0 and not stats:
        raise DataError(f"{ds.source or cfg.name}: the training values span too wide a range for data.preprocess: "
                        f"{cfg.preprocess} (their largest minus their smallest overflows float64)")
    bad = {"train": ~stats[None, :]} if not stats.all() else {}
    for part in ("train", "val", "test"):
        X = getattr(ds, f"X_{part}")
        if not bad and X is not None and not np.isfinite(X).all():
            bad[part] = ~np.isfinite(X)
    for part, where in bad.items():
        column = int(np.argwhere(where)[0][1])
        if p.categories is not None:  # only a number column overflows; it comes first among the inputs
            column = p.numbers[column]
        feature = f" ({ds.feature_names[column]})" if ds.feature_names else ""
        raise DataError(f"{ds.source or cfg.name}: feature {column + 1}{feature} overflows {dtype.name} once "
                        f"preprocessed (data.preprocess: {cfg.preprocess}), in the {part} split: its values span too "
                        "wide a range (near the largest numbers the dtype holds)")
