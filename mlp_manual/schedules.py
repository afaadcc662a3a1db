"""The table of learning-rate schedules: one row per schedule, naming its rule (the function of
``core/schedules.py``, as ``Schedule`` hands it the run's numbers) and the options a config's
``schedule`` section may set for it (``mlp_manual/options.py``'s vocabulary).
"""

from collections.abc import Callable
from dataclasses import dataclass

from . import core
from .errors import ConfigError, did_you_mean
from .options import COUNT, FLOAT, NOT_NEGATIVE, Option


class Schedule:
    """lr(step) of the rule ``name`` with its ``options`` for ``steps_per_epoch`` steps an epoch
    over ``epochs`` epochs."""

    def __init__(self, name: str, options: dict | None, base_lr: float, steps_per_epoch: int, epochs: int):
        if name not in SCHEDULES:
            raise ConfigError(f"schedule.name must be one of {', '.join(SCHEDULES)}; got {name!r}"
                              + did_you_mean(str(name), SCHEDULES))
        declared = SCHEDULES[name].options
        self.options = {k: (options or {}).get(k, o.default) for k, o in declared.items()}
        self.base_lr, self.rule = base_lr, SCHEDULES[name].rule
        self.steps_per_epoch, self.total_steps = steps_per_epoch, steps_per_epoch * epochs
        self.warmup_steps = round(self.options.get("warmup_epochs", 0) * steps_per_epoch)

    def lr(self, step: int) -> float:
        """Learning rate for optimizer step ``step`` (counted from 0)."""
        return self.rule(self, step)


def constant(s: Schedule, step: int) -> float:
    return core.constant(step, s.base_lr)


def step_decay(s: Schedule, step: int) -> float:
    return core.step_decay(step, s.base_lr, s.steps_per_epoch, s.options["step_size"], s.options["gamma"])


def exponential(s: Schedule, step: int) -> float:
    return core.exponential(step, s.base_lr, s.steps_per_epoch, s.options["gamma"])


def cosine(s: Schedule, step: int) -> float:
    return core.cosine(step, s.base_lr, s.total_steps, s.warmup_steps, s.options["min_lr"])


@dataclass(frozen=True)
class Rule:
    """A schedule: lr(schedule, step), and the options it reads."""

    rule: Callable[[Schedule, int], float]
    options: dict[str, Option]


GAMMA = Option(FLOAT, 0.1, lambda v: 0 < v <= 1, "be in (0, 1]", "the factor of each decay")

SCHEDULES: dict[str, Rule] = {
    "constant": Rule(constant, {}),
    "step": Rule(step_decay, {"step_size": Option(COUNT, 10, help="epochs between decays"), "gamma": GAMMA}),
    "exponential": Rule(exponential, {"gamma": GAMMA}),
    "cosine": Rule(cosine, {
        "warmup_epochs": Option(FLOAT, 0.0, *NOT_NEGATIVE, "epochs of linear warmup (fractions count in steps)"),
        "min_lr": Option(FLOAT, 0.0, *NOT_NEGATIVE, "the rate at the last step")}),
}
