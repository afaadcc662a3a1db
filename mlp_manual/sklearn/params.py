"""The Config an estimator's parameters describe: scikit-learn's names and meanings translated
into the config's keys, checked by the config's own validation, its messages naming the
estimator's parameters."""

import numpy as np
from sklearn.utils import check_random_state

from ..config import Config, config_from_dict
from ..errors import ConfigError
from ..optimizers import OPTIMIZERS
from ..schedules import SCHEDULES

# estimator parameter -> the config key it sets, as it is (the others are translated in _config)
CONFIG_KEYS = {
    "learning_rate_init": "optimizer.lr",
    "max_iter": "training.epochs",
    "shuffle": "training.shuffle",
    "n_iter_no_change": "training.early_stopping.patience",
    "tol": "training.early_stopping.min_delta",
    "init": "model.init",
    "dtype": "dtype",
}
# the solvers' own parameters, as the optimizers' options: set only for the solvers that have them
SOLVER_OPTIONS = {"momentum": "momentum", "nesterovs_momentum": "nesterov", "beta_1": "beta1", "beta_2": "beta2",
                  "epsilon": "eps"}


def solver_keys(solver: str) -> dict[str, str]:
    """scikit-learn's parameter -> the config key, for the options the optimizer ``solver`` has."""
    options = OPTIMIZERS[solver].options if solver in OPTIMIZERS else {}
    return {param: f"optimizer.{option}" for param, option in SOLVER_OPTIONS.items() if option in options}
# scikit-learn's names of things mlp-manual calls otherwise
ACTIVATIONS = {"logistic": "sigmoid"}
AUTO_BATCH = 200  # batch_size="auto": min(200, rows), as scikit-learn's
# parameters of scikit-learn's MLP that have no counterpart here, and why
NOT_AVAILABLE = {
    ("solver", "lbfgs"): "solver 'lbfgs' is not available: mlp-manual trains by backpropagation with a "
                         f"mini-batch optimizer: {', '.join(OPTIMIZERS)}",
    **{("learning_rate", name): f"learning_rate '{name}' is not available; use 'constant' or one of mlp-manual's "
                                f"schedules: {', '.join(s for s in SCHEDULES if s != 'constant')}"
       for name in ("invscaling", "adaptive")},
}


def _plain(value):
    """A numpy scalar (from a parameter grid, say) as the Python scalar the config accepts."""
    return value.item() if isinstance(value, np.generic) else value


def hidden_layers(sizes, activation, normalization, dropout) -> list[dict]:
    """Config layer specs: for each hidden size linear, normalization (if any), activation,
    dropout (if p > 0); then the output linear, whose width the targets decide."""
    try:
        sizes = list(sizes)
    except TypeError:
        sizes = [sizes]
    specs = []
    for units in sizes:
        specs.append({"type": "linear", "units": _plain(units)})
        if normalization is not None:
            specs.append({"type": normalization})
        specs.append({"type": activation})
        if dropout:
            specs.append({"type": "dropout", "p": _plain(dropout)})
    return [*specs, {"type": "linear"}]


def _seed(random_state):
    """``random_state`` as the config's seed: an integer as it is, else one drawn from it."""
    if isinstance(random_state, (int, np.integer)):
        return random_state
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _batch(batch_size, n_rows: int):
    """``batch_size`` as rows: "auto" is min(200, rows), as in scikit-learn."""
    return min(AUTO_BATCH, n_rows) if isinstance(batch_size, str) and batch_size == "auto" else _plain(batch_size)


def estimator_config(est, n_rows: int) -> Config:
    """The validated Config the parameters of ``est`` (an MLPClassifier or MLPRegressor)
    describe for a fit on ``n_rows`` rows; a bad value raises ConfigError (a ValueError) naming
    the parameter.

    scikit-learn's meanings are kept: ``alpha``, the L2 penalty scikit-learn adds to the mean
    loss of a batch as alpha / 2 * ||W||^2 / batch rows, is weight decay alpha / batch rows;
    with ``early_stopping`` a ``validation_fraction`` of the rows is held out and training
    stops when its loss has not fallen by ``tol`` for ``n_iter_no_change`` epochs, keeping
    the best weights, and without it the training loss is watched the same way and the last
    weights are kept."""
    source = type(est).__name__
    for (param, value), why in NOT_AVAILABLE.items():
        if isinstance(getattr(est, param), str) and getattr(est, param) == value:
            raise ConfigError(f"{source}: {why}")
    batch = _batch(est.batch_size, n_rows)
    alpha = _plain(est.alpha)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha >= 0:
        raise ConfigError(f"{source}: alpha must be a number >= 0, got {alpha!r}")
    values = {key: getattr(est, param) for param, key in CONFIG_KEYS.items()}
    values.update({key: getattr(est, param) for param, key in solver_keys(est.solver).items()})
    values.update({
        "seed": _seed(est.random_state), "loss": est._loss, "optimizer.name": est.solver,
        "optimizer.weight_decay": alpha / batch if isinstance(batch, int) and batch > 0 else alpha,
        "schedule.name": est.learning_rate, "training.batch_size": batch,
        "data.val_fraction": est.validation_fraction if est.early_stopping else 0.0,
        "training.early_stopping.restore_best": bool(est.early_stopping),
        "model.layers": hidden_layers(est.hidden_layer_sizes, ACTIVATIONS.get(est.activation, est.activation),
                                      est.normalization, est.dropout)})
    try:
        return config_from_dict(_nested(values), source)
    except ConfigError as e:
        raise ConfigError(_as_parameters(str(e), source)) from None


def _nested(values: dict) -> dict:
    """``{"optimizer.lr": 0.1}`` -> ``{"optimizer": {"lr": 0.1}}``, numpy scalars as Python's."""
    raw: dict = {}
    for key, value in values.items():
        *sections, name = key.split(".")
        node = raw
        for section in sections:
            node = node.setdefault(section, {})
        node[name] = _plain(value)
    return raw


# the config keys that are not CONFIG_KEYS's or SOLVER_OPTIONS's, as the parameters that set them
NAMED = {"optimizer.name": "solver", "optimizer.weight_decay": "alpha", "schedule.name": "learning_rate",
         "training.batch_size": "batch_size", "data.val_fraction": "validation_fraction", "seed": "random_state"}


def _as_parameters(message: str, source: str) -> str:
    """A config error's ``message`` naming the estimator's parameter instead of the config key."""
    named = {**{key: param for param, key in CONFIG_KEYS.items()},
             **{f"optimizer.{option}": param for param, option in SOLVER_OPTIONS.items()}, **NAMED}
    for key, param in named.items():
        message = message.replace(f"{source}: {key} ", f"{source}: {param} ", 1)
    return message
