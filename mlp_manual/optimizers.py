"""The table of optimizers: one row per optimizer, naming its class (``core/optimizers.py``, the
textbook formula), the options a config's ``optimizer`` section may set for it (in
``mlp_manual/options.py``'s vocabulary), and which of its state slots are running averages of
squares (never negative in a checkpoint). Every optimizer shares lr, weight_decay, clip_norm and
accumulate (config/schema.py). The trainer runs each with its work-array version
(training/fast_optimizers.py) where there is one.

An optimizer's state, for a checkpoint, is flat arrays: ``t`` and ``<slot>/<parameter name>``.
"""

from dataclasses import dataclass

import numpy as np

from . import core
from .errors import ConfigError, did_you_mean
from .options import BOOL, Option, fraction, positive


@dataclass(frozen=True)
class OptimizerType:
    name: str
    cls: type[core.Optimizer]
    options: dict[str, Option]
    non_negative: tuple[str, ...] = ()  # slots that are running averages of squares

    @property
    def slots(self) -> tuple[str, ...]:
        return self.cls.slots

    @property
    def adaptive(self) -> bool:
        """Whether its step divides by the root of a running average of squared gradients (a
        ``non_negative`` slot), so that each element moves by about lr."""
        return bool(self.non_negative)


EPS = positive(1e-8, "added to the root of the squared-gradient average, against a division by 0")
ADAM = {"beta1": fraction(0.9, "the decay of the running average of gradients"),
        "beta2": fraction(0.999, "the decay of the running average of squared gradients"), "eps": EPS}

OPTIMIZERS: dict[str, OptimizerType] = {t.name: t for t in (
    OptimizerType("sgd", core.SGD, {
        "momentum": fraction(0.0, "the share of the last step kept in the next (the velocity's decay)"),
        "nesterov": Option(BOOL, False, help="step from where the velocity leads (Nesterov momentum)")}),
    OptimizerType("rmsprop", core.RMSProp, {"rho": fraction(0.9, "the decay of the running average of squared "
                                                                 "gradients"), "eps": EPS}, ("square_avg",)),
    OptimizerType("adam", core.Adam, ADAM, ("v",)),
    OptimizerType("adamw", core.AdamW, ADAM, ("v",)),
)}


def optimizer_arguments(name: str, options: dict | None, weight_decay: float) -> tuple[OptimizerType, dict]:
    """The row of optimizer ``name`` and its constructor's arguments: its ``options`` (those left out
    get the declared default) and ``weight_decay``. ConfigError for a name not in the table."""
    if name not in OPTIMIZERS:
        raise ConfigError(f"optimizer.name must be one of {', '.join(OPTIMIZERS)}; got {name!r}"
                          + did_you_mean(str(name), OPTIMIZERS))
    row = OPTIMIZERS[name]
    return row, {**{k: (options or {}).get(k, o.default) for k, o in row.options.items()}, "weight_decay": weight_decay}


def make_optimizer(name: str, options: dict | None = None, weight_decay: float = 0.0) -> core.Optimizer:
    """The optimizer ``name`` in its plain form (``core/optimizers.py``)."""
    row, kwargs = optimizer_arguments(name, options, weight_decay)
    return row.cls(**kwargs)


def row_of(optimizer: core.Optimizer) -> OptimizerType:
    """The table's row of ``optimizer``: of its class, or of the plain class its fast version extends."""
    return next(t for klass in type(optimizer).__mro__ for t in OPTIMIZERS.values() if t.cls is klass)


def used_slots(optimizer: core.Optimizer) -> tuple[str, ...]:
    """The slots every parameter has after the first step: SGD without momentum keeps none."""
    return () if isinstance(optimizer, core.SGD) and not optimizer.momentum else optimizer.slots


def state_arrays(optimizer: core.Optimizer) -> dict[str, np.ndarray]:
    """The optimizer's state as flat arrays for a checkpoint: ``t`` and ``<slot>/<param name>``."""
    out = {"t": np.array(optimizer.state["t"])}
    for s in optimizer.slots:
        out.update({f"{s}/{n}": a for n, a in optimizer.state[s].items()})
    return out


def load_state_arrays(optimizer: core.Optimizer, arrays: dict[str, np.ndarray]) -> None:
    """Inverse of ``state_arrays``."""
    optimizer.state = {"t": int(arrays["t"]), **{s: {} for s in optimizer.slots}}
    for key, a in arrays.items():
        if "/" in key:
            s, n = key.split("/", 1)
            optimizer.state[s][n] = np.array(a)


def is_weight_matrix(p: np.ndarray) -> bool:
    """A weight matrix (ndim >= 2), not a bias or a norm scale: what weight decay shrinks and
    what gradient-flow diagnostics compare across layers."""
    return p.ndim >= 2
