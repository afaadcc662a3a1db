"""Learning-rate schedules, as a function of the optimizer step.

Step and exponential decay change the rate once per epoch; cosine changes it every step,
after a linear warmup.
"""

import math

from .config import ScheduleConfig


class Schedule:
    """lr(step) for ``steps_per_epoch`` steps an epoch over ``epochs`` epochs."""

    def __init__(self, cfg: ScheduleConfig, base_lr: float, steps_per_epoch: int, epochs: int):
        self.cfg, self.base_lr = cfg, base_lr
        self.steps_per_epoch, self.total_steps = steps_per_epoch, steps_per_epoch * epochs
        self.warmup_steps = round(cfg.warmup_epochs * steps_per_epoch)

    def lr(self, step: int) -> float:
        """Learning rate for optimizer step ``step`` (counted from 0)."""
        c, base = self.cfg, self.base_lr
        epoch = step // self.steps_per_epoch
        if c.name == "step":
            return base * c.gamma ** (epoch // c.step_size)
        if c.name == "exponential":
            return base * c.gamma ** epoch
        if c.name == "cosine":
            if step < self.warmup_steps:
                return base * (step + 1) / self.warmup_steps
            progress = min(1.0, (step - self.warmup_steps) / max(1, self.total_steps - self.warmup_steps))
            return c.min_lr + 0.5 * (base - c.min_lr) * (1 + math.cos(math.pi * progress))
        return base
