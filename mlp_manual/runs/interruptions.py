"""The stop signals during a run (Ctrl-C, SIGTERM, SIGHUP: process.STOP_SIGNALS): inside the
training steps they stop the trainer after its current step (which then writes a checkpoint);
anywhere else they stop at once, every file being written atomically, and the run folder is
named for the resume. The handlers here last as long as their block, and only in the main
thread: a library caller's own handlers are back when it ends.

A second Ctrl-C stops at once (the files stay whole: each is written to a temporary name and
renamed); a second SIGTERM or SIGHUP is ignored while the first is being honoured, so a
scheduler that repeats its signal does not cut the save short.
"""

import signal
from contextlib import contextmanager
from pathlib import Path

from ..errors import MachineError, TrainingDiverged, TrainingInterrupted
from ..process import STOP_SIGNALS
from ..training.trainer import Trainer


class StopRequest:
    """The signal that asked a run to stop (SIGINT until one arrives)."""

    signum = signal.SIGINT


@contextmanager
def stop_on_signals(trainer: Trainer):
    """While training, the stop signals ask the trainer to stop after its current step;
    yields the StopRequest that records which signal did."""
    request = StopRequest()

    def handler(signum, frame):
        if trainer.stop_requested:
            if signum == signal.SIGINT:
                raise KeyboardInterrupt  # a second Ctrl-C: at once
            return  # a repeated SIGTERM or SIGHUP: the first is being honoured
        request.signum = signum
        trainer.stop_requested = True
    try:
        previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    except ValueError:  # not the main thread: leave signals alone
        yield request
        return
    try:
        yield request
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@contextmanager
def signals_held():
    """Hold the stop signals back while the block runs (each is raised again when it
    ends): for importing extension modules, whose initialisation a KeyboardInterrupt would leave
    half done, to fail later as an ImportError or crash the interpreter as it exits.

    The block's handlers only record the signal. Blocking the signals in this thread
    (``pthread_sigmask``) would not do: the kernel hands a signal that this thread blocks to
    another thread of the process (numpy's BLAS threads), and Python then runs the handler in
    this thread all the same, at its next bytecode."""
    received = []

    def hold(signum, frame):
        received.append(signum)
    try:
        previous = {s: signal.signal(s, hold) for s in STOP_SIGNALS}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        for signum in dict.fromkeys(received):  # to the handlers of before, in the order they came
            signal.raise_signal(signum)


@contextmanager
def ends_named(run_dir: Path):
    """The errors that end a run carry its folder: TrainingDiverged, TrainingInterrupted and
    MachineError (a full disk, a folder gone) get ``run_dir``, and a KeyboardInterrupt (Ctrl-C
    outside the training steps) becomes a TrainingInterrupted."""
    try:
        yield
    except (TrainingDiverged, TrainingInterrupted, MachineError) as e:
        e.run_dir = run_dir
        raise
    except KeyboardInterrupt as e:
        interrupted = TrainingInterrupted()
        interrupted.run_dir, interrupted.signum = run_dir, getattr(e, "signum", signal.SIGINT)
        raise interrupted from None
