"""The process of a command: how a stop signal is named and ends it, and everything the package
changes process-wide. Only a program changes anything (``run_as_program``: the console scripts of
pyproject.toml, ``python -m mlp_manual.cli.<command>``, a sweep's workers); a library caller
(a notebook fitting a scikit-learn estimator, a test calling a command through click's CliRunner)
keeps its signal handlers, its allocator and its garbage collector as they were.

- The stop signals (``STOP_SIGNALS``): Ctrl-C; SIGTERM, what ``docker stop``, Kubernetes, Slurm,
  ``systemctl stop`` and ``timeout`` send; SIGHUP, a closed terminal. Every message names them
  as ``signal_name`` does, and a command they stop exits with ``exit_code``: 130, 143, 129.
- While a console script loads its command's modules (numpy, the package), and once the command
  has ended, a stop signal ends the process at once, in one line (``end_at_once``): nothing is
  being written then, and a KeyboardInterrupt raised inside an extension module's
  initialisation would surface as an ImportError (numpy's "initialization failed"), or as a
  traceback of the exit itself. While the command runs, each raises a KeyboardInterrupt
  (``raise_on_signals``) that the command handles (cli.common.user_errors); a run saves itself
  first, and during its training steps stops after the current step (runs.interruptions).
- glibc keeps freed memory for the next training step (``keep_freed_memory``).
- Python's last garbage-collector pass is skipped at exit (``run_as_program``).
"""

import atexit
import gc
import importlib
import os
import signal
import sys

# Only modules that Python's start-up has loaded already: a console script imports this module
# before its handlers are installed, and a signal meanwhile shows a traceback through it.

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

_as_program = False  # whether this process is a command's own (run_as_program)
_said = False  # whether the command's last line (after a signal) is out


def signal_name(signum: int) -> str:
    """How every message names a signal: Ctrl-C (SIGINT), SIGTERM, SIGHUP, SIGKILL, ..."""
    if signum == signal.SIGINT:
        return "Ctrl-C"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def interrupted_by(signum: int) -> str:
    """How the line of a command stopped by ``signum`` begins: ``Interrupted`` after Ctrl-C (the
    user knows), ``Interrupted by SIGTERM`` after another signal."""
    return "Interrupted" if signum == signal.SIGINT else f"Interrupted by {signal_name(signum)}"


def exit_code(signum: int) -> int:
    """The exit code of a command stopped by ``signum``: 128 + its number (130 for Ctrl-C, 143
    for SIGTERM, 129 for SIGHUP), as a shell reports a process the signal ended."""
    return 128 + signum


def end_at_once(signum, frame) -> None:
    """A signal handler: write the one line (unless the command's last line is out) and end the
    process now, without unwinding."""
    if not _said:
        try:
            os.write(2, f"{interrupted_by(signum)}.\n".encode())
        except OSError:  # standard error gone: the exit code says it
            pass
    os._exit(exit_code(signum))


def end_at_once_on_signals() -> None:
    """From here on, the stop signals end the process at once (``end_at_once``)."""
    for s in STOP_SIGNALS:
        signal.signal(s, end_at_once)


def raise_on_signals() -> None:
    """From here on, Ctrl-C raises KeyboardInterrupt, and SIGTERM and SIGHUP raise Terminated (a
    KeyboardInterrupt that says which signal), so that a command ends on them as on Ctrl-C, in
    one line, instead of dying silently.

    Python runs a signal's handler in whatever code runs when it comes. Raised while a module
    loads (a command imports some of its modules as it needs them), a KeyboardInterrupt can
    come out as another error (a RuntimeError from a dataclass's ``__set_name__``, an
    ImportError from an extension module), or be printed as "Exception ignored in ..." with a
    traceback and lost (a module lock's weakref callback). While an import is under way the
    signal is therefore sent again a moment later, until it can be raised in the command's own
    code."""
    import threading  # loaded by now: imported here, the handler never imports

    from .errors import Terminated

    def stop(signum, frame):
        if _importing(frame):
            threading.Timer(0.01, os.kill, (os.getpid(), signum)).start()
            return
        raise KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)
    for s in STOP_SIGNALS:
        signal.signal(s, stop)


