"""Learning-rate schedules: the rate of optimizer step ``step`` (counted from 0).

Step and exponential decay change the rate once an epoch; cosine changes it every step, after a
linear warmup.
"""

import math


def constant(step: int, base_lr: float) -> float:
    return base_lr


def step_decay(step: int, base_lr: float, steps_per_epoch: int, step_size: int, gamma: float) -> float:
    """Multiply by gamma every ``step_size`` epochs."""
    return base_lr * gamma ** (step // steps_per_epoch // step_size)


def exponential(step: int, base_lr: float, steps_per_epoch: int, gamma: float) -> float:
    """Multiply by gamma every epoch."""
    return base_lr * gamma ** (step // steps_per_epoch)


def cosine(step: int, base_lr: float, total_steps: int, warmup_steps: int = 0, min_lr: float = 0.0) -> float:
    """A linear warmup to the base rate over ``warmup_steps``, then half a cosine down to
    ``min_lr`` at the last step."""
    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    return min_lr + 0.5 * (base_lr - min_lr) * (1 + math.cos(math.pi * progress))
