"""The claim on a run folder: a second process is refused with the holder's pid, a lock left by
a killed process blocks no one, and a finished run leaves no lock file."""

import os
import signal
import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner

from mlp_manual.cli.train import main
from mlp_manual.errors import RunInUse
from mlp_manual.runs.run_lock import LOCK_NAME, claim_run_dir


def test_a_held_folder_is_refused_with_the_holders_pid_and_released_after(tmp_path):
    with claim_run_dir(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text() == f"pid {os.getpid()} on {socket.gethostname()}\n"
        with pytest.raises(RunInUse) as refused, claim_run_dir(tmp_path):
            pass
        assert str(refused.value) == (f"{tmp_path} is in use by another mlp-train (pid {os.getpid()} on "
                                      f"{socket.gethostname()}); wait for it to end, or stop it first")
    assert not (tmp_path / LOCK_NAME).exists()
    with claim_run_dir(tmp_path):
        pass


def test_a_lock_file_nobody_holds_blocks_no_one(tmp_path):
    (tmp_path / LOCK_NAME).write_text("pid 4242 on a-host-that-was-killed\n")
    with claim_run_dir(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text().startswith(f"pid {os.getpid()} ")


def start(*args):
    return subprocess.Popen([sys.executable, "-m", "mlp_manual.cli.train", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def first_epoch(proc):
    """Wait until the process trains (it holds its folder from before its first line)."""
    line = proc.stdout.readline()
    while line and not line.startswith("epoch"):
        line = proc.stdout.readline()
    assert line, proc.stderr.read()


def test_two_processes_on_one_folder_and_a_resume_after_kill_9(tmp_path):
    out = tmp_path / "run"
    first = start("--config", "configs/xor.yaml", "--out", str(out), "--set", "training.epochs=100000")
    try:
        first_epoch(first)
        expected = f"Error: {out} is in use by another mlp-train (pid {first.pid} on {socket.gethostname()})"
        for args in (["--config", "configs/xor.yaml", "--out", str(out)],
                     ["--config", "configs/xor.yaml", "--out", str(out), "--overwrite"],
                     ["--resume", str(out)]):
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 1 and result.output.startswith(expected), result.output
            assert len(result.output.strip().splitlines()) == 1
        first.kill()
        first.wait()
    finally:
        first.kill()
        first.communicate()
    assert (out / LOCK_NAME).exists()  # left by the killed process, and no obstacle:
    config = (out / "config.yaml").read_text()
    (out / "config.yaml").write_text(config.replace("epochs: 100000", "epochs: 600"))
    again = start("--resume", str(out))
    first_epoch(again)
    again.send_signal(signal.SIGINT)
    _, err = again.communicate(timeout=60)
    assert again.returncode == 130
    assert err.strip() == f"Interrupted: {out} is saved. Resume with: mlp-train --resume {out}"
    result = CliRunner().invoke(main, ["--resume", str(out), "-q"])
    assert result.exit_code == 0 and result.output.strip().endswith(f"run folder: {out}")
    assert not (out / LOCK_NAME).exists()
