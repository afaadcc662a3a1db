"""A sweep worker: it takes the study's next trial, trains it as an ordinary run in
``OUT/trials/<number>/`` (the code path of ``mlp-train``), tells the study how it ended, and
goes on until the study's budget is used up.

The budget counts the study's trials, over every worker and machine: the worker counts and
asks under the storage's ``budget_lock``. A trial records its host, its run folder, its config
and, while it runs, a heartbeat (a time, every quarter of ``stale_after``). A trial whose
heartbeat is older than ``stale_after`` lost its worker (``kill -9``, a lost machine): the next
worker to look marks it failed and queues a trial that continues it, which resumes its run
folder from the checkpoint when the folder is reachable, or trains its parameters again when
it is not. A worker stopped by Ctrl-C or SIGTERM saves its run (as ``mlp-train`` does) and
queues the continuation itself, so running the command again goes on where it stopped
(``takeover``). A continuation whose run folder holds a finished training (its worker lost the
study before it could say so) records that run's end without training.
"""

import contextlib
import json
import math
import os
import platform
import shutil
import signal
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import dump_config, with_absolute_paths
from ..errors import MachineError, MLPManualError, TrainingDiverged, TrainingInterrupted, what_was_raised
from ..process import signal_name
from ..runs.metrics import read_metrics
from ..runs.run import resume_run, train_run
from .folder import foreign_run
from .journal import JournalDamaged
from .liveness import Heartbeat, process_id
from .reporting import EpochReporter
from .search import make_pruner
from .space import suggest
from .spec import Sweep
from .storage import StudyStorage, StudyUnreachable, require_optuna
from .study import continued_numbers, open_study
from .takeover import TakeOver

HOST = platform.node()
PROCESS = process_id()


@dataclass
class Outcome:
    """How a trial ended: its state (complete, pruned, failed), objective, why, epochs and seconds."""

    number: int
    state: str
    value: float | None
    reason: str | None
    epochs: int
    seconds: float
    params: dict


class Worker:
    """Runs trials of ``sweep`` in the study of ``storage``, their folders under ``out``;
    ``report(outcome)`` is called as each trial ends, ``between()`` after it."""

    def __init__(self, sweep: Sweep, out: Path, storage: StudyStorage, report: Callable[[Outcome], None],
                 between: Callable[[], None] = lambda: None, note: Callable[[str], None] = lambda line: None):
        self.sweep, self.out, self.storage, self.report, self.between = sweep, out, storage, report, between
        self.optuna = require_optuna()
        self.study = open_study(sweep, storage, out)
        self.takeover = TakeOver(self.study, sweep.stale_after, note)
        self.ran = 0
        self.notes: dict[int, str] = {}  # trial number -> a note for the trial's reason

    def run(self, limit: int | None = None) -> int:
        """Train trials until the budget is used up (or ``limit`` trials of this worker); the
        number this worker ran."""
        while limit is None or self.ran < limit:
            trial = self._next_trial()
            if trial is None:
                break
            outcome = self._run_trial(trial)
            self.ran += 1
            self.report(outcome)
            self.between()
        return self.ran

    def _next_trial(self):
        """The study's next trial (a waiting continuation first), or None when the budget is used
        and no trial that may still need taking over runs (``TakeOver.waited``)."""
        TrialState = self.optuna.trial.TrialState
        seen: dict[int, float] = {}
        while True:
            with self.storage.budget_lock():
                self.takeover.stale()
                trials = self.study.get_trials(deepcopy=False)
                gone = continued_numbers(trials)
                waiting = any(t.state == TrialState.WAITING for t in trials)
                if waiting or sum(t.number not in gone for t in trials) < self.sweep.trials:
                    trial = self.study.ask()
                    self.study._storage.set_trial_user_attr(trial._trial_id, "heartbeat", time.time())
                    return trial
            if not self.takeover.waited([t for t in trials if t.state == TrialState.RUNNING], seen):
                return None

    def _run_trial(self, trial) -> Outcome:
        params = {p.key: suggest(trial, p) for p in self.sweep.space}
        number, storage, started = trial.number, self.study._storage, time.perf_counter()
        run_dir = (self.out / "trials" / str(number)).resolve()
        earlier, adopted = self._adopt(trial, run_dir)
        name = f"{self.sweep.name}-{number}"
        cfg = None
        try:
            cfg = self.sweep.trial_config(params, name)
        except MLPManualError as e:
            return self._end(trial, params, "failed", None, str(e), 0, started)
        for key, value in (("host", HOST), ("run_dir", str(run_dir)), ("pid", os.getpid()), ("process", PROCESS),
                           ("config", dump_config(with_absolute_paths(cfg)))):
            storage.set_trial_user_attr(trial._trial_id, key, value)
        pruner = make_pruner(self.optuna, self.sweep.pruner.name, self.sweep.pruner.options)
        reporter = EpochReporter(self.study, trial, self.sweep.metric, pruner, self.sweep.pruner.name, earlier)
        with Heartbeat(storage, trial._trial_id, self.sweep.stale_after / 4):
            try:
                summary = _train(cfg, run_dir, adopted, reporter)
            except JournalDamaged:
                raise
            except TrainingDiverged as e:
                return self._end(trial, params, "failed", None, f"diverged: {e}", len(reporter.values), started)
            except MLPManualError as e:  # a parameter combination the config or the data refuses
                return self._end(trial, params, "failed", None, str(e), len(reporter.values), started)
            except (TrainingInterrupted, MachineError, KeyboardInterrupt) as e:
                if isinstance(e, MachineError):
                    why = f"the machine failed: {e}"
                else:
                    why = f"interrupted by {signal_name(getattr(e, 'signum', signal.SIGINT))}"
                # without the study, the trial is taken over when the same command runs again
                with contextlib.suppress(StudyUnreachable), self.storage.budget_lock():
                    self.takeover.hand_over(storage.get_trial(trial._trial_id), why, time.perf_counter() - started)
                raise
            except Exception as e:  # a fault of this trial alone: the sweep goes on
                return self._end(trial, params, "failed", None, f"failed: {what_was_raised(e)}",
                                 len(reporter.values), started)
        reporter.flush()
        storage.set_trial_user_attr(trial._trial_id, "run_seconds", summary["wall_seconds"])
        storage.set_trial_user_attr(trial._trial_id, "report_seconds", round(reporter.seconds, 4))
        epochs = summary["epochs_run"]
        if summary["status"] == "pruned":
            last = reporter.values[max(reporter.values)] if reporter.values else None
            return self._end(trial, params, "pruned", last, summary["stop_reason"], epochs, started)
        value = objective_of(summary, self.sweep.metric)
        if value is None or not math.isfinite(value):
            return self._end(trial, params, "failed", None, f"the objective {self.sweep.metric} is not finite",
                             epochs, started)
        return self._end(trial, params, "complete", value, summary.get("stop_reason"), epochs, started)

    def _adopt(self, trial, run_dir: Path) -> tuple[dict, bool]:
        """For a trial that continues another: the values of the epochs run before, and whether
        the other's run folder was moved to ``run_dir`` to be resumed. Only a run folder of this
        sweep is moved (``foreign_run``); for any other the parameters are trained again, and the
        trial's note says why."""
        number = trial.user_attrs.get("continues")
        if number is None:
            return {}, False
        before = self.study.get_trials(deepcopy=False)[number]
        earlier = dict(before.intermediate_values)
        why = foreign_run(before, self.sweep, self.storage)
        if why is not None:
            self.notes[trial.number] = f"trained again: {why}"
            self.study._storage.set_trial_user_attr(trial._trial_id, "reason", self.notes[trial.number])
            return {}, False
        source = Path(before.user_attrs["run_dir"])
        if source != run_dir:
            try:
                run_dir.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.rename(source, run_dir)
                except OSError:  # another disk
                    shutil.copytree(source, run_dir)
            except OSError:
                return {}, False
        return earlier, True

    def _end(self, trial, params: dict, state: str, value: float | None, reason: str | None, epochs: int,
             started: float) -> Outcome:
        TrialState = self.optuna.trial.TrialState
        seconds = time.perf_counter() - started
        storage = self.study._storage
        note = self.notes.pop(trial.number, None)  # why a continued trial was trained again
        reason = f"{note}; {reason}" if note and reason else note or reason
        for key, v in (("reason", reason), ("epochs", epochs), ("seconds", round(seconds, 3))):
            if v is not None:
                storage.set_trial_user_attr(trial._trial_id, key, v)
        try:
            if state == "complete":
                self.study.tell(trial, value)
            elif state == "pruned":
                self.study.tell(trial, state=TrialState.PRUNED)
            else:
                self.study.tell(trial, state=TrialState.FAIL)
        except self.optuna.exceptions.UpdateFinishedTrialError:  # another worker took it over as stale meanwhile
            state = "failed"
        return Outcome(trial.number, state, value, reason, epochs, seconds, params)


