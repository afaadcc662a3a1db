"""Downloading MNIST and Fashion-MNIST into a data directory, verified and atomic.

Each file is streamed into a temporary name beside its destination, checked, and only then
moved onto ``<data dir>/<dataset>/<file>.gz``; a failed or rejected download is deleted, so no
half file ever sits under the final name. Mirrors are tried in order until one serves a file
that passes every check:

- the transfer delivered as many bytes as the server announced;
- it is gzip data that decompresses;
- the decompressed bytes have the known SHA-256; for Fashion-MNIST, whose authors publish the
  MD5 of their compressed files, a file with that MD5 is accepted too (a copy re-compressed by
  a distribution or a mirror has another MD5 but the same decompressed bytes);
- it parses as an IDX file of the expected size.
"""

import contextlib
import gzip
import hashlib
import http.client
import os
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, machine_error
from ..files import atomic_path, open_regular
from . import datadir
from .idx import GZIP_SIGNATURE, parse_idx


@dataclass(frozen=True)
class Expected:
    """What a correct file looks like. ``size`` counts decompressed bytes."""

    size: int
    sha256: str  # of the decompressed bytes
    gz_md5: str | None = None  # of the compressed file, as its authors publish it; accepted without the SHA-256


# Decompressed sizes follow from the IDX layout: 16-byte header + 28 * 28 bytes per image,
# 8-byte header + 1 byte per label.
TRAIN_IMAGES, TRAIN_LABELS = 16 + 60000 * 784, 8 + 60000
TEST_IMAGES, TEST_LABELS = 16 + 10000 * 784, 8 + 10000

EXPECTED = {
    "mnist": {
        "train-images-idx3-ubyte": Expected(TRAIN_IMAGES, sha256="ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"),
        "train-labels-idx1-ubyte": Expected(TRAIN_LABELS, sha256="65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"),
        "t10k-images-idx3-ubyte": Expected(TEST_IMAGES, sha256="0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"),
        "t10k-labels-idx1-ubyte": Expected(TEST_LABELS, sha256="ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"),
    },
    "fashion_mnist": {
        "train-images-idx3-ubyte": Expected(TRAIN_IMAGES, gz_md5="8d4fb7e6c68d591d4c3dfef9ec88bf0d",
                                            sha256="c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888"),
        "train-labels-idx1-ubyte": Expected(TRAIN_LABELS, gz_md5="25c81989df183df01b3e8a0aad5dffbe",
                                            sha256="bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9"),
        "t10k-images-idx3-ubyte": Expected(TEST_IMAGES, gz_md5="bef4ecab320f06d8554ea6380940ec79",
                                            sha256="5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b"),
        "t10k-labels-idx1-ubyte": Expected(TEST_LABELS, gz_md5="bb300cfdad3c16e7a12a480ee83cd310",
                                            sha256="0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34"),
    },
}

# Base URLs; a file's URL is the base + "<file>.gz".
MIRRORS = {
    "mnist": (
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "https://storage.googleapis.com/cvdf-datasets/mnist/",
        "http://yann.lecun.com/exdb/mnist/",
    ),
    "fashion_mnist": (
        "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
        "https://github.com/zalandoresearch/fashion-mnist/raw/master/data/fashion/",
    ),
}
TIMEOUT = 30.0  # seconds without progress before a mirror is given up
CHUNK = 1 << 16

# progress(label, total bytes or None) -> a context manager with .update(n_bytes)
Progress = Callable[[str, int | None], object]


class _Rejected(Exception):
    """A mirror's answer was refused; the message says why. Internal: fetch moves on to the next mirror."""


def verify_bytes(raw: bytes, expected: Expected, path, downloaded: bool = False) -> None:
    """Check a downloaded or existing file's content; raise _Rejected saying what is wrong.
    A download must be gzip data (mirrors serve ``.gz``); a file already on disk may be plain."""
    if downloaded and not raw.startswith(GZIP_SIGNATURE):
        raise _Rejected(f"not gzip data (it starts with {raw[:16]!r})")
    published = bool(expected.gz_md5) and hashlib.md5(raw).hexdigest() == expected.gz_md5
    try:
        data = gzip.decompress(raw) if raw.startswith(GZIP_SIGNATURE) else raw
    except (EOFError, OSError, zlib.error) as e:
        raise _Rejected(f"damaged gzip data ({e})") from None
    if not published:
        got = hashlib.sha256(data).hexdigest()
        if got != expected.sha256:
            md5 = f" nor the published MD5 {expected.gz_md5}" if expected.gz_md5 else ""
            raise _Rejected(f"SHA-256 mismatch of the decompressed bytes (expected {expected.sha256}{md5}, "
                            f"got {got})")
    if len(data) != expected.size:
        raise _Rejected(f"{len(data)} bytes after decompression, expected {expected.size}")
    try:
        parse_idx(data, path)
    except DataError as e:
        raise _Rejected(str(e)) from None


