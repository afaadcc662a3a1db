"""Small datasets generated from a seed: no files, no download.

Each generator returns X (N, D) float64 and y: (N,) int64 class labels, or (N, 1) float64
targets for the sine regression. N = samples, D = 2 features (1 for sine). At the end,
``LOADERS`` names each as a dataset: its generator, and the config options it reads.
"""


import numpy as np

from ..errors import DataError, short_repr
from ..options import COUNT, FLOAT, INTEGER, NOT_NEGATIVE, Option
from .dataset import Dataset
from .settings import DataSettings

# The options a config's data section sets for these datasets (load.py names which reads which).
OPTIONS = {
    "n_samples": Option(COUNT, 300, help="points to generate"),
    "noise": Option(FLOAT, 0.1, *NOT_NEGATIVE, "the standard deviation of the noise"),
    "copies": Option(COUNT, 1, help="copies of the four points"),
    "arms": Option(INTEGER, 3, lambda v: v >= 2, "be >= 2", "spiral arms, one class each"),
    "centers": Option(INTEGER, 3, lambda v: v >= 2, "be >= 2", "blobs, one class each"),
}


def xor(rng: np.random.Generator, copies: int = 1, noise: float = 0.0):
    """The four XOR points, repeated ``copies`` times with Gaussian ``noise`` added to the copies
    after the first (the first copy is always the four exact points)."""
    corners = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    labels = np.array([0, 1, 1, 0])
    X = np.tile(corners, (copies, 1))  # (4 * copies, 2)
    X[4:] += rng.normal(0.0, noise, size=X[4:].shape)
    return X, np.tile(labels, copies)


def moons(rng: np.random.Generator, n: int = 300, noise: float = 0.1):
    """Two interleaving half circles."""
    n0 = n // 2
    t0 = rng.uniform(0, np.pi, n0)
    t1 = rng.uniform(0, np.pi, n - n0)
    X = np.concatenate([np.stack([np.cos(t0), np.sin(t0)], 1),
                        np.stack([1 - np.cos(t1), 0.5 - np.sin(t1)], 1)])  # (N, 2)
    X += rng.normal(0.0, noise, size=X.shape)
    return X, np.repeat([0, 1], [n0, n - n0])


def circles(rng: np.random.Generator, n: int = 300, noise: float = 0.1, factor: float = 0.5):
    """A circle inside a larger circle; the inner one has radius ``factor``."""
    n0 = n // 2
    t = rng.uniform(0, 2 * np.pi, n)
    r = np.where(np.arange(n) < n0, 1.0, factor)
    X = np.stack([r * np.cos(t), r * np.sin(t)], 1) + rng.normal(0.0, noise, size=(n, 2))  # (N, 2)
    return X, (np.arange(n) >= n0).astype(np.int64)


def spirals(rng: np.random.Generator, n: int = 300, noise: float = 0.1, arms: int = 3):
    """``arms`` interleaved spiral arms, one class each (the CS231n toy problem)."""
    per = [n // arms + (i < n % arms) for i in range(arms)]
    X, y = [], []
    for k, m in enumerate(per):
        r = np.linspace(0.05, 1.0, m)
        t = np.linspace(k * 2 * np.pi / arms, k * 2 * np.pi / arms + 4.0, m) + rng.normal(0, noise, m)
        X.append(np.stack([r * np.sin(t), r * np.cos(t)], 1))
        y.append(np.full(m, k))
    return np.concatenate(X), np.concatenate(y)


def blobs(rng: np.random.Generator, n: int = 300, noise: float = 0.1, centers: int = 3):
    """Gaussian blobs around ``centers`` points on a circle of radius 2; ``noise`` scales the spread."""
    angles = 2 * np.pi * np.arange(centers) / centers
    means = 2 * np.stack([np.cos(angles), np.sin(angles)], 1)  # (centers, 2)
    y = np.arange(n) % centers
    return means[y] + rng.normal(0.0, 1.0, size=(n, 2)) * max(noise, 1e-3) * 5, y


def sine(rng: np.random.Generator, n: int = 300, noise: float = 0.1):
    """y = sin(x) + noise for x uniform in [-pi, pi]: a one-feature regression."""
    x = rng.uniform(-np.pi, np.pi, size=(n, 1))
    return x, np.sin(x) + rng.normal(0.0, noise, size=(n, 1))


class Generated:
    """The loader of a dataset generated from the seed: ``fn(rng, **{arg: cfg.<key>})`` for the
    config keys in ``keys``, options that OPTIONS declares. ``rows_key`` is the config key that sets how many rows it has,
    ``per_row`` rows per unit of it; ``features`` its input columns; ``classes_key`` the key
    that sets its number of classes, if one does."""

    def __init__(self, fn, rows_key: str = "n_samples", per_row: int = 1, features: int = 2,
                 classes_key: str | None = None, **keys):
        self.fn, self.rows_key, self.per_row, self.features, self.keys = fn, rows_key, per_row, features, keys
        self.classes_key = classes_key
        self.options = {key: OPTIONS[key] for key in keys.values()}  # the data options it reads

    def rows(self, cfg: DataSettings) -> int:
        """How many rows the config asks for, known before anything is generated."""
        return self.per_row * getattr(cfg, self.rows_key)

    def __call__(self, cfg: DataSettings, rng: np.random.Generator, dtype=None) -> Dataset:
        if self.classes_key and getattr(cfg, self.classes_key) > self.rows(cfg):
            raise DataError(f"{cfg.name}: data.{self.classes_key} {short_repr(getattr(cfg, self.classes_key))} is "
                            f"more than the {self.rows(cfg)} points to generate (data.{self.rows_key}); every class "
                            "needs a point")
        X, y = self.fn(rng, **{arg: getattr(cfg, key) for arg, key in self.keys.items()})
        classes = None if y.dtype.kind == "f" else int(y.max()) + 1
        return Dataset(cfg.name, X, y, n_classes=classes)


# The load.LOADERS entries of the datasets generated here.
LOADERS = {
    "xor": Generated(xor, "copies", 4, copies="copies", noise="noise"),
    "moons": Generated(moons, n="n_samples", noise="noise"),
    "circles": Generated(circles, n="n_samples", noise="noise"),
    "spirals": Generated(spirals, classes_key="arms", n="n_samples", noise="noise", arms="arms"),
    "blobs": Generated(blobs, classes_key="centers", n="n_samples", noise="noise", centers="centers"),
    "sine": Generated(sine, features=1, n="n_samples", noise="noise"),
}
