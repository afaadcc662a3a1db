"""SIGTERM (docker stop, Slurm, systemctl, timeout) and SIGHUP (a closed terminal) save a run as
Ctrl-C does: the checkpoint, one line with the resume command, the lock released, exit code
128 + the signal's number. The random kill loops of test_kill.py send them too."""

import json
import os
import signal
import subprocess
import sys

import pytest

from mlp_manual.cli.train import interrupted_line


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_save_the_run_and_say_how_to_resume(tmp_path, sig, code):
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "mlp_manual.cli.train", "--config", "configs/spirals.yaml",
                             "--set", "training.epochs=100000", "--out", str(run)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    for line in proc.stdout:  # training is under way once an epoch line is out
        if line.startswith("epoch "):
            break
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    name = signal.Signals(sig).name
    assert proc.returncode == code, err
    assert err == f"Interrupted by {name}: {run} is saved. Resume with: mlp-train --resume {run}\n"
    assert not (run / ".lock").exists() and not list(run.glob(".*tmp*"))
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["status"], summary["stop_reason"]) == ("interrupted", f"interrupted by {name}")
    done = summary["epochs_run"]
    resumed = subprocess.run([sys.executable, "-m", "mlp_manual.cli.train", "--resume", str(run), "--epochs",
                              str(done + 1), "-q"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((run / "summary.json").read_text())["status"] == "completed"


def test_the_interrupted_line_says_saved_only_when_a_checkpoint_is(tmp_path):
    assert interrupted_line(tmp_path) == f"Interrupted before the run started; nothing was saved in {tmp_path}"
    (tmp_path / "config.yaml").write_text("{}\n")
    assert interrupted_line(tmp_path, signal.SIGTERM) == (
        f"Interrupted by SIGTERM before the first checkpoint: nothing trained is saved in {tmp_path}. "
        f"Start it again from its config with: mlp-train --resume {tmp_path}")
    (tmp_path / "checkpoint.npz").write_bytes(b"")
    assert interrupted_line(tmp_path) == f"Interrupted: {tmp_path} is saved. Resume with: mlp-train --resume {tmp_path}"


def test_signals_wait_while_extension_modules_load(sigint_raises):
    """A signal during the imports of load_plotting is delivered once they are done: an extension
    module whose initialisation a KeyboardInterrupt cut short would crash the exit."""
    from mlp_manual.runs.interruptions import signals_held

    seen = []
    previous = signal.signal(signal.SIGHUP, lambda signum, frame: seen.append(signum))
    try:
        with signals_held():
            os.kill(os.getpid(), signal.SIGHUP)  # to the process: the kernel may pick another thread
            for _ in range(1000):  # bytecodes run: the handler of before would have run by now
                pass
            assert seen == []
        assert seen == [signal.SIGHUP]
        with signals_held():  # Ctrl-C twice: raised again once, as KeyboardInterrupt
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
        raise AssertionError("no KeyboardInterrupt")
    except KeyboardInterrupt:
        assert seen == [signal.SIGHUP]
    finally:
        signal.signal(signal.SIGHUP, previous)
