"""A command run as the main program of its process: the console scripts of pyproject.toml and
``python -m mlp_manual.cli.<command>`` both start here.

The only thing this adds to the click command is how the process ends. When Python exits it
runs its garbage collector over every object the process still holds, matplotlib's many among
them, to find reference cycles; a short run such as the XOR example spent about 0.1 s of its
0.8 s there. By then every file the command writes has been written and closed, and the
operating system takes the memory back, so the process freezes the collector (``gc.freeze``)
in an exit handler and skips that pass. What that pass would have done besides freeing memory
is run the ``__del__`` of objects caught in reference cycles; Python promises no finalizer at
exit anyway, and a layer of the user's (``--import``) should not count on one. Nothing changes
for a command called in-process, as the tests call it through click's CliRunner.

Ctrl-C while a console script is still loading its command's modules (numpy, the package)
prints ``Interrupted.`` and exits with 130, as Ctrl-C before a run starts does.
"""

import atexit
import gc
import importlib
import signal
import sys


def interrupted(signum: int = 2) -> None:
    """End the process after Ctrl-C (or SIGTERM, SIGHUP) outside a run's training steps: one
    line, exit code 128 + the signal's number (130 for Ctrl-C)."""
    try:
        sys.stderr.write("Interrupted.\n" if signum == 2 else f"Interrupted by signal {signum}.\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error closed too (a terminal gone): the exit code says it
        pass
    sys.exit(128 + signum)


def terminate_like_ctrl_c() -> None:
    """Make SIGTERM and SIGHUP raise Terminated (a KeyboardInterrupt) in the main thread, so a
    command ends on them as on Ctrl-C, in one line, instead of dying silently; during a run's
    training steps ``runs.interruptions.stop_on_signals`` takes them over and saves the run."""
    from ..errors import Terminated

    def handler(signum, frame):
        raise Terminated(signum)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), handler)


def run_as_program(command) -> None:
    """Run the click ``command`` on ``sys.argv`` as this process's main program; SIGTERM and
    SIGHUP end it as Ctrl-C does (``terminate_like_ctrl_c``). A write beyond the file-size limit
    (``ulimit -f``) fails with EFBIG, reported in one line, instead of killing the process with
    SIGXFSZ before it can say why."""
    atexit.register(gc.freeze)
    terminate_like_ctrl_c()
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    command()


def _program(module: str):
    def program() -> None:
        terminate_like_ctrl_c()
        try:
            command = importlib.import_module(program.module).main
        except KeyboardInterrupt as e:  # Ctrl-C (or SIGTERM) while the command's modules load: nothing has started
            interrupted(getattr(e, "signum", 2))
        run_as_program(command)
    program.module = f"{__package__}.{module}"  # whose click command ``main`` it runs
    program.__doc__ = f"The console script of {program.module}."
    return program


# the console scripts, [project.scripts] in pyproject.toml
mlp_train = _program("train")
mlp_data = _program("data")
mlp_plot = _program("plot")
mlp_eval = _program("evaluate")
mlp_gradcheck = _program("gradcheck")
mlp_export = _program("export")
mlp_explain = _program("explain")
mlp_predict = _program("predict")
