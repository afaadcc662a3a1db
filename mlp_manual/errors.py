"""The project's own error types.

The library raises these; only the command-line layer turns them into one-line messages.
Every one is a ``ValueError`` so that callers who do not know our types still catch them.
"""

import difflib
import errno
import re
import reprlib
from pathlib import Path

from .core.errors import LayerError, MLPManualError  # noqa: F401 (the base, and the core's own)


class ConfigError(MLPManualError):
    """A config file or ``--set`` override is malformed, unknown or out of range."""


class DataError(MLPManualError):
    """A dataset is missing, malformed, or does not fit the model or the loss."""


class ModelFileError(MLPManualError):
    """A model or checkpoint file is not ours, is damaged, or belongs to another model."""


class RunInUse(MLPManualError):
    """A run folder is being written by another live process (a run or a resume)."""


class UserCodeError(MLPManualError):
    """A module of the user's own code, named with ``--import``, cannot be imported or declares a
    layer class a config cannot use."""


class MissingExtra(MLPManualError):
    """A feature needs an optional dependency that is not installed; the message says what to
    install (``pip install "mlp-manual[sweep]"``)."""


class DeviceError(MLPManualError):
    """The device a run or an estimator asks for cannot be used: its array library is not
    installed, or it finds no GPU; the message says what is missing and how to install it."""


class TrainingDiverged(Exception):
    """The loss or a gradient became non-finite; ``step`` and ``where`` say when and in which layer.

    Not an input mistake, so not an MLPManualError: the CLI reports it and exits with code 3.
    ``run_dir``: the run folder that holds the last finite weights, set when a run ends with it
    (``runs/interruptions.py: ends_named``); None outside a run.
    """

    run_dir: Path | None = None

    def __init__(self, step: int, where: str):
        self.step, self.where = step, where
        super().__init__(f"training diverged at step {step}: {where}")


class TrainingInterrupted(Exception):
    """Training stopped on request (Ctrl-C, SIGTERM, SIGHUP) after finishing a step; the CLI exits
    with 128 + the signal's number (130 for Ctrl-C). ``signum`` is the signal that asked;
    ``run_dir`` the run folder to resume, set when a run ends with it (None outside a run)."""

    signum = 2  # SIGINT
    run_dir: Path | None = None


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP outside the training steps: handled wherever Ctrl-C is (every file is
    written atomically), with the signal's own exit code."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class MachineError(Exception):
    """The machine failed a command: a full disk, a folder made read-only, removed or renamed, a
    file-size limit (``ulimit -f``), an I/O error, too little memory. Not a mistake in the input,
    so not an MLPManualError: the CLI reports it in one line and exits with code 4. ``path`` is
    the file or folder concerned (or None); the message says what failed and what to do next.
    ``run_dir`` is set to the run folder when it ended a run (``runs.interruptions.ends_named``)."""

    run_dir: Path | None = None

    def __init__(self, message: str, path=None):
        super().__init__(message)
        self.path = path


# What to do next, by the errno of a failed file operation
REMEDIES = {
    errno.ENOSPC: "free some space on its disk",
    errno.EDQUOT: "free some space (the disk quota is used up)",
    errno.EROFS: "the file system is mounted read-only: write somewhere else",
    errno.EACCES: "make its folder writable by this user, or write somewhere else",
    errno.EPERM: "make its folder writable by this user, or write somewhere else",
    errno.ENOENT: "its folder was removed or renamed while the command ran",
    errno.ENOTDIR: "its folder was replaced by a file while the command ran",
    errno.EFBIG: "raise the file-size limit (ulimit -f)",
    errno.EIO: "check the disk (dmesg)",
    errno.ENOMEM: "free some memory",
    errno.ESTALE: "check the network file system's mount",
}


def machine_error(e: OSError, path, doing: str = "write") -> Exception:
    """The one-line MachineError for ``e``, an OSError raised while the command was ``doing``
    ("write", "create", "read") ``path``: what failed, on which file, what to do next. An
    OSError of another kind (a bug, not the machine) is returned unchanged."""
    remedy = REMEDIES.get(e.errno)
    if remedy is None:
        return e
    return MachineError(f"cannot {doing} {path} ({e.strerror or e}): {remedy}", path)


def out_of_memory(doing: str = "", size: str | None = None) -> MachineError:
    """The MachineError for a MemoryError raised while ``doing`` (``loading train.csv``); ``size``
    says how much was asked for, when known."""
    asked = f" ({size})" if size else ""
    return MachineError(f"out of memory{' ' + doing if doing else ''}{asked}: close other programs, raise the memory limit "
                        "(ulimit -v), or use less data or a smaller model")


