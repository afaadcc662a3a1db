"""How a loss, a metric or a size in bytes is written for a person, at any magnitude: fixed point
where it shows the digits that matter, scientific notation when the value is very large or very
small; bytes in decimal units.
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


def readable_bytes(n: int) -> str:
    """``about 3.2 TB``: a byte count in decimal units, three significant digits."""
    if n < 1000:
        return f"{n} bytes"
    if n >= 10**21:
        return "more than 1000 EB"
    power = next(p for p in range(1, 7) if 2 * n < 1999 * 1000 ** p or p == 6)
    return f"about {n / 1000 ** power:.3g} {('kB', 'MB', 'GB', 'TB', 'PB', 'EB')[power - 1]}"
