"""The worker processes of ``mlp-sweep run --workers N``: how they are started, what they are
told, and how what they say reaches the terminal.

- Nothing secret is in their arguments, which every local user can read (/proc/PID/cmdline):
  the study's URL, password included, reaches them in the environment variable STORAGE_VARIABLE,
  which only their own user can read.
- A worker ends with its parent: when ``mlp-sweep run`` is killed (even by ``kill -9``), the
  kernel sends its workers SIGTERM (Linux's PR_SET_PDEATHSIG; elsewhere a thread looks for a new
  parent every second), and each saves its trial as after any SIGTERM.
- Their standard error passes through the parent, line by line: the parent says once what
  every worker would say on Ctrl-C, on a failure (``Interrupted: ...``, ``Error: ...``) or
  while they wait for the trials of a worker that may be gone (``waiting for ...``).
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading

from ..process import STOP_SIGNALS, signal_name
from .common import MACHINE_EXIT

STORAGE_VARIABLE = "MLP_SWEEP_STORAGE"  # the study's URL, for the workers
PARENT_VARIABLE = "MLP_SWEEP_PARENT"  # the pid of the mlp-sweep run that started the worker
PR_SET_PDEATHSIG = 1


def worker_environment(url: str | None, threads: int) -> dict[str, str]:
    """The environment of a worker: this one, with ``threads`` threads for its matrix products,
    the study's URL and this process as its parent."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads), PARENT_VARIABLE: str(os.getpid())}
    env.pop(STORAGE_VARIABLE, None)
    if url:
        env[STORAGE_VARIABLE] = url
    return env


def worker_storage() -> str | None:
    """In a worker: the study's URL its parent passed (removed from the environment, so that
    nothing started from here inherits it)."""
    return os.environ.pop(STORAGE_VARIABLE, None)


def end_with_parent() -> None:
    """In a worker: receive SIGTERM when the process that started it ends. A parent that ended
    before this was set up is seen at once."""
    try:
        parent = int(os.environ.pop(PARENT_VARIABLE, ""))
    except ValueError:
        return  # not started by mlp-sweep run
    try:
        set_up = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM) == 0
    except (OSError, AttributeError):  # not Linux
        set_up = False
    if not set_up:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="mlp-sweep parent").start()
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        threading.Event().wait(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


def _start_holding_signals(command: list[str], env: dict[str, str]) -> subprocess.Popen:
    """Start a worker with the stop signals held (blocked; a new process inherits the signal mask
    of the thread that starts it): one that comes while Python starts the worker (its site
    packages, its first imports) waits until the worker's handlers are in place and release them
    (process.program), instead of showing a KeyboardInterrupt traceback from Python's start-up."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows
        return subprocess.Popen(command, env=env, start_new_session=True, stderr=subprocess.PIPE)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        return subprocess.Popen(command, env=env, start_new_session=True, stderr=subprocess.PIPE)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


class Workers:
    """Processes of ``mlp-sweep run --worker`` (``start``), each in a session of its own (a
    Ctrl-C at the terminal reaches them once, from the parent), their standard error read line
    by line."""

    def __init__(self):
        self.lock = threading.Lock()
        self.errors: list[tuple[int, str]] = []  # (worker, line) of each "Error: " line
        self.received = None  # the signal passed on: the workers' own messages about it are not shown
        self.said_waiting = False
        self.children, self.readers, self.signalled = [], [], set()

    def start(self, command: list[str], env: dict[str, str], count: int) -> None:
        """Start ``count`` workers running ``command``; none after a signal came."""
        for i in range(count):
            if self.received is not None:
                return
            child = _start_holding_signals(command, env)
            self.children.append(child)
            if self.received is not None:  # it came while this one started
                self._pass_on(child)
            reader = threading.Thread(target=self._relay, args=(i, child.stderr), daemon=True)
            reader.start()
            self.readers.append(reader)

    def _relay(self, worker: int, stream) -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace")
            with self.lock:
                if line.startswith("Error: "):
                    self.errors.append((worker, line.rstrip("\n")))
                elif line.startswith("waiting for "):  # every idle worker waits for the same trials
                    if not self.said_waiting:
                        _write_err(line)
                    self.said_waiting = True
                elif not (self.received is not None and line.startswith("Interrupted")):
                    _write_err(line)

    def signal(self, signum: int) -> None:
        """Pass ``signum`` on to every worker (a signal handler: it takes no lock)."""
        self.received = signum
        for child in list(self.children):
            self._pass_on(child)

    def _pass_on(self, child) -> None:
        """Send the signal received to ``child``, once (a second Ctrl-C would cut its save short)."""
        if child.pid in self.signalled:
            return
        self.signalled.add(child.pid)
        try:
            child.send_signal(self.received)
        except OSError:
            pass

    def wait(self) -> list[int]:
        """Wait for every worker and its last words; their exit codes."""
        codes = [child.wait() for child in self.children]
        for reader in self.readers:
            reader.join()
        return codes

    def failure(self, codes: list[int]) -> tuple[list[str], int] | None:
        """What to say when workers failed (each kind of error once: workers that lose the
        same database say it alike) and the exit code; None when none did."""
        bad = [(i, c) for i, c in enumerate(codes) if c != 0]
        if not bad:
            return None
        shown, lines = set(), []
        for worker, line in self.errors:
            code = codes[worker]
            if code not in shown:
                shown.add(code)
                lines.append(line)
        silent = [(i, c) for i, c in bad if not any(w == i for w, _ in self.errors)]
        for i, c in silent:
            if c >= 128:  # a signal to that worker alone, which it reported itself
                continue
            how = f"was killed by {signal_name(-c)}" if c < 0 else f"ended with exit code {c}"
            lines.append(f"Error: worker {i + 1} of {len(codes)} {how}; its trial is taken over when the same "
                         "command runs again")
        code = MACHINE_EXIT if any(c == MACHINE_EXIT or c < 0 for _, c in bad) else \
            next((c for _, c in bad if 0 < c < 128), bad[0][1])
        return lines, code


def _write_err(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error gone: the exit code says it
        pass
