"""What a study holds, as rows: one per trial, with its state, parameters, objective, epochs,
seconds, host and run folder (``mlp-sweep status``), and the best trial's config (``mlp-sweep best``)."""

import time

STATES = {"RUNNING": "running", "COMPLETE": "complete", "PRUNED": "pruned", "FAIL": "failed", "WAITING": "waiting"}


def shown_value(t) -> float | None:
    """A trial's objective: a complete trial's value, a pruned one's at the epoch it was stopped."""
    if t.state.name == "COMPLETE":
        return t.value
    if t.state.name == "PRUNED" and t.intermediate_values:
        return t.intermediate_values[max(t.intermediate_values)]
    return None


def trial_rows(study) -> list[dict]:
    """One dict per trial: number, state, each parameter (by its space key), the objective
    (named by the study's metric), epochs, seconds, host, run_dir and note (why it stopped);
    the best first, then the trials without an objective by number."""
    metric = study.user_attrs.get("metric", "objective")
    space = study.user_attrs.get("space", [])
    now = time.time()
    rows = []
    for t in study.get_trials(deepcopy=False):
        state = STATES.get(t.state.name, t.state.name.lower())
        value = shown_value(t)
        seconds = t.user_attrs.get("seconds")
        if seconds is None and t.state.name == "RUNNING" and t.datetime_start is not None:
            seconds = round(now - t.datetime_start.timestamp(), 1)
        epochs = t.user_attrs.get("epochs", len(t.intermediate_values) if t.state.name == "RUNNING" else None)
        params = t.params
        note = t.user_attrs.get("reason")
        if t.state.name == "WAITING":  # a queued continuation: its parameters are fixed, not yet suggested
            params = t.system_attrs.get("fixed_params") or {}
            if "continues" in t.user_attrs:
                note = f"queued to continue trial {t.user_attrs['continues']}"
        row = {"number": t.number, "state": state}
        row.update({key: params.get(key) for key in space})
        row.update({metric: value, "epochs": epochs, "seconds": seconds, "host": t.user_attrs.get("host"),
                    "run_dir": t.user_attrs.get("run_dir"), "note": note})
        rows.append(row)
    sign = -1 if study.user_attrs.get("direction") == "maximize" else 1
    return sorted(rows, key=lambda r: (r[metric] is None or r["state"] != "complete",
                                       sign * r[metric] if r[metric] is not None else 0, r["number"]))


def best_trial(study):
    """The complete trial with the best objective, or None."""
    try:
        return study.best_trial
    except ValueError:  # no complete trial yet
        return None


def counts(study) -> dict[str, int]:
    """Trials per state, the continued ones (whose worker stopped) left out."""
    from .study import continued_numbers

    trials = study.get_trials(deepcopy=False)
    gone = continued_numbers(trials)
    found: dict[str, int] = {}
    for t in trials:
        if t.number not in gone:
            state = STATES.get(t.state.name, t.state.name.lower())
            found[state] = found.get(state, 0) + 1
    return found