class GradcheckError(MLPManualError):
    """An object handed to the gradient checker cannot be checked: it is not a layer, a loss or
    a model, its methods raise, or it returns arrays of the wrong kind or shape."""


class TrainingWarning(UserWarning):
    """Training goes on, but something looks wrong. ``kind`` names what: ``vanishing``,
    ``exploding`` and ``dead`` (diagnostics), ``initial_loss`` (the loss of the fresh model),
    ``not_learning`` (the learning check), ``data`` (a dataset that loads but looks wrong).
    The message is the whole line the CLI prints, e.g. ``DEAD step 599: layer 3 (ReLU()) ...``.
    """

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


def closest(word: str, options, cutoff: float = 0.6) -> str | None:
    """The option ``word`` was probably meant to be: the most similar spelling (difflib's ratio at
    least ``cutoff``), else the one that abbreviates it or that it abbreviates by initials
    (``learning_rate`` and ``lr``); or None."""
    options = [str(o) for o in options]
    close = difflib.get_close_matches(word, options, n=1, cutoff=cutoff)
    if close:
        return close[0]

    def initials(w: str) -> str | None:
        parts = [p for p in re.split(r"[\W_]+", w) if p]
        return "".join(p[0] for p in parts).lower() if len(parts) > 1 else None

    return next((o for o in options if o.lower() == initials(word) or initials(o) == word.lower()), None)


SHOWN_CHARACTERS = 120
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = 60
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 6
_SHORT.maxlevel = 3


def short_repr(value) -> str:
    """``repr(value)`` for a message, at most SHOWN_CHARACTERS long: a long string, a long list
    or a deep structure is cut with ``...``, without building its whole repr first (a value from
    a YAML document may share one list a million times)."""
    return short_text(_SHORT.repr(value))


def one_line(text) -> str:
    """``text`` on one line: every character that does not print (a line break, NUL, an escape
    sequence's ESC) written as its Python escape, ``\\n``. For text read from a file or a study
    that a message, a table or a file's header line shows."""
    text = str(text)
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def short_text(text: str) -> str:
    """``text`` for a message, cut with ``...`` to SHOWN_CHARACTERS."""
    return text if len(text) <= SHOWN_CHARACTERS else text[:SHOWN_CHARACTERS - 3] + "..."


# A key from a file is quoted whole when it reads as a key: letters, digits, "_", "-" and dots.
KEY_LIKE = re.compile(r"[\w.-]{1,64}", re.ASCII)
KEY_START = re.compile(r"[\w.-]{1,12}", re.ASCII)
SHOWN_KEYS = 5  # unknown keys named in one message


def reads_as_key(key) -> bool:
    """Whether ``key`` reads as a key of a file: at most 64 letters, digits, "_", "-" and dots."""
    return isinstance(key, str) and KEY_LIKE.fullmatch(key) is not None


def shown_key(key, prefix: str = "") -> str:
    """``prefix + key``, a key of a file (``'optimizer.lrr'``), quoted for a message. A key that
    does not read as one (a line of a password file that YAML took for a key, a key across
    lines) is shown only by its first few letters, digits, dots or dashes (``'root...'``), so
    that a file that is not a config is never copied into a message."""
    text = str(key)
    if reads_as_key(text):
        return repr(prefix + text)
    start = KEY_START.match(text)
    return f"'{prefix}{start.group() if start else ''}...'"


def unknown_keys(found: list[tuple[str, object, str]]) -> str:
    """``unknown key 'x' (did you mean 'y'?)``, or ``unknown keys: 'a', 'b', ... and 7 more``:
    ``found`` holds each unknown key as (the dotted prefix of its section, the key, its hint:
    ``did_you_mean``'s or ""); each is quoted by ``shown_key``, at most SHOWN_KEYS of them."""
    shown = [shown_key(key, prefix) + hint for prefix, key, hint in found[:SHOWN_KEYS]]
    more = f" and {len(found) - SHOWN_KEYS} more" if len(found) > SHOWN_KEYS else ""
    return f"unknown key {shown[0]}" if len(found) == 1 else f"unknown keys: {', '.join(shown)}{more}"


def did_you_mean(word: str, options, prefix: str = "") -> str:
    """`` (did you mean 'prefix<closest option>'?)`` when an option is close to ``word``, else ""."""
    close = closest(word, options)
    return f" (did you mean '{prefix}{close}'?)" if close else ""


class ExerciseError(MLPManualError):
    """An exercise name, or a file or folder of exercises, that a command cannot use."""


class ExportError(MLPManualError):
    """A model cannot be written in another format (a layer without an ONNX translation, an
    output file that cannot be written)."""


def what_was_raised(e: BaseException) -> str:
    """``TypeError: <first line of the message>``, for a one-line error about a user's code."""
    text = str(e)
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"
