"""Safe file I/O: files read only when they are files, atomic writes, and ``.npz`` archives read
without pickle within their bytes.

A path read as a file must name a regular file: a named pipe (FIFO) would block the reader until
someone writes into it, a device such as ``/dev/zero`` never ends, and a folder or a socket
cannot be read. ``open_regular`` refuses them before opening, and again on the opened
descriptor, so a file swapped for a pipe in between cannot block it either.

Every file is written under a temporary name and moved into place, so a reader (or a process
killed half-way) sees either the old file or the new one, never a half-written one. An ``.npz``
is read member by member, each checked against the bytes the archive holds before anything is
allocated for it, so a damaged or hostile file cannot make the program ask for more memory
than the file holds.
"""

import contextlib
import json
import math
import os
import re
import stat
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .errors import DataError, ModelFileError, machine_error

KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def not_regular(mode: int) -> str | None:
    """What a file of ``mode`` (``st_mode``) is when it is not a regular file (``a named pipe
    (FIFO)``), else None."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in KINDS if test(mode)), "not a regular file")


def check_regular(path: str | os.PathLike, error: type[Exception] = DataError, name=None) -> os.stat_result:
    """The ``os.stat`` of ``path`` (links followed) when it is a regular file; else ``error``,
    one line that starts with ``name`` (default: the path; "" for none) and says what it is. A
    path that is not there raises FileNotFoundError, for the caller to word."""
    st = os.stat(path)
    _refuse(st.st_mode, path, error, name)
    return st


def _refuse(mode: int, path, error: type[Exception], name) -> None:
    kind = not_regular(mode)
    if kind is not None:
        where = path if name is None else name
        raise error(f"{where}: is {kind}, not a regular file" if where != "" else f"is {kind}, not a regular file")


def open_regular(path: str | os.PathLike, mode: str = "rb", error: type[Exception] = DataError, name=None,
                 **kwargs):
    """``open(path, mode, **kwargs)`` for reading, only when ``path`` is a regular file: checked
    before opening (a device is never opened), opened without blocking (a FIFO put in its place
    in between returns at once) and checked again on the descriptor. Otherwise ``error`` as in
    ``check_regular``; OSError (FileNotFoundError, PermissionError) as ``open`` raises it."""
    check_regular(path, error, name)

    nonblocking = getattr(os, "O_NONBLOCK", 0)  # none on Windows, which has no FIFOs to wait on

    def opener(file, flags: int) -> int:  # the file object owns the descriptor from its return on
        fd = os.open(file, flags | nonblocking)
        try:
            _refuse(os.fstat(fd).st_mode, path, error, name)
            if nonblocking:
                os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd
    return open(path, mode, opener=opener, **kwargs)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success, move it onto ``path``.

    The temporary file keeps the final suffix, so libraries that choose a format by
    extension (matplotlib, ``np.savez``) write the right one. A failure of the machine (a full
    disk, a folder made read-only or removed, ``ulimit -f``) raises MachineError naming
    ``path``; the temporary file is removed whatever happens, and its removal never raises.
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".tmp{path.suffix}")
        os.close(fd)
    except OSError as e:
        raise machine_error(e, path) from None
    tmp = Path(tmp)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except OSError as e:
        raise machine_error(e, path) from None
    finally:
        remove_quietly(tmp)


def remove_quietly(path: Path) -> None:
    """Remove ``path`` if it is there; a folder gone or made read-only leaves it, silently."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


TEMPORARY = re.compile(r"\..+\.tmp(\.[^.]+)?")  # what atomic_path names its temporary files


def remove_temporary_files(folder: Path) -> list[Path]:
    """Remove the temporary files that writes killed half-way left in ``folder`` (a killed
    process cannot remove its own); the list of those removed."""
    try:
        found = [p for p in folder.iterdir() if TEMPORARY.fullmatch(p.name) and p.is_file()]
    except OSError:
        return []
    for p in found:
        remove_quietly(p)
    return found