def _importing(frame) -> bool:
    """Whether ``frame`` runs inside an import (a frame of Python's import system calls it)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def last_words(said: bool = False) -> None:
    """The command is ending: in its own process (not a caller's, as click's CliRunner in the
    tests), a signal from here on ends the process at once (``end_at_once``), silently once the
    command has ``said`` its last line."""
    global _said
    _said = _said or said
    if _as_program:
        end_at_once_on_signals()


def interrupted(signum: int = signal.SIGINT, line: str | None = None) -> None:
    """End the command after a stop signal: its last ``line`` (``Interrupted.`` unless given),
    exit code ``exit_code(signum)``. Another signal meanwhile ends it at once, with the same line."""
    last_words()
    try:
        sys.stderr.write(f"{line or interrupted_by(signum) + '.'}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error closed too (a terminal gone): the exit code says it
        pass
    last_words(said=True)
    sys.exit(exit_code(signum))


# Keeping freed memory in the process, so that a training step's fresh arrays are cheap.
#
# A training step makes arrays the size of a weight matrix and drops them: a layer's new
# gradient (``dW = x.T @ dout``), an optimizer's temporaries, a gathered batch. glibc's
# allocator serves a block above its mmap threshold (128 KiB at first) with fresh pages from the
# kernel and returns the pages when the block is freed, and it gives back the top of its heap
# once more than the trim threshold is free; either way the next step's array faults its pages
# in again, and zeroing them costs more than the arithmetic. Measured on the benchmark network
# (784-256-256-10, batch 128, float32, 2 cores; benchmarks/README.md, "Tricks kept and
# removed"): a fresh dW of the three layers took 0.69 ms against 0.30 ms written into kept
# arrays, a third of the step's matrix products (1.05 ms). With the thresholds below, fresh
# arrays cost what kept ones did (0.32 ms against 0.34 ms), so the layers write
# ``self.grads["W"] = x.T @ dout`` as the math reads and own nothing between steps.
#
# A program raises the thresholds once, as it starts: blocks up to MMAP_THRESHOLD come from the
# heap, and up to TRIM_THRESHOLD of freed heap stays with the process for later. The library
# never does: a program that trains through the Python API may call keep_freed_memory itself
# (the benchmarks do), and keeps up to 64 MiB more after training. Nothing is changed where the
# user tunes the allocator (USER_SETTINGS set: those settings stand), nor elsewhere than glibc
# (macOS, musl, Windows), where training is only slower.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
MMAP_THRESHOLD = 32 << 20  # bytes: glibc's own ceiling when it adjusts the threshold itself
TRIM_THRESHOLD = 64 << 20  # bytes of freed heap kept for the next step
USER_SETTINGS = ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")


def keep_freed_memory() -> None:
    """Raise glibc's mmap and trim thresholds for this process, unless the user tunes the
    allocator or the C library is not glibc."""
    import platform

    if platform.libc_ver()[0] != "glibc" or any(k in os.environ for k in USER_SETTINGS):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already runs on
    except (ImportError, OSError, AttributeError):  # a Python without ctypes: nothing to set
        return
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)


def run_as_program(command) -> None:
    """Run the click ``command`` on ``sys.argv`` as this process's main program: the stop signals
    raise (``raise_on_signals``) until it ends, then end the process at once; freed memory stays
    with the process (``keep_freed_memory``). A write beyond the file-size limit (``ulimit -f``)
    fails with EFBIG, reported in one line, instead of killing the process with SIGXFSZ before
    it can say why.

    At exit Python would run its garbage collector over every object the process still holds,
    matplotlib's many among them, to find reference cycles: xor spent 0.09 s of its 0.74 s
    there, moons 0.085 s of 0.89 s (benchmarks/README.md, "Tricks kept and removed"). By then
    every file the command writes is written and closed, and the operating system takes the
    memory back, so the collector is frozen in an exit handler. That pass would also run the
    ``__del__`` of objects caught in reference cycles; Python promises no finalizer at exit, and
    a layer of the user's (``--import``) should not count on one."""
    global _as_program
    _as_program = True
    atexit.register(gc.freeze)
    keep_freed_memory()
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        raise_on_signals()
        sys.exit(_run(command))
    except KeyboardInterrupt as e:  # before click's own handling starts (its shell-completion check), or in it
        interrupted(getattr(e, "signum", signal.SIGINT))
    finally:  # the command has ended: a signal now ends the exit at once
        end_at_once_on_signals()
        # CPython (3.10 to 3.13) remembers a KeyboardInterrupt raised inside code that exec() ran
        # from a string (a dataclass's generated __init__, as a module that defines one loads) as
        # never handled, though the command caught it; under ``python -m`` (a sweep's workers) it
        # then ends the process by SIGINT at exit instead of with the command's exit code.
        # Running a string clears it.
        exec("")


def _run(command) -> int:
    """Run the click command as click's standalone mode does, but for a Ctrl-C while click parses
    the arguments: standalone mode says "Aborted!" with exit code 1, here it ends as one inside
    the command does (a KeyboardInterrupt for ``run_as_program``). The exit code."""
    import click

    try:
        result = command.main(standalone_mode=False)
    except click.exceptions.Abort as e:  # click turned a KeyboardInterrupt into Abort
        if isinstance(e.__cause__, KeyboardInterrupt):
            raise e.__cause__ from None
        raise
    except click.ClickException as e:
        e.show()
        return e.exit_code
    return result if isinstance(result, int) else 0  # click returns --help's and --version's exit code


def program(module: str):
    """The console script that runs the click command ``main`` of ``module`` (a dotted name): the
    stop signals end it at once while the command's modules load, as nothing has started."""
    def start() -> None:
        end_at_once_on_signals()
        if hasattr(signal, "pthread_sigmask"):  # a sweep's worker starts with them held (cli.workers)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        run_as_program(importlib.import_module(module).main)
    start.module = module
    start.__doc__ = f"The console script of {module}."
    return start
