"""Where a study lives, and the lock that lets many workers share its budget.

By default a study is Optuna's journal file in the sweep folder (``journal.log``): no server,
safe for any number of processes on one machine. For many machines it lives in a database
that every machine reaches (``postgresql://user@host/db``; ``mysql://`` and ``sqlite:///``
work too), through Optuna's RDBStorage.

Workers count the study's trials and ask for a new one under ``budget_lock``, so that the budget
is never overrun by two workers asking at the same instant: a file lock beside the journal
(or the SQLite file), an advisory lock in PostgreSQL, a named lock in MySQL. The database's
tables are created under the same lock, so that many workers starting at once on a fresh
database do not race on the schema.

Optuna is imported here and in the modules of this package only (``pip install "mlp-manual[sweep]"``).
"""

import contextlib
import fcntl
import os
import zlib
from collections.abc import Callable
from pathlib import Path

from ..errors import MachineError, MissingExtra, MLPManualError, machine_error
from .urls import database_url, scheme, without_password

JOURNAL = "journal.log"
INSTALL = 'mlp-sweep needs optuna; install it with: pip install "mlp-manual[sweep]"'
DRIVER = ('the database driver is not installed ({}); pip install "mlp-manual[sweep]" installs the PostgreSQL one '
          "(psycopg)")


def require_optuna():
    """The optuna module, or MissingExtra saying what to install."""
    try:
        import optuna
    except ImportError:
        raise MissingExtra(INSTALL) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # trials are reported by mlp-sweep's own lines
    return optuna


class StudyUnreachable(MachineError):
    """The study's storage failed while the command used it: its database went away (stopped,
    restarted, failed over, the network lost), or its journal file could not be written."""


class StudyStorage:
    """The Optuna storage of a study (``storage``), and ``budget_lock()``. Every call to
    ``storage`` that fails for the storage's own sake raises StudyUnreachable; a damaged journal
    file raises JournalDamaged; ``note`` is told when a journal's record cut short is set aside."""

    def __init__(self, url: str | None, folder: Path, note: Callable[[str], None] | None = None):
        self.url, self.folder = url, folder
        optuna = require_optuna()
        self._journal = url is None or "://" not in url
        if self._journal:  # a journal file: the default in the sweep folder, or a path
            from optuna.storages.journal import JournalFileOpenLock

            from .journal_file import CheckedJournalBackend

            self.path = folder / JOURNAL if url is None else Path(url)
            self._lock_file = self.path.with_name(self.path.name + ".budget.lock")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # the open lock: a symlink lock left by a killed process would stop every worker
                backend = CheckedJournalBackend(str(self.path), JournalFileOpenLock(str(self.path)), note or _quiet)
                self.storage = _guarded(_checked_journal(optuna)(backend), self._failed)
            except OSError as e:
                raise self._failed(e) from None
            return
        self.url = url = database_url(url)
        self._engine = _engine(url)
        self._lock_file = Path(url.split("///", 1)[1] + ".budget.lock") if scheme(url) == "sqlite" else None
        with self.budget_lock("mlp-sweep schema"):
            try:
                from optuna.storages._cached_storage import (
                    _CachedStorage,  # what optuna wraps an RDBStorage in
                )

                inner = _CachedStorage(optuna.storages.RDBStorage(url, engine_kwargs={"pool_pre_ping": True,
                                                                                      **connect_args(url)}))
            except Exception as e:  # the driver's own errors: refused, unknown host, bad password
                raise _unreachable(url, e) from None
        self.storage = _guarded(inner, self._failed)

    def _failed(self, e: Exception) -> Exception:
        """The StudyUnreachable for ``e``, a failure of this storage's file or database."""
        if not self._journal:
            return _unreachable(self.url, e)
        if isinstance(e, OSError):
            found = machine_error(e, self.path, "write the study's journal")
            message = str(found) if isinstance(found, MachineError) else f"cannot use the study's journal {self.path} ({e})"
            return StudyUnreachable(message, self.path)
        return e

    def describe(self) -> str:
        """The storage, for messages: the journal file, or the URL without its password."""
        return str(self.path) if self._journal else without_password(self.url)

    @contextlib.contextmanager
    def budget_lock(self, name: str = "budget"):
        """Hold the lock called ``name`` of this storage while the block runs."""
        if self._lock_file is not None:
            with _file_lock(self._lock_file):
                yield
            return
        key = zlib.crc32(f"{name}:{self.url}".encode()) - 2**31  # a signed 32-bit key
        kind = scheme(self.url)
        import sqlalchemy

        try:
            connection = self._engine.connect()
            if kind == "postgresql":
                connection.execute(sqlalchemy.text("SELECT pg_advisory_lock(:k)"), {"k": key})
            else:
                connection.execute(sqlalchemy.text("SELECT GET_LOCK(:k, -1)"), {"k": str(key)})
        except Exception as e:
            raise _unreachable(self.url, e) from None
        try:
            yield
        finally:
            try:
                if kind == "postgresql":
                    connection.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                else:
                    connection.execute(sqlalchemy.text("SELECT RELEASE_LOCK(:k)"), {"k": str(key)})
            except Exception:  # a lost connection releases the lock on the server
                pass
            with contextlib.suppress(Exception):  # the error that ended the block, if any, is the one to say
                connection.close()


