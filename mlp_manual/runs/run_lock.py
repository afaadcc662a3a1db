"""The claim on a run folder: one process at a time writes it.

A run or a resume holds an exclusive ``fcntl.flock`` on ``.lock`` in the run folder while it
writes there; the file says who holds it (``pid 4242 on host``). The kernel drops the lock
when its process ends, however it ends, so the file a killed process leaves behind blocks no
one; a run that ends removes it. Where ``fcntl`` or the file system offers no locks, the
folder is not claimed.
"""

import os
import platform
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import RunInUse, machine_error
from ..files import remove_quietly

try:
    import fcntl
except ImportError:  # not a POSIX system
    fcntl = None

LOCK_NAME = ".lock"


@contextmanager
def claim_run_dir(folder: str | os.PathLike) -> Iterator[Path]:
    """Hold the existing run folder ``folder`` for the duration of the ``with`` block.

    Raises RunInUse, naming the folder and the holder's pid and host, when another live
    process holds it, and MachineError when the lock file cannot be written (a read-only
    folder, a full disk). Releasing the claim never raises: a folder removed or made read-only
    meanwhile keeps its lock file, which blocks no one once this process has closed it.
    """
    folder = Path(folder)
    path = folder / LOCK_NAME
    fd = _lock(path)
    try:
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()} on {platform.node()}\n".encode())
        except OSError as e:
            raise machine_error(e, path) from None
        yield folder
    finally:
        remove_quietly(path)  # before the lock goes: a newcomer then locks a new file
        try:
            os.close(fd)
        except OSError:
            pass


def _lock(path: Path) -> int:
    """An open descriptor of ``path`` with the exclusive lock on it."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise machine_error(e, path, "create the lock file") from None
        if fcntl is None:
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise RunInUse(f"{path.parent} is in use by another mlp-train ({holder}); wait for it to end, "
                           "or stop it first") from None
        except OSError:  # a file system without locks
            return fd
        if _is_current(fd, path):
            return fd
        os.close(fd)  # the holder removed the file between our open and our lock: lock the new one


def _holder(fd: int) -> str:
    """``pid N on HOST`` as the holder wrote it, or a plain description before it has."""
    found = re.match(r"pid (\d+) on (\S{1,100})\n", os.pread(fd, 200, 0).decode("utf-8", "replace"))
    return found.group(0).strip() if found else "a process that has not written its pid yet"


def _is_current(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), path.stat())
    except FileNotFoundError:
        return False