def _mode_for(path: Path) -> int:
    """The permissions ``path`` should get: those of the file it replaces, else what ``open``
    would give a new file (mkstemp's own 0600 would hide run files from other users)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0o022)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable where the platform allows opening a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_text_file(path: str | os.PathLike) -> Iterator:
    """An open UTF-8 text file (newline="", as the csv module wants) written a piece at a time,
    that appears at ``path`` only when the block ends without an error."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        yield f


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def append_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Append ``data`` to ``path``, not atomically: for a file that is also rewritten whole
    (``write_bytes``) at the points that must be consistent, such as a run's TensorBoard events.
    A failure of the machine raises MachineError naming ``path``."""
    try:
        with open(path, "ab") as f:
            f.write(data)
    except OSError as e:
        raise machine_error(e, path) from None


def write_json(path: str | os.PathLike, obj) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def write_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write a dict of arrays to an uncompressed ``.npz`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)


MAX_DEFLATE_RATIO = 1100  # zlib cannot expand data by more than about 1032 times
LOADED_KINDS = "biufcSU"  # booleans, numbers and text; never objects, records (void) or dates


def read_npz(path: str | os.PathLike, what: str = "model") -> dict[str, np.ndarray]:
    """Read every array of an ``.npz`` without pickle, turning every failure into ModelFileError
    naming ``path`` and ``what`` the file should be ("model", "checkpoint").

    Each member's ``.npy`` header is checked before its array is allocated: a dtype that holds
    numbers or text with items of non-zero size, and exactly as many bytes (header plus
    itemsize x elements) as the zip directory says the member holds, which itself is at most
    what the archive's size can hold once inflated.
    """
    try:
        f = open_regular(path, "rb", ModelFileError)
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such {what} file") from None
    except OSError as e:
        raise ModelFileError(f"{path}: cannot read the {what} file ({e.strerror or e})") from None
    with f:
        return _read_archive(f, path, what)


def _read_archive(f, path, what: str) -> dict[str, np.ndarray]:
    size = os.fstat(f.fileno()).st_size
    if size == 0:
        raise ModelFileError(f"{path}: the {what} file is empty")
    try:
        with zipfile.ZipFile(f) as zf:
            return {_array_name(info.filename, path, what): _read_member(zf, info, size, path, what)
                    for info in zf.infolist()}
    except ModelFileError:
        raise
    except zipfile.BadZipFile:
        raise ModelFileError(f"{path}: not a readable {what} file (not a complete .npz archive: truncated, "
                             "damaged, or another format)") from None
    except (OSError, ValueError, EOFError, KeyError, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
            zlib.error, struct.error, OverflowError, MemoryError) as e:
        raise ModelFileError(f"{path}: not a readable {what} file ({type(e).__name__}: {e})") from None


def _array_name(filename: str, path, what: str) -> str:
    if not filename.endswith(".npy"):
        raise ModelFileError(f"{path}: not a {what} file (archive member {filename!r} is not a .npy array)")
    return filename[:-4]


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive_size: int, path, what: str) -> np.ndarray:
    """One ``.npy`` member, after checking that its header describes exactly the bytes stored."""
    limit = archive_size * (1 if info.compress_type == zipfile.ZIP_STORED else MAX_DEFLATE_RATIO)
    if info.file_size > limit:
        raise ModelFileError(f"{path}: damaged {what} file ({info.filename} claims {info.file_size} bytes, "
                             f"more than the {archive_size}-byte file can hold)")
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ModelFileError(f"{path}: damaged {what} file ({info.filename} has .npy version {version})")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f)
        _check_dtype(dtype, info.filename, path, what)
        if any(not isinstance(n, int) or n < 0 for n in shape):
            raise ModelFileError(f"{path}: damaged {what} file ({info.filename} has shape {shape})")
        needed = f.tell() + math.prod(shape) * dtype.itemsize  # bytes, in Python integers: no overflow
    if needed != info.file_size:
        raise ModelFileError(f"{path}: damaged {what} file ({info.filename} should hold {needed} bytes, "
                             f"holds {info.file_size})")
    with zf.open(info) as f:
        return np.lib.format.read_array(f, allow_pickle=False)


def _check_dtype(dtype: np.dtype, member: str, path, what: str) -> None:
    """Refuse objects (pickle), records and raw bytes (void), dates, and items of zero size."""
    if dtype.hasobject:
        raise ModelFileError(f"{path}: not a {what} file ({member} holds Python objects, which are never loaded)")
    if dtype.kind not in LOADED_KINDS:
        raise ModelFileError(f"{path}: not a {what} file ({member} holds {dtype} items, not numbers or text)")
    if dtype.itemsize == 0:
        raise ModelFileError(f"{path}: damaged {what} file ({member} holds items of zero size ({dtype}))")
