"""Running a student's code: every call into it goes through ``Calls``, which says what is
about to run (so that a time limit can say where the code hung) and turns whatever the code
raises into a ``StudentRaised`` that names the line of the student's own file.

A student's answer is collected as float64 arrays: ``as_tensor`` says in words what came back
when it is not an array of numbers (None, a list of the wrong length, a string).
"""

import os
import traceback
from dataclasses import dataclass

import numpy as np

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
            text = str(e).splitlines()[0] if str(e) else ""
            raise StudentRaised(what, f"{type(e).__name__}: {text}".rstrip(": "), _where(e)) from None


def _where(e: BaseException) -> str:
    """``file.py, line N: source`` of the innermost frame outside mlp-manual and numpy."""
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if not f.filename.startswith(PACKAGE) and f"{os.sep}numpy{os.sep}" not in f.filename]
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