CONNECT_SECONDS = 10  # a PostgreSQL server that does not answer: a network dropping packets would
# otherwise hold a connection attempt for the operating system's TCP timeout, minutes


def connect_args(url: str) -> dict:
    """The driver's connection arguments: a connection attempt to PostgreSQL gives up after
    CONNECT_SECONDS, unless the URL sets its own ``connect_timeout``."""
    if scheme(url) != "postgresql" or "connect_timeout=" in url.partition("?")[2]:
        return {}
    return {"connect_args": {"connect_timeout": CONNECT_SECONDS}}


def _engine(url: str):
    try:
        import sqlalchemy
    except ImportError:
        raise MissingExtra(INSTALL) from None
    try:
        return sqlalchemy.create_engine(url, pool_pre_ping=True, poolclass=sqlalchemy.pool.NullPool, **connect_args(url))
    except ImportError as e:  # the driver
        raise MissingExtra(f"storage {without_password(url)}: " + DRIVER.format(e)) from None
    except Exception as e:
        from ..errors import ConfigError

        why = str(e).strip().splitlines()
        raise ConfigError(f"storage {without_password(url)}: not a database URL SQLAlchemy reads "
                          f"({why[0] if why else type(e).__name__})") from None


def _unreachable(url: str, e: Exception) -> MachineError:
    """The study's database cannot be used: one line with the driver's first line of why."""
    if isinstance(e, ImportError):
        return MissingExtra(f"storage {without_password(url)}: " + DRIVER.format(e))
    if isinstance(e, require_optuna().exceptions.StorageInternalError) and e.__cause__ is not None:
        e = e.__cause__  # Optuna's wrapping of the driver's error
    why = str(getattr(e, "orig", None) or e).strip().splitlines()
    return StudyUnreachable(f"cannot use the study's database {without_password(url)}: "
                            f"{why[0] if why else type(e).__name__}")


def _storage_failures(optuna) -> tuple:
    """The exceptions by which Optuna's storages say that the storage itself failed."""
    failures = [OSError, optuna.exceptions.StorageInternalError]
    try:
        import sqlalchemy.exc

        failures.append(sqlalchemy.exc.SQLAlchemyError)
    except ImportError:
        pass
    return tuple(failures)


def _guarded(inner, failed: Callable[[Exception], Exception]):
    """``inner``, an Optuna storage, behind a storage of the same methods that turns a failure
    of the storage itself (a lost database, an unwritable journal) into ``failed(e)``: one home
    for what every call of the study (ask, tell, attributes, epoch values) does when its storage
    goes away. Other attributes are ``inner``'s."""
    optuna = require_optuna()
    failures = _storage_failures(optuna)
    base = optuna.storages.BaseStorage

    def passed_on(name):
        def method(self, *args, **kwargs):
            try:
                return getattr(self._inner, name)(*args, **kwargs)
            except failures as e:
                raise failed(e) from None
        method.__name__ = name
        return method

    names = [n for n in dir(base) if not n.startswith("_") and callable(getattr(base, n))]
    methods = {n: passed_on(n) for n in names}
    methods["__init__"] = lambda self: setattr(self, "_inner", inner)
    methods["__getattr__"] = lambda self, name: getattr(self._inner, name)

    def guard(self, fn, *args):
        """``fn(*args)``, a call that reaches the storage by another way, guarded alike."""
        try:
            return fn(*args)
        except failures as e:
            raise failed(e) from None
    methods["guard"] = guard
    return type("GuardedStorage", (base,), methods)()


def _checked_journal(optuna):
    """Optuna's JournalStorage whose replay of another process's record that it cannot apply (a
    record that passed the line checks, yet names a distribution or a time Optuna refuses) is
    JournalDamaged at that record, not a traceback."""
    from optuna.storages.journal import JournalStorage

    class CheckedJournalStorage(JournalStorage):
        def _sync_with_backend(self):
            try:
                super()._sync_with_backend()
            except (optuna.exceptions.OptunaError, OSError, MLPManualError):
                raise
            except Exception as e:
                offset, number, record = self._backend.last_read
                if record.get("worker_id") == self._replay_result.worker_id:  # this process's own call
                    raise
                raise self._backend.damaged(offset, number, f"a record Optuna cannot replay ({type(e).__name__})") \
                    from None

    return CheckedJournalStorage


def _quiet(line: str) -> None:
    """No notes."""


@contextlib.contextmanager
def _file_lock(path: Path):
    """An exclusive flock on ``path`` (created if missing) for the block."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise machine_error(e, path, "open the sweep's lock") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock
