"""Learning-rate schedules, as a function of the optimizer step.

Step and exponential decay change the rate once per epoch; cosine changes it every step,
after a linear warmup. ``SCHEDULES`` maps each config name to its rule and the options it
declares (``mlp_manual/options.py``'s vocabulary), which a config's ``schedule`` section may set.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

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

    def epoch(self, step: int) -> int:
        """The epoch that optimizer step ``step`` belongs to (counted from 0)."""
        return step // self.steps_per_epoch


def constant(s: Schedule, step: int) -> float:
    return s.base_lr


def step_decay(s: Schedule, step: int) -> float:
    """Multiply by gamma every ``step_size`` epochs."""
    return s.base_lr * s.options["gamma"] ** (s.epoch(step) // s.options["step_size"])


def exponential(s: Schedule, step: int) -> float:
    """Multiply by gamma every epoch."""
    return s.base_lr * s.options["gamma"] ** s.epoch(step)


def cosine(s: Schedule, step: int) -> float:
    """Linear warmup to the base rate, then a half cosine down to ``min_lr`` at the last step."""
    base, min_lr = s.base_lr, s.options["min_lr"]
    if step < s.warmup_steps:
        return base * (step + 1) / s.warmup_steps
    progress = min(1.0, (step - s.warmup_steps) / max(1, s.total_steps - s.warmup_steps))
    return min_lr + 0.5 * (base - min_lr) * (1 + math.cos(math.pi * progress))


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
