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
