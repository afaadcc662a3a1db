"""Checks of the JSON values a checkpoint's ``__meta__`` holds.

A training object that saves its state declares its entries as ``{key: (check, what)}``: a
predicate on the loaded value and the words an error message uses for a value that fails it.
"""

import math

from ..options import is_integer


def is_count(v) -> bool:
    """A non-negative integer (JSON booleans are not counts)."""
    return is_integer(v, 0)


def is_number(v) -> bool:
    """A JSON number that is a finite float (an integer too large for a float is not)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False
