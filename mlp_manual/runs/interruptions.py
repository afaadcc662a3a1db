"""Ctrl-C during a run: inside the training steps it stops the trainer after its current step
(which then writes a checkpoint); anywhere else it stops at once, every file being written
atomically, and the run folder is named for the resume.
"""

import signal
from contextlib import contextmanager
from pathlib import Path

from ..errors import TrainingDiverged, TrainingInterrupted
from ..training.trainer import Trainer


@contextmanager
def stop_on_sigint(trainer: Trainer):
    """While training, Ctrl-C asks the trainer to stop after its current step (a second Ctrl-C
    stops at once)."""
    def handler(signum, frame):
        if trainer.stop_requested:
            raise KeyboardInterrupt
        trainer.stop_requested = True
    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def ends_named(run_dir: Path):
    """The errors that end a run carry its folder: TrainingDiverged and TrainingInterrupted get
    ``run_dir``, and a KeyboardInterrupt (Ctrl-C outside the training steps) becomes a
    TrainingInterrupted."""
    try:
        yield
    except (TrainingDiverged, TrainingInterrupted) as e:
        e.run_dir = run_dir
        raise
    except KeyboardInterrupt:
        interrupted = TrainingInterrupted()
        interrupted.run_dir = run_dir
        raise interrupted from None
