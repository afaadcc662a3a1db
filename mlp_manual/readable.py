"""How a loss or a metric is written for a person, at any magnitude: fixed point where it
shows the digits that matter, scientific notation when the value is very large or very small.
"""

import math

FIXED_RANGE = (1e-3, 1e4)  # |value| in [low, high) is written in fixed point


def readable(value: float, decimals: int = 4) -> str:
    """``0.3333``, ``52.4526`` and ``0.0000`` in fixed point; ``2.063e+21`` and ``2.000e-05``
    (the same number of significant digits as ``decimals``) outside ``FIXED_RANGE``;
    ``nan``, ``inf`` and ``-inf`` as themselves."""
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    low, high = FIXED_RANGE
    if value == 0 or low <= abs(value) < high:
        return f"{value:.{decimals}f}"
    return f"{value:.{decimals - 1}e}"
