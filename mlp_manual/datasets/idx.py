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
from ..files import open_regular

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


MAX_IDX_BYTES = 1 << 31  # 2 GiB: 40 times Fashion-MNIST's training images; a larger header is refused
CHUNK = 1 << 20


def _open(path: str | os.PathLike):
    """The file opened for reading, through a gzip stream when it starts with the gzip signature."""
    try:
        f = open_regular(path, "rb")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from None
    if f.read(2) == GZIP_SIGNATURE:
        f.seek(0)
        return gzip.GzipFile(fileobj=f, mode="rb"), f
    f.seek(0)
    return f, f


def _read_at_most(stream, n: int) -> bytes:
    """Up to ``n`` bytes, fewer only at the end of the stream; decompressed chunk by chunk, so
    no more than ``n`` bytes (plus one chunk) are ever held."""
    parts, have = [], 0
    while have < n:
        part = stream.read(min(CHUNK, n - have))
        if not part:
            break
        parts.append(part)
        have += len(part)
    return b"".join(parts)


def read_bytes(path: str | os.PathLike) -> bytes:
    """The IDX content of a file, gzipped or not, read only as far as its header announces.

    The header is read first; the body is then read (decompressed incrementally) up to the
    size the header announces, plus one byte to detect trailing data. A damaged or hostile
    file therefore cannot make the reader hold more than the header promised, and a header
    that promises more than ``MAX_IDX_BYTES`` is refused before anything is read.
    """
    stream, raw = _open(path)
    try:
        with raw, stream:
            head = _read_at_most(stream, 4)
            size = _header_size(head, path)
            head += _read_at_most(stream, size - 4)
            total = _body_end(head, path)
            data = head + _read_at_most(stream, total - len(head))
            if len(data) == total and stream.read(1):
                extra = os.fstat(raw.fileno()).st_size - total if stream is raw else None
                raise DataError(f"{path}: {extra or 'some'} unexpected bytes after the IDX data of shape "
                                f"{_shape(data)}")
            return data
    except (EOFError, OSError, zlib.error) as e:
        if isinstance(e, DataError):
            raise
        raise DataError(f"{path}: damaged gzip data ({e}); delete the file and fetch it again") from None


def _header_size(head: bytes, path) -> int:
    """Bytes in the header (magic number and dimension sizes), after checking the magic number."""
    if len(head) < 4:
        raise DataError(f"{path}: not an IDX file (only {len(head)} bytes, shorter than the 4-byte magic number)")
    if head[0] != 0 or head[1] != 0:
        raise DataError(f"{path}: not an IDX file (magic number starts {head[:2].hex(' ')}, expected 00 00)")
    code, ndim = head[2], head[3]
    if code not in IDX_TYPES:
        known = ", ".join(f"0x{c:02X}" for c in IDX_TYPES)
        raise DataError(f"{path}: unknown IDX type code 0x{code:02X} (known: {known})")
    if ndim == 0:
        raise DataError(f"{path}: IDX header declares 0 dimensions")
    return 4 + 4 * ndim


def _body_end(data: bytes, path) -> int:
    """The file size the header announces, after checking it holds values and is not absurd."""
    header = _header_size(data, path)
    if len(data) < header:
        raise DataError(f"{path}: truncated IDX header ({len(data)} bytes, the {data[3]} dimension sizes need {header})")
    shape = _shape(data)
    if 0 in shape:
        raise DataError(f"{path}: the IDX header announces shape {shape}, which holds no values")
    size = math.prod(shape) * IDX_TYPES[data[2]].itemsize  # Python ints: no overflow
    if size > MAX_IDX_BYTES:
        raise DataError(f"{path}: the IDX header announces shape {shape}, {size:,} bytes of data, more than "
                        f"this reader accepts ({MAX_IDX_BYTES:,}); the header is damaged")
    return header + size


def _shape(data: bytes) -> tuple[int, ...]:
    """The dimension sizes of a checked header."""
    return tuple(int(s) for s in np.frombuffer(data, dtype=">u4", count=data[3], offset=4))


def parse_idx(data: bytes, path: str | os.PathLike = "<bytes>") -> np.ndarray:
    """Parse decompressed IDX bytes.

    Returns: an array of the stored shape in native byte order (uint8 for MNIST files).
    """
    expected = _body_end(data, path)
    header, shape = _header_size(data, path), _shape(data)
    dtype = IDX_TYPES[data[2]]
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
