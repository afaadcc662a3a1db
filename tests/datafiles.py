"""Small synthetic IDX files for the data tests."""

import gzip
import struct
from pathlib import Path

import numpy as np


def idx_bytes(values: np.ndarray, code: int = 0x08) -> bytes:
    """Encode ``values`` as an IDX file with type ``code``."""
    be = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}[code]
    header = bytes([0, 0, code, values.ndim]) + struct.pack(f">{values.ndim}I", *values.shape)
    return header + values.astype(be).tobytes()


def fake_mnist(folder: Path, n_train=6, n_test=4, gz=True, labels_train=None):
    """Write four tiny IDX files in MNIST's names (gzipped or not)."""
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    parts = {"train": (n_train, labels_train), "t10k": (n_test, None)}
    for prefix, (n, labels) in parts.items():
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = np.arange(n, dtype=np.uint8) % 10 if labels is None else np.asarray(labels, dtype=np.uint8)
        for stem, arr in ((f"{prefix}-images-idx3-ubyte", images), (f"{prefix}-labels-idx1-ubyte", labels)):
            data = idx_bytes(arr)
            (folder / (stem + ".gz" if gz else stem)).write_bytes(gzip.compress(data) if gz else data)
    return folder


FLOWER_FEATURES = ("petal_length", "petal_width", "stem_mm", "hue")
FLOWER_CLASSES = ("daisy", "iris", "tulip")


def flowers_csv(path: Path, n: int, seed: int, columns=None, target: bool = True) -> list[str]:
    """A CSV of three flower kinds (text labels) told apart by four named features on very
    different scales, so that a model needs its standardisation. ``columns`` reorders the
    feature columns; ``target`` adds the ``species`` column. Returns the labels, row by row."""
    rng = np.random.default_rng(seed)
    kinds = rng.integers(0, 3, size=n)
    centres = np.array([[1.0, 0.2, 300.0, 0.1], [2.0, 0.5, 450.0, 0.5], [3.0, 0.9, 380.0, 0.9]])
    spread = np.array([0.3, 0.1, 40.0, 0.15])
    X = centres[kinds] + spread * rng.normal(size=(n, 4))  # (n, 4)
    columns = list(columns or FLOWER_FEATURES)
    order = [FLOWER_FEATURES.index(c) for c in columns]
    labels = [FLOWER_CLASSES[k] for k in kinds]
    lines = [",".join(columns + (["species"] if target else []))]
    for row, label in zip(X[:, order], labels):
        lines.append(",".join(f"{v:.6g}" for v in row) + (f",{label}" if target else ""))
    path.write_text("\n".join(lines) + "\n")
    return labels
