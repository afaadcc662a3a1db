"""Running a student's code: every call into it goes through ``Calls``, which says what is
about to run (so that a time limit can say where the code hung) and turns whatever the code
raises into a ``StudentRaised`` that names the line of the student's own file.

A student's answer is collected as float64 arrays: ``as_tensor`` says in words what came back
when it is not an array of numbers (None, a list of the wrong length, a string).
"""

import hashlib
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from ..errors import ExerciseError, what_was_raised

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READY = ("ready", None)  # what the child says once the student's file is imported


@dataclass(frozen=True)
class StudentFile:
    """The student's .py file as it was read once, before the check: the child runs this text,
    and the progress file records its ``digest``, so an editor saving mid-check changes neither."""

    path: Path
    text: str

    @classmethod
    def read(cls, path: Path) -> "StudentFile":
        """ExerciseError when ``path`` is not a readable UTF-8 text file."""
        try:
            return cls(path, path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise ExerciseError(f"{path}: cannot read it ({why})") from None

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def load(self) -> ModuleType:
        """The text run as a fresh module named after the file, with its folder first on the
        import path (so that one exercise file may import another); both are restored after."""
        module = ModuleType(self.path.stem)
        module.__file__ = str(self.path)
        folder, saved = str(self.path.resolve().parent), sys.modules.get(self.path.stem)
        sys.path.insert(0, folder)
        sys.modules[self.path.stem] = module  # dataclasses and pickle look a class's module up there
        try:
            exec(compile(self.text, str(self.path), "exec"), module.__dict__)  # the student's own code
        finally:
            sys.path.remove(folder)
            if saved is None:
                sys.modules.pop(self.path.stem, None)
            else:
                sys.modules[self.path.stem] = saved
        return module


@dataclass(frozen=True)
class StudentRaised(Exception):
    """The student's ``what`` raised ``error`` (``TypeError: ...``), at ``where`` (``linear.py,
    line 31: dW = dout @ x``, or "" when no line of theirs is on the stack)."""

    what: str
    error: str
    where: str

    def __str__(self) -> str:
        at = f" ({self.where})" if self.where else ""
        return f"{self.what} raised {self.error}{at}"


class WrongAnswer(Exception):
    """What the student's code returned is not a tensor (None, a string, ragged lists)."""


class Calls:
    """Calls into the student's code. ``emit(what)`` is told before each call."""

    def __init__(self, emit=None):
        self.emit = emit or (lambda what: None)

    def __call__(self, what: str, fn, *args):
        self.emit(what)
        try:
            return fn(*args)
        except (KeyboardInterrupt, SystemExit) as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            raise StudentRaised(what, f"SystemExit({e.code!r}): a check cannot end the program", _where(e)) from None
        except NotImplementedError as e:  # the scaffold's TODO
            where = _where(e).partition(":")[0]
            raise StudentRaised(what, f"NotImplementedError: {e}", where) from None
        except Exception as e:  # whatever the student's code raises is reported, never shown as a traceback
            raise StudentRaised(what, what_was_raised(e).rstrip(": "), _where(e)) from None


def _where(e: BaseException) -> str:
    """``file.py, line N: source`` of the innermost frame of the student's code: outside
    mlp-manual, numpy and Python's own library."""
    stdlib = os.path.dirname(os.__file__)
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if not f.filename.startswith((PACKAGE, stdlib)) and f"{os.sep}numpy{os.sep}" not in f.filename
              and f"{os.sep}site-packages{os.sep}" not in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    name = os.path.basename(f.filename) if os.path.exists(f.filename) else "your code"
    line = f" : {f.line.strip()}" if f.line else ""
    return f"{name}, line {f.lineno}{line}".replace(" : ", ": ")


def as_tensor(value, what: str) -> np.ndarray:
    """``value`` as a float64 array; WrongAnswer saying what it was otherwise."""
    if value is None:
        raise WrongAnswer(f"{what} is None: it was never set (or the function returned nothing)")
    if isinstance(value, (str, bytes, dict)):
        raise WrongAnswer(f"{what} is a {type(value).__name__}, not an array of numbers")
    try:
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise WrongAnswer(f"{what} is not an array of numbers ({type(value).__name__}: {e})") from None
    return a


class Printed:
    """Standard output while the student's code runs: the first SHOWN lines kept, every line
    counted, so that a print in a loop cannot bury the verdict."""

    SHOWN = 5

    def __init__(self):
        self.lines, self.count, self.partial = [], 0, ""

    def write(self, text: str) -> int:
        text = str(text)
        if len(self.lines) >= self.SHOWN:  # only counting now: a print in a loop stays cheap
            self.count += text.count("\n")
            return len(text)
        *whole, self.partial = (self.partial + text).split("\n")
        self.count += len(whole)
        self.lines += whole[:self.SHOWN - len(self.lines)]
        return len(text)

    def flush(self) -> None:
        pass

    def summary(self) -> str:
        """"" when nothing was printed; else how many lines, and the first ones."""
        lines, count = self.lines + ([self.partial] if self.partial and len(self.lines) < self.SHOWN else []), \
            self.count + bool(self.partial)
        if not count:
            return ""
        head = f"your code printed {count:,} line{'s' if count != 1 else ''}"
        shown = "\n".join(f"    | {line[:200]}" for line in lines)
        return f"{head}{', the first ' + str(len(lines)) if count > len(lines) else ''}:\n{shown}"