def _download(url: str, dest: Path, timeout: float, progress: Progress | None) -> None:
    """Stream ``url`` into ``dest``; raise _Rejected for any network failure or short transfer, and
    MachineError when ``dest`` cannot be written (a full disk)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(dest, "wb") as out:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            received = 0
            with progress(url.rsplit("/", 1)[-1], total) if progress else contextlib.nullcontext() as bar:
                while chunk := response.read(CHUNK):
                    _write(out, chunk, dest)
                    received += len(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
    except _WriteFailed as e:
        raise e.args[0] from None
    except urllib.error.HTTPError as e:
        raise _Rejected(f"HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        raise _Rejected(f"cannot connect ({getattr(e.reason, 'strerror', None) or e.reason})") from None
    except (OSError, http.client.HTTPException) as e:
        raise _Rejected(f"transfer failed ({type(e).__name__}: {e})") from None
    if total is not None and received != total:
        raise _Rejected(f"truncated transfer: received {received} of {total} bytes; the partial file was deleted")
    if received == 0:
        raise _Rejected("the server sent an empty file")


class _WriteFailed(Exception):
    """A failure to write the download (a full disk), not the network's: no mirror can help."""


def _write(out, chunk: bytes, dest: Path) -> None:
    try:
        out.write(chunk)
    except OSError as e:
        raise _WriteFailed(machine_error(e, dest.parent, "write in")) from None


def existing_file_problem(path: Path, expected: Expected) -> str | None:
    """None if the file at ``path`` passes the checks a download must pass, else the reason."""
    try:
        with open_regular(path, "rb", _Rejected, name="") as f:
            verify_bytes(f.read(), expected, path)
    except _Rejected as e:
        return str(e)
    except OSError as e:
        return f"cannot read it ({e.strerror or e})"
    return None


def fetch(name: str, data_dir: str | os.PathLike | None = None, mirrors: tuple[str, ...] | None = None,
          timeout: float = TIMEOUT, progress: Progress | None = None,
          log: Callable[[str], None] = lambda message: None) -> Path:
    """Download ``name``'s four files into ``download_dir(data_dir) / name``, skipping files
    already there and correct.

    Inputs: mirrors, base URLs to try in order (default MIRRORS[name]); timeout, seconds a
    connection or read may stall; progress, a progress-bar factory; log, receives one line
    per event (skips, rejected mirrors, deleted downloads).
    Returns: the dataset's folder. Raises DataError when some file cannot be obtained.
    """
    if name not in EXPECTED:
        raise DataError(f"cannot fetch {name!r}: fetchable datasets are {', '.join(EXPECTED)}")
    folder = datadir.download_dir(data_dir) / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise machine_error(e, folder, "create the data folder") from None
    for stem, expected in EXPECTED[name].items():
        existing = datadir.find_file(folder, stem)
        if existing is not None:
            problem = existing_file_problem(existing, expected)
            if problem is None:
                log(f"{existing}: already present and verified")
                continue
            log(f"{existing}: {problem}; downloading it again")
        _fetch_file(folder, stem, expected, mirrors or MIRRORS[name], timeout, progress, log)
        if existing is not None and existing.name == stem:
            existing.unlink()  # a damaged uncompressed copy would shadow the new .gz
    return folder


def _fetch_file(folder: Path, stem: str, expected: Expected, mirrors, timeout, progress, log) -> Path:
    target = folder / f"{stem}.gz"
    failures = []
    for base in mirrors:
        url = base.rstrip("/") + f"/{stem}.gz"
        try:
            with atomic_path(target) as tmp:
                _download(url, tmp, timeout, progress)
                try:
                    verify_bytes(tmp.read_bytes(), expected, url, downloaded=True)
                except _Rejected as e:
                    raise _Rejected(f"{e}; the download was deleted") from None
                os.chmod(tmp, 0o644)  # a temporary file is private; a dataset is readable by all
        except _Rejected as e:
            log(f"{url}: {e}; trying the next mirror")
            failures.append(f"{url}: {e}")
            continue
        log(f"{target}: downloaded and verified")
        return target
    raise DataError(f"could not fetch {stem}.gz from any mirror: " + "; ".join(failures))
