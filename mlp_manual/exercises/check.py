"""``check``: run a student's answer to an exercise on every case and judge it.

The student's code runs in a child process (forked, where the system can fork): an exception, a
wrong shape, a NaN, a call to ``exit`` or an endless loop ends in a report, never a traceback,
and the loop is stopped ``time_limit`` seconds after the child starts. Meanwhile this process
computes the reference and the central differences, which never run the student's code.
"""

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import time
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np

from .exercise import Exercise
from .judge import Report, findings_of, rows_of
from .student import READY, Calls, Printed, StudentFile, StudentRaised, WrongAnswer

TIME_LIMIT = 1.5  # seconds for the student's code on every case together
IMPORT_LIMIT = 10.0  # seconds for importing the student's file (numpy, matplotlib, ...), before that


def check(exercise, answer, *, seed: int = 0, time_limit: float | None = TIME_LIMIT, isolated: bool = True) -> Report:
    """Check ``answer`` (the class or function an exercise asks for, a module holding it, or the
    path of the student's .py file, read here and run in the child) on the exercise named
    ``exercise`` (or an Exercise). ``seed`` draws the cases; ``time_limit`` (None: no limit)
    bounds the student's code after its file is imported; ``isolated=False`` runs it in this
    process, with no time limit (for answers known to return). Returns the Report; in a notebook
    it shows as a table. ExerciseError for an unknown exercise or a file that cannot be read."""
    from .catalog import find
    ex = exercise if isinstance(exercise, Exercise) else find(exercise)
    if isinstance(answer, (str, os.PathLike)):
        answer = StudentFile.read(Path(answer))
    with np.errstate(all="ignore"):  # a NaN or an overflow in the student's code is reported, not warned about
        return _check(ex, answer, seed, time_limit, isolated)


def _check(ex: Exercise, answer, seed: int, time_limit, isolated: bool) -> Report:
    cases = ex.cases(seed)
    with _isolated(_run_student, (ex, answer, cases), time_limit if isolated else False) as outcome:
        expected = [ex.reference(c) for c in cases]  # while the student's code runs in the child
        numeric = [ex.numeric(c) if ex.numeric else None for c in cases]
        done = outcome()
    report = judge(ex, cases, done, expected, numeric)
    report.checked = answer.digest if isinstance(answer, StudentFile) else None
    return report


def _entry(ex: Exercise, answer, call):
    """The class or function the student wrote: ``answer`` itself, or its attribute
    ``ex.entry`` when it is a module or a file (imported here, in the child)."""
    if isinstance(answer, StudentFile):
        answer = call(f"importing {answer.path.name}", answer.load)
    if isinstance(answer, ModuleType):
        if not hasattr(answer, ex.entry):
            raise WrongAnswer(f"{answer.__name__} defines no {ex.entry}: the exercise asks for it by that name")
        return getattr(answer, ex.entry)
    return answer


def judge(ex: Exercise, cases, outcome, expected, numeric) -> Report:
    """The Report from the student's ``outcome``: (tensors of each case run, problem or None,
    the index of the case the problem came on, what their code printed)."""
    done, problem, at, printed = outcome
    runs = [(cases[i], done[i], expected[i], numeric[i]) for i in range(len(done))]
    report = Report(ex, cases=len(runs), problem=problem, problem_case=cases[at] if at is not None else None,
                    printed=printed)
    if runs:
        report.rows = rows_of(ex, runs)
        report.findings = findings_of(ex, runs)
    return report


def _run_student(ex: Exercise, entry, cases, emit) -> tuple[list[dict], str | None, int | None, str]:
    """The student's tensors on each case, until one raises or returns no tensor; what their
    code prints is kept (its first lines) and said after the verdict rather than among it."""
    printed = Printed()
    with contextlib.redirect_stdout(printed):
        done, problem, at = _student_cases(ex, entry, cases, emit)
    return done, problem, at, printed.summary()


def _student_cases(ex: Exercise, entry, cases, emit) -> tuple[list[dict], str | None, int | None]:
    done = []
    try:
        entry = _entry(ex, entry, Calls(lambda what: emit((what, None))))
    except (StudentRaised, WrongAnswer) as e:
        return done, str(e), None
    emit(READY)
    for i, case in enumerate(cases):
        try:
            done.append(ex.run(entry, case, Calls(lambda what, i=i: emit((what, i)))))
        except (StudentRaised, WrongAnswer) as e:
            return done, str(e), i
    return done, None, None


@contextlib.contextmanager
def _isolated(fn, args, time_limit):
    """Start ``fn(*args, emit)`` in a forked child, stopped after ``time_limit`` seconds (None:
    no limit); yield a function that waits for its result. Where the system cannot fork
    (Windows), or with ``time_limit=False``, ``fn`` runs in this process with no time limit."""
    if time_limit is False or "fork" not in multiprocessing.get_all_start_methods():
        result = fn(*args, lambda event: None)
        yield lambda: result
        return
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    cpu = None if time_limit is None else IMPORT_LIMIT + time_limit
    child = ctx.Process(target=_child, args=(fn, args, send, cpu), daemon=True)
    deadline = None if time_limit is None else time.monotonic() + IMPORT_LIMIT + time_limit
    with warnings.catch_warnings():  # a notebook's kernel has threads; the child touches none of their state
        warnings.simplefilter("ignore", DeprecationWarning)
        child.start()
    send.close()
    try:
        yield lambda: _wait(child, receive, deadline, time_limit)
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()


def _child(fn, args, send, cpu_seconds) -> None:
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)  # a Ctrl-C ends the child at once; the parent reports it
    _end_with_parent(cpu_seconds)
    try:
        result = fn(*args, lambda event: send.send(("calling", event)))
        send.send(("done", result))
    except BaseException as e:  # noqa: BLE001 - whatever escapes is the student's, told in a line
        send.send(("done", ([], f"{type(e).__name__}: {e}", None, "")))


def _end_with_parent(cpu_seconds) -> None:
    """Should the parent die (kill -9, out of memory) the child must not loop on: Linux kills it
    with its parent, and any Unix once it has used ``cpu_seconds`` of processor time."""
    try:
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux
        pass
    if cpu_seconds is not None:
        import resource  # Unix alone, as fork is
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_seconds) + 1, int(cpu_seconds) + 2))


def _wait(child, receive, deadline, time_limit):
    """The child's result; a problem line if it outlasts ``deadline`` (moved to ``time_limit``
    from the moment its file is imported) or ends without one."""
    last = None
    while True:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        if not receive.poll(left):
            if left is not None and deadline - time.monotonic() <= 0:
                what, i = last if last else ("your code", None)
                return [], (f"{what} took longer than {time_limit:g} s: an endless loop, or very slow code? "
                            "(stopped; look for a loop whose condition never changes)"), i, ""
            continue
        try:
            kind, payload = receive.recv()
        except EOFError:
            child.join()
            what, i = last if last else ("your code", None)
            return [], f"{what} {_ended(child.exitcode)} instead of returning", i, ""
        except Exception as e:  # a result that cannot be unpickled: an object of the student's own
            return [], f"the answer could not be read back ({type(e).__name__}: {e})", None, ""
        if kind == "done":
            return payload
        if payload == READY:
            deadline = None if deadline is None else time.monotonic() + time_limit
        else:
            last = payload


def _ended(code: int | None) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        why = {"SIGKILL": " (out of memory?)", "SIGXCPU": " (it used too much processor time)"}.get(name, "")
        return f"was stopped by {name}{why}"
    return f"ended the process (exit code {code})"
