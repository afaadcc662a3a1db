"""How a sweep searches: the samplers and pruners a sweep file may choose, each with its options
declared in the vocabulary every choosable thing declares with (mlp_manual/options.py), and the
Optuna objects they make. Options of another choice are refused by name, as a layer's are.
"""

from ..options import Kind, Option, is_integer

COUNT_FROM_0 = Kind("a non-negative integer", lambda v: is_integer(v, 0))
SEED = Option(Kind("a non-negative integer or null", lambda v: v is None or is_integer(v, 0)), None,
              help="the sampler's seed (plus the trial's number); null: unseeded")
SAMPLERS = {
    "tpe": {"seed": SEED, "startup_trials": Option(COUNT_FROM_0, 10, help="random trials before TPE models the results")},
    "random": {"seed": SEED},
    "grid": {"seed": SEED},
}
PRUNERS = {
    "median": {"warmup_epochs": Option(COUNT_FROM_0, 5, help="epochs a trial runs before it may be pruned"),
               "startup_trials": Option(COUNT_FROM_0, 5, help="finished trials before any is pruned")},
    "hyperband": {"min_epochs": Option(Kind("an integer >= 1", lambda v: is_integer(v, 1)), 1,
                                       help="the fewest epochs a trial gets"),
                  "reduction_factor": Option(Kind("an integer >= 2", lambda v: is_integer(v, 2)), 3,
                                             help="how many trials compete for each one promoted")},
    "none": {},
}


def make_sampler(optuna, name: str, options: dict, space: tuple, seed):
    """The sampler ``name`` with its ``options``, drawing from ``space`` with ``seed``."""
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "grid":
        return optuna.samplers.GridSampler({p.key: p.grid() for p in space}, seed=seed)
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=options["startup_trials"], constant_liar=True)


def make_pruner(optuna, name: str, options: dict):
    """The pruner ``name`` with its ``options``."""
    if name == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=options["startup_trials"],
                                           n_warmup_steps=options["warmup_epochs"] + 1)  # epochs count from 1
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=options["min_epochs"], max_resource="auto",
                                              reduction_factor=options["reduction_factor"])
    return optuna.pruners.NopPruner()
