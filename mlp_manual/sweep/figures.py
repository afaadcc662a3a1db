"""The sweep's figures in its folder, drawn from the study: history.png, params.png,
importance.png and curves.png (``plots.sweep``). Workers redraw them as trials finish, at most
every ``FIGURES_SECONDS``; ``mlp-sweep run`` draws them once more when it ends. A figure that
cannot be drawn is named in one line; the sweep goes on.
"""

import warnings
from pathlib import Path

from ..errors import what_was_raised
from .storage import StudyUnreachable
from .table import best_trial

FIGURES = ("history.png", "params.png", "importance.png", "curves.png")
FIGURES_SECONDS = 30.0  # a figure of 40 trials takes about 0.2 s to draw


def trial_dicts(study) -> list[dict]:
    """Each trial as ``plots.sweep`` takes it."""
    from .table import STATES, shown_value

    return [{"number": t.number, "state": STATES.get(t.state.name, "failed"), "params": dict(t.params),
             "value": shown_value(t), "curve": dict(t.intermediate_values)} for t in study.get_trials(deepcopy=False)]


def importances(study) -> tuple[dict, str]:
    """Optuna's parameter importances of the complete trials (its default evaluator), and a note
    on what they rest on or why there are none yet."""
    import optuna

    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(complete) < 2:
        return {}, f"importances need at least 2 complete trials; {len(complete)} so far"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = optuna.importance.get_param_importances(study)
    except (RuntimeError, ValueError) as e:  # e.g. a parameter that never varied
        return {}, f"no importances yet: {what_was_raised(e)}"
    return dict(found), f"Optuna's default importance evaluator over {len(complete)} complete trials"


def draw_figures(study, folder: Path, log_keys=frozenset(), choice_keys=frozenset()) -> list[str]:
    """Write the four figures into ``folder``; the one-line reasons of those that could not be."""
    from ..plots import sweep as plots

    metric = study.user_attrs.get("metric", "objective")
    direction = study.user_attrs.get("direction", "minimize")
    name = study.study_name
    trials = trial_dicts(study)
    best = best_trial(study)
    keys = study.user_attrs.get("space", [])
    failed = []
    steps = [
        ("history.png", lambda p: plots.plot_history(trials, metric, direction, p, f"{name}: {metric} per trial")),
        ("params.png", lambda p: plots.plot_params(trials, keys, metric, p, f"{name}: {metric} against each parameter",
                                                   log_keys, choice_keys)),
        ("importance.png", lambda p: plots.plot_importance(*importances(study), path=p,
                                                           title=f"{name}: which parameters matter")),
        ("curves.png", lambda p: plots.plot_trial_curves(trials, metric, p, f"{name}: {metric} per epoch of each trial",
                                                         None if best is None else best.number)),
    ]
    for file, draw in steps:  # each figure's failure costs only that figure
        try:
            draw(folder / file)
        except StudyUnreachable:  # not a failure of the figure: the sweep ends on it
            raise
        except Exception as e:
            failed.append(f"could not draw {folder / file}: {what_was_raised(e)}")
    return failed