def _train(cfg, run_dir: Path, adopted: bool, reporter: EpochReporter) -> dict:
    """Train the trial's run (resume the folder it adopted, or take its summary when its
    training had finished) and write every epoch's value to the study, however the run ends;
    the run's summary."""
    try:
        with warnings.catch_warnings():  # each run keeps its warnings in its summary.json
            warnings.simplefilter("ignore")
            if adopted:
                finished = finished_summary(run_dir)
                if finished is not None:
                    reporter.add_missing(_metric_values(run_dir, reporter.metric))
                    return finished
                return resume_run(str(run_dir), echo=_silent, log_every=None, watch=reporter)
            return train_run(cfg, str(run_dir), echo=_silent, log_every=None, watch=reporter)
    finally:
        reporter.write()


FINISHED = ("completed", "stopped_early", "pruned")  # a run's status once its training has ended


def finished_summary(run_dir: Path) -> dict | None:
    """The summary of the run in ``run_dir`` when its training ended (its worker lost the study
    before it could say so), else None: summary.json is written last, and removed when a run
    is resumed."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or summary.get("status") not in FINISHED:
        return None
    try:
        float(summary["wall_seconds"]), int(summary["epochs_run"])
        objective_of(summary, "")
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return summary


def _metric_values(run_dir: Path, metric: str) -> dict[int, float]:
    """Each epoch's ``metric`` in the run's metrics.csv (six significant digits)."""
    try:
        history = read_metrics(run_dir)
    except (MLPManualError, OSError):
        return {}
    return {int(e): float(v) for e, v in zip(history.get("epoch", []), history.get(metric, [])) if v is not None}


def objective_of(summary: dict, metric: str) -> float | None:
    """The metric of the weights the run keeps (model.npz): the restored best epoch's with early
    stopping, else the last epoch's."""
    kept = summary["best"] if summary["weights"]["source"] == "best" else summary["final"]
    return kept.get(metric)


def _silent(line: str) -> None:
    """A trial's epoch lines are not printed: mlp-sweep prints one line per trial."""
