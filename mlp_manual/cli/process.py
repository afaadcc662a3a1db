"""A command run as the main program of its process: the console scripts of pyproject.toml and
``python -m mlp_manual.cli.<command>`` both start here.

The only thing this adds to the click command is how the process ends. When Python exits it
runs its garbage collector over every object the process still holds, matplotlib's many among
them, to find reference cycles; the XOR example spends 0.09 s of its 0.74 s there, and moons
0.085 s of 0.89 s (benchmarks/README.md, "Tricks kept and removed"). By then every file the
command writes has been written and closed, and the operating system takes the memory back, so
the process freezes the collector (``gc.freeze``)
in an exit handler and skips that pass. What that pass would have done besides freeing memory
is run the ``__del__`` of objects caught in reference cycles; Python promises no finalizer at
exit anyway, and a layer of the user's (``--import``) should not count on one. Nothing changes
for a command called in-process, as the tests call it through click's CliRunner.

Ctrl-C (or SIGTERM, SIGHUP) while a console script is still loading its command's modules
(numpy, the package), and again once the command has ended and the process is exiting, ends the
process at once with ``Interrupted.`` and 128 + the signal's number: nothing is being written
then, and a KeyboardInterrupt raised inside an extension module's initialisation would surface
as an ImportError (numpy's "initialization failed"), or as a traceback of the exit itself. In
between, the command handles them (cli.common.user_errors; a run saves itself first).
"""

import atexit
import gc
import importlib
import os
import signal
import sys

_as_program = False  # whether this process is a command's own (run_as_program)
_said = False  # whether the command's last line (after a signal) is out
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def interrupted_message(signum: int) -> str:
    return "Interrupted.\n" if signum == signal.SIGINT else f"Interrupted by signal {signum}.\n"


def end_at_once(signum, frame) -> None:
    """A signal handler: write the one line (unless the command's last line is out) and end the
    process now, without unwinding."""
    if not _said:
        try:
            os.write(2, interrupted_message(signum).encode())
        except OSError:  # standard error gone: the exit code says it
            pass
    os._exit(128 + signum)


def end_at_once_on_signals() -> None:
    """From here on, Ctrl-C, SIGTERM and SIGHUP end the process at once (``end_at_once``)."""
    for s in STOP_SIGNALS:
        signal.signal(s, end_at_once)


def last_words(said: bool = False) -> None:
    """The command is ending: in its own process (not a caller's, as click's CliRunner in the
    tests), a signal from here on ends the process at once (``end_at_once``), silently once the
    command has ``said`` its last line."""
    global _said
    _said = _said or said
    if _as_program:
        end_at_once_on_signals()


def interrupted(signum: int = 2) -> None:
    """End the process after Ctrl-C (or SIGTERM, SIGHUP) outside a run's training steps: one
    line, exit code 128 + the signal's number (130 for Ctrl-C). Another signal meanwhile ends
    it at once, with the same line."""
    last_words()
    try:
        sys.stderr.write(interrupted_message(signum))
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error closed too (a terminal gone): the exit code says it
        pass
    last_words(said=True)
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
    global _as_program
    _as_program = True
    atexit.register(gc.freeze)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C raises KeyboardInterrupt again
        terminate_like_ctrl_c()
        sys.exit(_run(command))
    except KeyboardInterrupt as e:  # outside click's own handling: before its shell-completion check ends
        interrupted(getattr(e, "signum", signal.SIGINT))
    finally:  # the command has ended: a signal now ends the exit at once
        end_at_once_on_signals()


def _run(command) -> int:
    """Run the click command as click's standalone mode does, except that Ctrl-C while click
    itself parses the arguments ends as it does inside the command (``interrupted``), not in
    click's "Aborted!" and exit code 1. The exit code."""
    import click

    try:
        result = command.main(standalone_mode=False)
    except click.exceptions.Abort as e:  # click turned a KeyboardInterrupt (or EOF) into Abort
        if isinstance(e.__cause__, KeyboardInterrupt):
            interrupted(getattr(e.__cause__, "signum", signal.SIGINT))
        raise
    except click.ClickException as e:
        e.show()
        return e.exit_code
    return result if isinstance(result, int) else 0  # click returns --help's and --version's exit code


def _program(module: str):
    def program() -> None:
        end_at_once_on_signals()  # while the command's modules load: nothing has started
        command = importlib.import_module(program.module).main
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
mlp_sample = _program("sample")
mlp_sweep = _program("sweep")
mlp_runs = _program("runs")


if __name__ == "__main__":  # python -m mlp_manual.cli.process COMMAND ARGS...: what the console script runs
    # (mlp-sweep starts its workers so: a signal while they load ends them at once, in one line)
    _program(sys.argv.pop(1))()
