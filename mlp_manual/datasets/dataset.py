"""A dataset's arrays and what is done to them: split (stratified for classes), validated and
preprocessed (``preprocess``, with the statistics preprocessing.py fits).

N = samples, D = features, K = regression targets.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..errors import DataError
from . import categories as cat
from .preprocessing import Preprocessing
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
    preprocessing: Preprocessing | None = None  # fitted by ``preprocess``
    vocabulary: "Vocabulary | None" = None  # text data: X holds (N, T) character indices, y the next one
    # before preprocessing, per feature: None for a number, or the texts a categorical column's
    # codes index (categories.py); None when no feature is categorical
    levels: tuple | None = None
    # regression: how y (every split) was standardized (data.target_preprocess); None: y as in the data
    target_preprocessing: Preprocessing | None = None
    missing_values: tuple[str, ...] | None = None  # a CSV's texts of a missing value (data.missing_values)
    decimal: str = "."  # a CSV's decimal mark (data.decimal)

    @property
    def text(self) -> bool:
        return self.vocabulary is not None

    @property
    def classification(self) -> bool:
        return self.n_classes is not None

    @property
    def scalable(self) -> bool:
        """Whether the inputs are quantities, which preprocessing may scale and advice may say to
        scale; character indices (text) are not."""
        return not self.text

    @property
    def in_a_plane(self) -> bool:
        """Whether the inputs are two quantities (not one-hot columns, not character indices),
        whose plane a figure can show: a decision boundary is drawn over it."""
        return self.scalable and self.n_features == 2 and not self.levels

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


def preprocess(ds: Dataset, how: str, dtype=None, fitted: Preprocessing | None = None,
               missing: str = "error", unseen: str = "error") -> Dataset:
    """Fit ``how`` (a ``PREPROCESS_KINDS`` name), after filling missing values as ``missing``
    says and finding the categories of categorical columns, on the training split only, or take
    ``fitted`` statistics as they are, apply it to every split (giving ``dtype`` arrays when
    given), and record it in ``ds.preprocessing``. A category the training split lacks is read
    as ``unseen`` says (categories.UNSEEN_KINDS)."""
    source = ds.source or ds.name
    try:
        p = fitted or Preprocessing.fit(how, ds.X_train, missing, ds.levels, unseen, ds.missing_values, ds.decimal)
    except DataError as e:
        raise DataError(f"{source}: {e}") from None
    if p.categories is not None and ds.levels is None:
        raise DataError(f"{source}: the model has categorical columns, the data has none")
    splits = {part: getattr(ds, f"X_{part}") for part in ("train", "val", "test")}
    if p.categories is not None:
        cat.check_one_hot_size(p.categories, sum(len(X) for X in splits.values() if X is not None), ds.feature_names,
                               source)
    if ds.levels is not None:
        if p.categories is None or [c is None for c in p.categories] != [lv is None for lv in ds.levels]:
            raise DataError(f"{source}: its categorical columns are not the model's")
        splits = {part: None if X is None else p.recode(X, ds.levels, part, source, ds.feature_names)
                  for part, X in splits.items()}
    return replace(ds, **{f"X_{part}": p.apply(X, dtype) for part, X in splits.items()}, preprocessing=p)
