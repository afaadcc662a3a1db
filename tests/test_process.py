"""mlp_manual/process.py: a program (a console script) sets up its process; the library never
touches the process: its signal handlers, its allocator, its exit."""

import atexit
import ctypes
import gc
import platform
import signal
import subprocess
import sys

import numpy as np
import pytest

from mlp_manual import process
from mlp_manual.config import load_config
from mlp_manual.runs.run import train_run
from mlp_manual.training.experiment import prepare, training_plan
from mlp_manual.training.trainer import Trainer

GLIBC = platform.libc_ver()[0] == "glibc"


def test_each_stop_signal_is_named_one_way_with_its_exit_code():
    assert [process.signal_name(s) for s in process.STOP_SIGNALS] == ["Ctrl-C", "SIGTERM", "SIGHUP"]
    assert [process.interrupted_by(s) for s in process.STOP_SIGNALS] == [
        "Interrupted", "Interrupted by SIGTERM", "Interrupted by SIGHUP"]
    assert [process.exit_code(s) for s in process.STOP_SIGNALS] == [130, 143, 129]
    assert process.signal_name(signal.SIGKILL) == "SIGKILL"


@pytest.fixture
def process_changes(monkeypatch):
    """What a block did to the process: the C library's functions it looked up through ctypes
    (mallopt sets the allocator), and the functions it registered to run at exit."""
    looked_up, at_exit = [], []
    original = ctypes.CDLL.__getattr__

    def getattr_(self, name):
        looked_up.append(name)
        return original(self, name)
    monkeypatch.setattr(ctypes.CDLL, "__getattr__", getattr_)
    monkeypatch.setattr(atexit, "register", lambda fn, *a, **k: at_exit.append(fn))
    monkeypatch.setattr(process, "keep_freed_memory", lambda: looked_up.append("keep_freed_memory"))
    return looked_up, at_exit


def test_training_through_the_library_changes_nothing_process_wide(tmp_path, process_changes):
    """A Trainer, a run and a scikit-learn estimator, in this process as in a notebook: the
    signal handlers, the allocator and the exit are as they were."""
    sklearn = pytest.importorskip("sklearn")  # noqa: F841
    from mlp_manual.sklearn import MLPClassifier

    handlers = {s: signal.getsignal(s) for s in signal.valid_signals()}
    cfg = load_config("configs/xor.yaml", ["training.epochs=3"])
    exp = prepare(cfg)
    Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng).fit(exp.data.X_train, exp.data.y_train)
    train_run(cfg, tmp_path / "run", echo=lambda line: None)
    X = np.random.default_rng(0).normal(size=(40, 2))
    MLPClassifier(hidden_layer_sizes=(4,), max_iter=3, random_state=0).fit(X, X[:, 0] > 0)
    looked_up, at_exit = process_changes
    assert {s: signal.getsignal(s) for s in signal.valid_signals()} == handlers
    assert "mallopt" not in looked_up and "keep_freed_memory" not in looked_up
    assert gc.freeze not in at_exit


PROGRAM_PROBE = """
import ctypes, sys
original = ctypes.CDLL.__getattr__
def getattr_(self, name):
    if name == "mallopt":
        print("mallopt")
    return original(self, name)
ctypes.CDLL.__getattr__ = getattr_
sys.argv = ["mlp-runs", "--version"]
from mlp_manual.cli.process import mlp_runs
mlp_runs()
"""


@pytest.mark.skipif(not GLIBC, reason="the allocator setting is glibc's")
@pytest.mark.parametrize("setting, said", [(None, "mallopt\n"), ("MALLOC_TRIM_THRESHOLD_", ""),
                                           ("GLIBC_TUNABLES", "")])
def test_a_console_script_keeps_freed_memory_unless_the_user_tunes_the_allocator(setting, said, monkeypatch):
    for name in process.USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    if setting:
        monkeypatch.setenv(setting, "glibc.malloc.trim_threshold=1000000" if setting == "GLIBC_TUNABLES" else "1000000")
    result = subprocess.run([sys.executable, "-c", PROGRAM_PROBE], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"{said}mlp-manual {__import__('mlp_manual').__version__}\n"


PROGRAM = """
import click, os, signal, sys
from mlp_manual import process
from mlp_manual.cli.common import user_errors

@click.command()
@user_errors
def main():
{body}

process.run_as_program(main)
"""


def test_a_ctrl_c_caught_inside_code_that_exec_ran_still_ends_with_130(tmp_path):
    """CPython remembers a KeyboardInterrupt raised in code that exec() ran from a string (a
    dataclass's generated __init__) as unhandled, and under ``python -m`` would end the process by
    SIGINT at exit (-2 here) instead of with the exit code the command chose."""
    (tmp_path / "stopped.py").write_text(PROGRAM.format(body="    exec('raise KeyboardInterrupt')"))
    result = subprocess.run([sys.executable, "-m", "stopped"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60)
    assert (result.returncode, result.stderr) == (130, "Interrupted.\n")


def test_a_signal_during_an_import_is_raised_in_the_commands_own_code(tmp_path):
    """Raised while a module loads, the KeyboardInterrupt could come out as another error, or be
    printed as "Exception ignored" and lost (a module lock's weakref callback): the handler sends
    the signal again, to be raised once the import is over, where the command can handle it."""
    body = """    from types import SimpleNamespace
    import time
    importer = SimpleNamespace(f_code=SimpleNamespace(co_filename="<frozen importlib._bootstrap>"), f_back=None)
    module = SimpleNamespace(f_code=SimpleNamespace(co_filename="dataclasses.py"), f_back=importer)
    signal.getsignal(signal.SIGTERM)(signal.SIGTERM, module)
    print("not raised there")
    time.sleep(30)
    print("lost")"""
    (tmp_path / "stopped.py").write_text(PROGRAM.format(body=body))
    result = subprocess.run([sys.executable, "-m", "stopped"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (143, "not raised there\n", "Interrupted by SIGTERM.\n")
