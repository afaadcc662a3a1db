"""mlp-sweep run's work: trials run by this process or by worker processes it starts, a line
per trial, and the summary at the end."""

import os
import signal
import sys
import time
from pathlib import Path

from ..errors import ConfigError, MachineError, TrainingInterrupted, one_line
from .. import process
from ..process import STOP_SIGNALS, interrupted_by
from ..readable import readable
from .common import machine_failure, say
from .workers import Workers, worker_environment


def note(line: str) -> None:
    """A note of the study's storage, on standard error."""
    say(line, err=True)


def work(sweep, folder: Path, url) -> None:
    """Run trials in this process until the budget is used up; a line per trial. The last
    worker to end (no trial running) draws the figures once more."""
    from ..sweep.figures import FIGURES_SECONDS, draw_figures
    from ..sweep.storage import StudyStorage, StudyUnreachable
    from ..sweep.worker import Worker

    store = StudyStorage(url, folder, note=note)
    drawn = [time.monotonic()]
    log_keys = {p.key for p in sweep.space if p.log}
    choice_keys = {p.key for p in sweep.space if p.choices}

    def between():
        if time.monotonic() - drawn[0] >= FIGURES_SECONDS:
            for line in draw_figures(worker.study, folder, log_keys, choice_keys):
                say(line, err=True)
            drawn[0] = time.monotonic()

    try:
        worker = Worker(sweep, folder, store, lambda outcome: say(trial_line(outcome, sweep.metric)), between, note)
        worker.run()
        if not worker.study.get_trials(deepcopy=False, states=(worker.optuna.trial.TrialState.RUNNING,)):
            for line in draw_figures(worker.study, folder, log_keys, choice_keys):
                say(line, err=True)
    except (TrainingInterrupted, KeyboardInterrupt) as e:
        interrupted(folder, getattr(e, "signum", signal.SIGINT))
    except StudyUnreachable as e:
        machine_failure(f"{e}; the trials' run folders are kept: run the same command again once it is back, "
                        "and the trials that finished meanwhile are recorded")
    except MachineError as e:
        machine_failure(f"{e}; the trial is saved: run the same command again once this is fixed")


def spawn(sweep_file, folder: Path, url, trials: int, workers: int) -> None:
    """Run ``workers`` processes of this command (``--worker``), each with an even share of the
    machine's cores for its matrix products, and wait for them; Ctrl-C, SIGTERM and SIGHUP are
    passed on once, so that each saves its trial, and said once (cli.workers)."""
    env = worker_environment(url, max(1, (os.cpu_count() or 1) // workers))
    command = [sys.executable, "-m", "mlp_manual.cli.process", "sweep", "run", str(sweep_file), "--out", str(folder),
               "--worker", "--trials", str(trials)]
    group = Workers()
    received = []

    def forward(signum, frame):
        if received:
            return  # the first is being honoured
        received.append(signum)
        group.signal(signum)
    previous = {s: signal.signal(s, forward) for s in STOP_SIGNALS}
    try:
        group.start(command, env, workers)
        codes = group.wait()
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    if received:
        interrupted(folder, received[0])
    failed = group.failure(codes)
    if failed:
        lines, code = failed
        for line in lines:
            say(line, err=True)
        sys.exit(code)


def interrupted(folder: Path, signum: int) -> None:
    """End ``mlp-sweep run`` after a signal: the running trials are saved and queued to continue."""
    process.interrupted(signum, f"{interrupted_by(signum)}: the running trials are saved in {folder / 'trials'}; run "
                        "the same command again to continue the sweep")


def trial_line(outcome, metric: str) -> str:
    """``trial 3 complete: val_loss 0.0123 (250 epochs, 0.61 s) optimizer.lr=0.0031 ...``."""
    params = " ".join(f"{k}={_value(v)}" for k, v in outcome.params.items())
    took = f"{outcome.epochs} epochs, {outcome.seconds:.2f} s"
    if outcome.state == "failed":
        return f"trial {outcome.number} failed ({took}) {params}: {outcome.reason}"
    value = "" if outcome.value is None else f": {metric} {readable(outcome.value)}"
    return f"trial {outcome.number} {outcome.state}{value} ({took}) {params}"


def _value(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def say_summary(sweep, folder: Path, store) -> None:
    """The sweep's last lines: the trials finished, the best, and where to look; ConfigError when
    every trial failed."""
    from ..sweep.study import continued_numbers, load_study
    from ..sweep.table import best_trial, counts

    study = load_study(store, sweep.name)
    found = counts(study)
    done = sum(found.get(s, 0) for s in ("complete", "pruned", "failed"))
    parts = ", ".join(f"{n} {s}" for s, n in found.items())
    best = best_trial(study)
    line = (f"{done} of {sweep.trials} trials finished ({parts})" if done <= sweep.trials else
            f"{done} trials finished, beyond the budget of {sweep.trials} ({parts})")
    if best is not None:
        line += f"; best: trial {best.number}, {sweep.metric} {readable(best.value)}"
    say(line)
    say(f"table: mlp-sweep status {folder}; config of the best: mlp-sweep best {folder}; figures in {folder}")
    if done and done == found.get("failed", 0):  # a mistake every trial makes, not a search that found nothing
        gone = continued_numbers(study.get_trials(deepcopy=False))
        first = next(t for t in study.get_trials(deepcopy=False) if t.state.name == "FAIL" and t.number not in gone)
        raise ConfigError(f"every trial failed; trial {first.number}: {one_line(first.user_attrs.get('reason', '?'))}")
