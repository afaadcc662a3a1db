"""The search space of a sweep: each parameter a range or a list of choices, the value a trial
draws for it, and the grid the grid sampler tries."""

import math
from dataclasses import dataclass

from ..errors import ConfigError

# The grid sampler makes the list of its points again for each trial (Optuna's GridSampler, 45 ms
# at 100,000 points, measured) and tries them in turn, one trial each: a larger grid is a step
# or a list of choices written wrong long before it is a search anyone runs to its end.
MAX_GRID_POINTS = 100_000


@dataclass(frozen=True)
class Param:
    """One dimension of the search: a range (``low`` to ``high``, on a log scale with ``log``, in
    steps of ``step``; integers when the bounds are) or a list of ``choices``."""

    key: str  # a --set key: optimizer.lr, model.layers.0.units
    low: float | int | None = None
    high: float | int | None = None
    log: bool = False
    step: float | int | None = None
    choices: tuple = ()

    @property
    def integer(self) -> bool:
        return not self.choices and all(isinstance(v, int) for v in (self.low, self.high) if v is not None) \
            and (self.step is None or isinstance(self.step, int))

    def grid_size(self) -> int | float:
        """How many values the grid sampler tries (math.inf beyond what a float counts), without
        making them; the range needs a step."""
        if self.choices:
            return len(self.choices)
        steps = (self.high - self.low) / self.step
        return int(math.floor(steps + 1e-9)) + 1 if math.isfinite(steps) else math.inf

    def grid(self) -> list:
        """Every value the grid sampler tries: the choices, or the range in its steps."""
        if self.choices:
            return list(self.choices)
        values = [self.low + i * self.step for i in range(self.grid_size())]
        return values if self.integer else [round(v, 12) for v in values]


def suggest(trial, p: Param):
    """The trial's value of the parameter ``p``."""
    if p.choices:
        return trial.suggest_categorical(p.key, list(p.choices))
    if p.integer:
        return trial.suggest_int(p.key, p.low, p.high, step=p.step or 1, log=p.log)
    return trial.suggest_float(p.key, p.low, p.high, step=p.step, log=p.log)


def grid_size(space: tuple[Param, ...], path) -> int:
    """The number of points of the grid sampler's grid over ``space`` (of the sweep file
    ``path``), counted without making it; ConfigError for a range without a step, or a grid of
    more than MAX_GRID_POINTS."""
    for p in space:
        if not p.choices and p.step is None:
            raise ConfigError(f"{path}: the grid sampler needs a step or choices for space {p.key}")
    sizes = {p.key: p.grid_size() for p in space}
    size = math.prod(sizes.values())
    if size > MAX_GRID_POINTS:
        each = "; ".join(f"{key}: {_count(n)}" for key, n in sorted(sizes.items(), key=lambda kv: -kv[1]))
        raise ConfigError(f"{path}: the grid has {_count(size)} points ({each}); the grid sampler takes at most "
                          f"{MAX_GRID_POINTS:,}: use a larger step or fewer choices, or the tpe or random sampler")
    return size


def _count(n: int | float) -> str:
    return f"{n:,}" if n < 10**12 else "more than 10^12"
