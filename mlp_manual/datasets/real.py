"""Loaders for the real datasets: two shipped with the package, two read from a data directory.

``digits`` and ``mnist1d`` are small enough to live in ``mlp_manual/datasets/files/`` (inside the package,
so an installed wheel has them too). ``mnist`` and ``fashion_mnist`` are found with
``datadir.locate`` and read from IDX files. Each loader has the ``LOADERS`` signature
``(DataSettings, Generator, dtype) -> Dataset`` (their values all fit float32, so they ignore
the run's dtype); images are flattened to rows, pixels stay raw
(0..16 or 0..255) until ``data.preprocess`` scales them.

N = samples, D = features (pixels).
"""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..options import declares
from . import augment, datadir
from .dataset import Dataset, split
from .idx import read_images_labels
from .settings import DataSettings

SHIPPED_DIR = Path(__file__).with_name("files")
DIGITS_FILE = SHIPPED_DIR / "digits.csv.gz"
MNIST1D_FILE = SHIPPED_DIR / "mnist1d.npz"
DIGITS_TEST_FRACTION = 0.2  # used when data.test_fraction is 0: digits has no official test split

# class names where the labels (0..9) stand for something else; the digits' labels are themselves
FASHION_NAMES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                 "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")


def read_digits(path: Path = DIGITS_FILE):
    """Returns: X (1797, 64) float64 with values 0..16, y (1797,) int64."""
    try:
        with gzip.open(path, "rt", encoding="ascii") as f:
            table = np.loadtxt(f, delimiter=",", skiprows=1)
    except FileNotFoundError:
        raise DataError(f"{path}: the shipped digits file is missing; reinstall mlp-manual") from None
    except (OSError, EOFError, ValueError) as e:
        raise DataError(f"{path}: cannot read the digits CSV ({e})") from None
    if table.ndim != 2 or table.shape[1] != 65:
        raise DataError(f"{path}: expected 64 pixel columns and a label, found shape {table.shape}")
    return table[:, :64], table[:, 64].astype(np.int64)


@declares(augment.SHIFT)
def digits(cfg: DataSettings, rng: np.random.Generator, dtype=None) -> Dataset:
    """UCI handwritten digits, 8x8; a seeded stratified test split of ``data.test_fraction``
    (DIGITS_TEST_FRACTION when it is 0)."""
    X, y = read_digits()
    X_train, y_train, X_test, y_test = split(X, y, cfg.test_fraction or DIGITS_TEST_FRACTION, rng, stratify=True)
    return Dataset(cfg.name, X_train, y_train, X_test=X_test, y_test=y_test, n_classes=10, image_shape=(8, 8))


@declares({})
def mnist1d(cfg: DataSettings, rng: np.random.Generator, dtype=None) -> Dataset:
    """MNIST-1D with its official split: 4000 training and 1000 test signals of 40 values."""
    try:
        with np.load(MNIST1D_FILE, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in ("x", "y", "x_test", "y_test")}
    except FileNotFoundError:
        raise DataError(f"{MNIST1D_FILE}: the shipped MNIST-1D file is missing; reinstall mlp-manual") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as e:
        raise DataError(f"{MNIST1D_FILE}: cannot read MNIST-1D ({e})") from None
    return Dataset(cfg.name, arrays["x"], arrays["y"].astype(np.int64),
                   X_test=arrays["x_test"], y_test=arrays["y_test"].astype(np.int64),
                   n_classes=10)


def read_idx_dataset(name: str, data_dir=None) -> dict[str, np.ndarray]:
    """Read a downloadable dataset's four IDX files.

    Returns: {"X_train": (60000, 784) uint8, "y_train": (60000,) int64, "X_test", "y_test"}
    for MNIST-shaped data.
    """
    files = datadir.locate(name, data_dir)
    out = {}
    for part, prefix in (("train", "train"), ("test", "t10k")):
        images_path, labels_path = files[f"{prefix}-images-idx3-ubyte"], files[f"{prefix}-labels-idx1-ubyte"]
        images, labels = read_images_labels(images_path, labels_path)
        if labels.size and labels.max() > 9:
            raise DataError(f"{labels_path}: labels must lie in 0..9, found {labels.max()}")
        if out.get("image_shape", images.shape[1:]) != images.shape[1:]:
            raise DataError(f"{images_path}: images are {images.shape[1:]}, the training images {out['image_shape']}")
        out[f"X_{part}"] = images.reshape(len(images), -1)  # (N, rows * cols)
        out[f"y_{part}"] = labels.astype(np.int64)
        out["image_shape"] = images.shape[1:]
    return out


def _idx_loader(class_names, options):
    @declares(options)  # and data_dir, which every dataset has
    def load(cfg: DataSettings, rng: np.random.Generator, dtype=None) -> Dataset:
        arrays = read_idx_dataset(cfg.name, cfg.data_dir)
        return Dataset(cfg.name, arrays["X_train"], arrays["y_train"], X_test=arrays["X_test"],
                       y_test=arrays["y_test"], n_classes=10, class_names=class_names,
                       image_shape=arrays["image_shape"])
    return load


mnist = _idx_loader(None, augment.SHIFT)
fashion_mnist = _idx_loader(FASHION_NAMES, {**augment.SHIFT, **augment.FLIP})  # clothes mirror; digits do not


# The load.LOADERS entries of these datasets.
LOADERS = {"digits": digits, "mnist1d": mnist1d, "mnist": mnist, "fashion_mnist": fashion_mnist}
