"""The sweep folder: its record ``sweep.json`` (the study's name and storage, for ``status``
and ``best``), and which run folders are trials of a sweep, so that a worker takes over only
those.

A trial records its run folder in the study; anyone who can write the study can write any path
there. A worker that continues a trial whose worker stopped moves (renames) that folder into its
own ``trials/`` to resume it, so it first checks that the folder is ``<F>/trials/<number>`` of a
sweep folder ``F`` whose record names the same study in the same storage, with no link on the
way, holding a run of the trial's own config. Any other folder stays where it is, and the
trial's parameters are trained again.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .. import files
from ..config import load_config, with_absolute_paths
from ..errors import ConfigError, short_repr, short_text
from ..options import NAME
from .spec import Sweep
from .storage import JOURNAL, StudyStorage
from .urls import database_url, without_password

RECORD = "sweep.json"


@dataclass(frozen=True)
class Record:
    """What ``sweep.json`` holds: the study's name, and its storage (a database URL without its
    password, a journal file's absolute path, or None for ``journal.log`` beside the record)."""

    study: str
    storage: str | None


def write_record(folder: Path, study: str, url: str | None, sweep_file) -> None:
    """Write ``folder/sweep.json`` for the study ``study`` in the storage ``url``."""
    files.write_json(folder / RECORD, {"study": study, "storage": _recorded(url),
                                       "sweep_file": str(Path(sweep_file).resolve())})


def read_record(folder: Path) -> Record:
    """The record of the sweep folder ``folder``; ConfigError in one line when it is missing,
    unreadable or damaged (not a JSON object, a study that is not a name, a storage that is not
    text)."""
    path = folder / RECORD
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{folder}: not a sweep folder but a file; give the folder mlp-sweep run wrote "
                          "(sweeps/<name>, or its --out)")
    try:
        with files.open_regular(path, "r", ConfigError, encoding="utf-8") as f:  # a FIFO would block
            record = json.loads(f.read())
    except FileNotFoundError:
        raise ConfigError(f"{folder}: not a sweep folder (no {RECORD}; mlp-sweep run writes it)") from None
    except ConfigError:  # not a regular file
        raise
    except (OSError, ValueError) as e:  # ValueError: not UTF-8, not JSON
        raise ConfigError(f"{path}: cannot be read ({str(e).splitlines()[0] if str(e) else type(e).__name__})") \
            from None
    if not isinstance(record, dict):
        raise ConfigError(f"{path}: is damaged: a sweep's record is an object with its study and storage, got "
                          f"{type(record).__name__}")
    study, storage = record.get("study"), record.get("storage")
    if not NAME.accepts(study) or not study:
        raise ConfigError(f"{path}: is damaged: study must be the study's name, got {short_repr(study)}")
    if storage is not None and (not isinstance(storage, str) or not storage):
        raise ConfigError(f"{path}: is damaged: storage must be a database URL, a journal file or null, got "
                          f"{short_repr(storage)}")
    return Record(study, storage)


def recorded_journal(folder: Path, record: Record) -> Path | None:
    """The journal file of the study ``folder``'s record names (None for a database); ConfigError
    when it is missing (nothing is created where a record points)."""
    if record.storage is not None and "://" in record.storage:
        return None
    journal = folder / JOURNAL if record.storage is None else Path(record.storage)
    if not journal.is_file():
        raise ConfigError(f"{folder}: the study's journal ({journal}) is missing" if record.storage is None else
                          f"{folder / RECORD}: storage {short_repr(record.storage)} is not a journal file")
    return journal


def _recorded(url: str | None) -> str | None:
    """A storage as the record keeps it: a URL as SQLAlchemy reads it, without its password; a
    journal file's real path."""
    if url is None:
        return None
    return without_password(database_url(url)) if "://" in url else os.path.realpath(url)


def _storage_of(storage: str | None, folder: Path) -> str | None:
    """Which storage ``storage``, given for the sweep folder ``folder``, is: its journal file's
    real path, or its URL as SQLAlchemy reads it without the password (None for a malformed one)."""
    if storage is None or "://" not in storage:
        return os.path.realpath(folder / JOURNAL if storage is None else storage)
    try:
        return without_password(database_url(storage))
    except ConfigError:
        return None


def foreign_run(trial, sweep: Sweep, store: StudyStorage) -> str | None:
    """Why the run folder that ``trial`` (of ``sweep``'s study in ``store``) recorded is not one
    to take over, or None when it is: it must be reachable from here, be ``<F>/trials/<number>``
    of a sweep folder F of this study and storage, with no link on the way, and hold a run of
    the trial's config."""
    source, number = str(trial.user_attrs.get("run_dir", "")), trial.number
    path, shown = Path(source), short_text(repr(source))
    if not path.is_absolute() or not (path / "config.yaml").is_file():
        return f"its run folder {shown} is not reachable from here"
    if os.path.realpath(path) != str(path) or path.parent.name != "trials" or path.name != str(number):
        return f"{shown} is not the folder trials/{number} of a sweep folder"
    try:
        record = read_record(path.parent.parent)
    except ConfigError:
        return f"{shown} is not in a sweep folder"
    storage = _storage_of(record.storage, path.parent.parent)
    if record.study != sweep.name or storage is None or storage != _storage_of(store.url, store.folder):
        return f"{shown} is in the folder of another study"
    try:
        found = load_config(path / "config.yaml")
        # named as the run is: a trial continued twice keeps the name of the first
        expected = with_absolute_paths(sweep.trial_config(trial.params, found.name))
    except ConfigError:
        found, expected = None, ()
    if found != expected:
        return f"{shown} holds a run of another config"
    return None
