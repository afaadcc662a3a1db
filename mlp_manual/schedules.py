"""Learning-rate schedules, as a function of the optimizer step.

Step and exponential decay change the rate once per epoch; cosine changes it every step,
after a linear warmup. ``SCHEDULES`` maps each config name to its rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from .errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from .config import ScheduleConfig


class Schedule:
    """lr(step) for ``steps_per_epoch`` steps an epoch over ``epochs`` epochs."""

    def __init__(self, cfg: ScheduleConfig, base_lr: float, steps_per_epoch: int, epochs: int):
        if cfg.name not in SCHEDULES:
            raise ConfigError(f"schedule.name must be one of {', '.join(SCHEDULES)}; got {cfg.name!r}"
                              + did_you_mean(str(cfg.name), SCHEDULES))
        self.cfg, self.base_lr, self.rule = cfg, base_lr, SCHEDULES[cfg.name]
        self.steps_per_epoch, self.total_steps = steps_per_epoch, steps_per_epoch * epochs
        self.warmup_steps = round(cfg.warmup_epochs * steps_per_epoch)

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
    return s.base_lr * s.cfg.gamma ** (s.epoch(step) // s.cfg.step_size)


def exponential(s: Schedule, step: int) -> float:
    """Multiply by gamma every epoch."""
    return s.base_lr * s.cfg.gamma ** s.epoch(step)


def cosine(s: Schedule, step: int) -> float:
    """Linear warmup to the base rate, then a half cosine down to ``min_lr`` at the last step."""
    c, base = s.cfg, s.base_lr
    if step < s.warmup_steps:
        return base * (step + 1) / s.warmup_steps
    progress = min(1.0, (step - s.warmup_steps) / max(1, s.total_steps - s.warmup_steps))
    return c.min_lr + 0.5 * (base - c.min_lr) * (1 + math.cos(math.pi * progress))


SCHEDULES: dict[str, Callable[[Schedule, int], float]] = {
    "constant": constant,
    "step": step_decay,
    "exponential": exponential,
    "cosine": cosine,
}
