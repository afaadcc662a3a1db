"""Trials whose worker is gone, and the wait for trials whose worker may be.

A running trial's worker is gone when its heartbeat is older than the sweep's ``stale_after``
(a ``kill -9``, a lost machine, a preempted job), or at once when it ran on this machine and
its process has ended (``liveness``). The next worker to look marks the trial failed, with why
and the seconds it ran, and queues a trial that continues it (the worker resumes its run folder
or records the run's end from it, see ``worker``).

A worker that finds the budget used while other workers' trials still run does not end yet:
those trials may need taking over. It waits until each has shown a newer heartbeat than when
first seen (its worker is alive and will finish it), has ended, or has been taken over; when a
heartbeat is late, one line says how long the wait may last.
"""

import time
from collections.abc import Callable

from .liveness import is_gone
from .storage import require_optuna


def heartbeat(trial) -> float:
    """The time of the trial's last heartbeat (its start when it has none yet)."""
    beat = trial.user_attrs.get("heartbeat")
    if isinstance(beat, (int, float)) and not isinstance(beat, bool):
        return float(beat)
    return trial.datetime_start.timestamp() if trial.datetime_start else time.time()


class TakeOver:
    """Takes over the trials of ``study`` whose worker is gone; ``note`` says a wait once."""

    def __init__(self, study, stale_after: float, note: Callable[[str], None]):
        self.study, self.stale_after, self.note = study, stale_after, note
        self.optuna = require_optuna()
        self.said_waiting = False

    def stale(self) -> None:
        """Mark each running trial whose worker is gone failed, and queue its continuation."""
        now = time.time()
        for t in self.study.get_trials(deepcopy=False, states=(self.optuna.trial.TrialState.RUNNING,)):
            beat = heartbeat(t)
            host = t.user_attrs.get("host", "an unknown host")
            ran = beat - t.datetime_start.timestamp() if t.datetime_start else None
            if now - beat > self.stale_after:
                self.hand_over(t, f"its worker on {host} stopped (no heartbeat for {now - beat:.0f} s)", ran)
            elif is_gone(t.user_attrs.get("process")):
                self.hand_over(t, f"its worker on {host} stopped (its process {t.user_attrs.get('pid')} has ended)",
                               ran)

    def hand_over(self, frozen, why: str, seconds: float | None = None) -> None:
        """Fail the trial ``frozen`` with ``why`` (after ``seconds`` of work, when known: its
        continuation counts only its own) and queue a trial that continues it."""
        storage = self.study._storage
        following = len(self.study.get_trials(deepcopy=False))  # the number the continuation gets
        try:
            storage.set_trial_user_attr(frozen._trial_id, "reason", f"{why}; continued as trial {following}")
            if seconds is not None and "seconds" not in frozen.user_attrs:
                storage.set_trial_user_attr(frozen._trial_id, "seconds", round(max(0.0, seconds), 3))
            if not storage.set_trial_state_values(frozen._trial_id, self.optuna.trial.TrialState.FAIL):
                return
        except self.optuna.exceptions.UpdateFinishedTrialError:  # it ended meanwhile (its worker was alive after all)
            return
        self.study.enqueue_trial(params=frozen.params, user_attrs={"continues": frozen.number})

    def waited(self, running: list, seen: dict[int, float]) -> bool:
        """The budget is used and the trials ``running`` still run: wait a little if any of
        them has not shown a heartbeat newer than the first one ``seen``; whether it waited."""
        doubtful = []
        for t in running:
            beat = heartbeat(t)
            if seen.setdefault(t.number, beat) == beat:
                doubtful.append(beat)
        if not doubtful:
            return False
        now, beat_every = time.time(), self.stale_after / 4
        late = [t.number for t in running if now - heartbeat(t) > 2 * beat_every and heartbeat(t) == seen[t.number]]
        if late and not self.said_waiting:
            age = now - min(doubtful)
            plural = len(late) > 1
            self.note(f"waiting for trial{'s' if plural else ''} {', '.join(map(str, late))}, whose worker sent no "
                      f"heartbeat for {age:.0f} s: {'they are' if plural else 'it is'} taken over after "
                      f"{self.stale_after:g} s without one (stale_after), in at most "
                      f"{max(0.0, self.stale_after - age):.0f} s")
            self.said_waiting = True
        time.sleep(min(beat_every, 2.0))
        return True
