"""The Optuna study of a sweep: created by the first worker (or joined), with the sampler that
chooses each trial's parameters.

A study records what it was created for (its metric, direction and space, in its user
attributes); joining it with a sweep file that judges or searches differently is refused.

Seeds: each trial's parameters are drawn by a sampler seeded with the sweep's ``sampler.seed``
plus the trial's number, so a sweep run by one worker draws the same parameters every time,
and workers never draw the same sequence. Every trial trains with the base config's ``seed``.
"""

from pathlib import Path

from .search import make_sampler
from .spec import Sweep
from .storage import StudyStorage, require_optuna


def open_study(sweep: Sweep, storage: StudyStorage, folder: Path | None = None):
    """The study called ``sweep.name`` in ``storage``: created if it does not exist (under the
    budget lock, so workers starting together create it once), else joined after checking that
    it was made for the same objective and space. A study that does not exist is not created
    for a sweep ``folder`` that holds trials already (its journal or database lost): their run
    folders would be in the way of the new study's trials, each of which would fail."""
    optuna = require_optuna()
    from ..errors import ConfigError

    made_for = {"metric": sweep.metric, "direction": sweep.direction,
                "space": [p.key for p in sweep.space], "trials": sweep.trials}
    with storage.budget_lock("create"):
        trials = folder / "trials" if folder is not None else None
        if trials is not None and trials.is_dir() and any(trials.iterdir()) \
                and sweep.name not in optuna.get_all_study_names(storage.storage):
            raise ConfigError(f"{trials} holds the run folders of trials, but the study {sweep.name} is not in "
                              f"{storage.describe()} (was it removed?): restore it, or give the sweep another --out")
        study = optuna.create_study(storage=storage.storage, study_name=sweep.name, direction=sweep.direction,
                                    sampler=PerTrialSampler(sweep), load_if_exists=True)
        found = study.user_attrs
        if not found:
            for key, value in made_for.items():
                study.set_user_attr(key, value)
            return study
    for key in ("metric", "direction", "space"):
        if found.get(key) != made_for[key]:
            raise ConfigError(f"{sweep.path}: the study {sweep.name} in {storage.describe()} was made with "
                              f"{key} {found.get(key)}, this sweep file has {made_for[key]}; give the sweep "
                              "another name, or another --out")
    if found.get("trials") != sweep.trials:
        study.set_user_attr("trials", sweep.trials)  # a larger budget continues the study
    return study


def load_study(storage: StudyStorage, name: str):
    """The existing study ``name`` (for status, best and the figures)."""
    optuna = require_optuna()
    from ..errors import ConfigError

    try:
        return optuna.load_study(study_name=name, storage=storage.storage, sampler=optuna.samplers.RandomSampler())
    except KeyError:
        names = [s.study_name for s in optuna.get_all_study_summaries(storage.storage)]
        raise ConfigError(f"no study {name} in {storage.describe()}"
                          + (f"; it holds {', '.join(names)}" if names else "; it holds none")) from None


def continued_numbers(trials) -> set[int]:
    """The numbers of trials another trial continues (their worker stopped): they do not count
    in the budget."""
    return {t.user_attrs["continues"] for t in trials if "continues" in t.user_attrs}


class PerTrialSampler:
    """The sweep's sampler, made afresh for each trial with the seed ``sampler.seed + number``
    (Optuna's samplers keep no state but their random generator: the history is the study's);
    the grid sampler with ``sampler.seed`` alone (0 by default), as it shuffles the grid with
    it and gives trial number i the i-th point.
    TPE runs with the constant liar, so that workers asking at once spread out."""

    def __new__(cls, sweep: Sweep):
        optuna = require_optuna()

        class Sampler(optuna.samplers.BaseSampler):
            def __init__(self):
                self._number, self._inner = None, None

            def _for(self, trial):
                if trial.number != self._number:
                    seed = sweep.sampler.options["seed"]
                    self._number = trial.number
                    if sweep.sampler.name == "grid":  # one order of the grid for every trial and worker
                        seed = seed or 0
                    elif seed is not None:
                        seed += trial.number
                    self._inner = make_sampler(optuna, sweep.sampler.name, sweep.sampler.options, sweep.space,
                                               seed)
                return self._inner

            def infer_relative_search_space(self, study, trial):
                return self._for(trial).infer_relative_search_space(study, trial)

            def sample_relative(self, study, trial, search_space):
                return self._for(trial).sample_relative(study, trial, search_space)

            def sample_independent(self, study, trial, param_name, param_distribution):
                return self._for(trial).sample_independent(study, trial, param_name, param_distribution)

            def before_trial(self, study, trial):
                self._for(trial).before_trial(study, trial)

            def after_trial(self, study, trial, state, values):
                if sweep.sampler.name != "grid":  # the grid's stops the study's optimize(); the budget does here
                    self._for(trial).after_trial(study, trial, state, values)

        return Sampler()
