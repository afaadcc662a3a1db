"""Strict reader for IDX files, the format MNIST and Fashion-MNIST are distributed in.

An IDX file is a 4-byte magic number (two zero bytes, a type code, the number of dimensions),
one big-endian uint32 per dimension, then the values in C order, big-endian. Files may be
gzip-compressed; we tell by the gzip signature, not by the file name. Anything that does not
match this layout exactly is a DataError naming the file.
"""

import gzip
import math
import os
import zlib

import numpy as np

from ..errors import DataError

# type code -> big-endian numpy dtype
IDX_TYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
GZIP_SIGNATURE = b"\x1f\x8b"


def read_bytes(path: str | os.PathLike) -> bytes:
    """The file's content, decompressed when it starts with the gzip signature."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from None
    if not raw.startswith(GZIP_SIGNATURE):
        return raw
    try:
        return gzip.decompress(raw)
    except (EOFError, OSError, zlib.error) as e:
        raise DataError(f"{path}: damaged gzip data ({e}); delete the file and fetch it again") from None


def parse_idx(data: bytes, path: str | os.PathLike = "<bytes>") -> np.ndarray:
    """Parse decompressed IDX bytes.

    Returns: an array of the stored shape in native byte order (uint8 for MNIST files).
    """
    if len(data) < 4:
        raise DataError(f"{path}: not an IDX file (only {len(data)} bytes, shorter than the 4-byte magic number)")
    if data[0] != 0 or data[1] != 0:
        raise DataError(f"{path}: not an IDX file (magic number starts {data[:2].hex(' ')}, expected 00 00)")
    code, ndim = data[2], data[3]
    if code not in IDX_TYPES:
        known = ", ".join(f"0x{c:02X}" for c in IDX_TYPES)
        raise DataError(f"{path}: unknown IDX type code 0x{code:02X} (known: {known})")
    if ndim == 0:
        raise DataError(f"{path}: IDX header declares 0 dimensions")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DataError(f"{path}: truncated IDX header ({len(data)} bytes, the {ndim} dimension sizes need {header})")
    shape = tuple(int(s) for s in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = IDX_TYPES[code]
    expected = header + math.prod(shape) * dtype.itemsize  # Python ints: no overflow
    if len(data) < expected:
        raise DataError(f"{path}: truncated IDX data: shape {shape} needs {expected} bytes, the file has "
                        f"{len(data)}; delete it and fetch it again")
    if len(data) > expected:
        raise DataError(f"{path}: {len(data) - expected} unexpected bytes after the IDX data of shape {shape}")
    values = np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)
    return values.astype(dtype.newbyteorder("="))


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read one IDX file, gzipped or not. Returns: the array it stores."""
    return parse_idx(read_bytes(path), path)


def read_images_labels(images_path: str | os.PathLike, labels_path: str | os.PathLike):
    """Read a pair of MNIST-style IDX files and check that they belong together.

    Returns: images (N, rows, cols) uint8, labels (N,) uint8.
    """
    images, labels = read_idx(images_path), read_idx(labels_path)
    for path, arr, ndim, what in ((images_path, images, 3, "images (N, rows, cols)"),
                                  (labels_path, labels, 1, "labels (N,)")):
        if arr.dtype != np.uint8:
            raise DataError(f"{path}: expected unsigned bytes (IDX type 0x08), found {arr.dtype}")
        if arr.ndim != ndim:
            raise DataError(f"{path}: expected {ndim}-dimensional {what}, found shape {arr.shape}")
    if len(images) != len(labels):
        raise DataError(f"{images_path} holds {len(images)} images but {labels_path} holds {len(labels)} labels")
    return images, labels
