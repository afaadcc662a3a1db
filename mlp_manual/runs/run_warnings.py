"""The warnings of a run: every TrainingWarning recorded in order, and shown as it happens.

Python shows a warning with its file and line, and by default only once per distinct message
and place; a run keeps each occurrence, and the command line prints each as the bare message.
"""

import warnings
from collections.abc import Callable
from contextlib import contextmanager

from ..errors import TrainingWarning


@contextmanager
def collect_warnings(show: Callable[[TrainingWarning], None] | None = None):
    """Record, in the list this yields, every TrainingWarning shown inside, in order.

    Without ``show`` Python's filters decide as usual what is shown (by default each distinct
    message once), and what is shown is recorded and passed on to the display in place (Python's,
    or that of an enclosing ``collect_warnings``). With ``show`` the caller owns the display:
    every occurrence is recorded and shown by ``show`` alone, as the bare message. Other warnings
    are left alone.
    """
    caught: list[TrainingWarning] = []
    with warnings.catch_warnings():
        passed_on = warnings.showwarning
        if show:
            warnings.simplefilter("always", TrainingWarning)

        def showwarning(message, category, filename, lineno, file=None, line=None):
            if isinstance(message, TrainingWarning):
                caught.append(message)
                if show:
                    return show(message)
            return passed_on(message, category, filename, lineno, file, line)

        warnings.showwarning = showwarning
        yield caught
