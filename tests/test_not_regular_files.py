"""Paths that name something other than a regular file: a named pipe (FIFO) would block its
reader until someone writes into it, a device never ends, a folder cannot be read. Every reader
refuses them in one line before it opens them; each command here runs as its own process under
a timeout, so a reader that blocks fails the test instead of hanging it."""

import gc
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from datafiles import fake_mnist

from mlp_manual import files
from mlp_manual.errors import ConfigError, DataError

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120  # seconds: a blocked reader waits for ever; a refusal takes a second or two
FIFO_LINE = "is a named pipe (FIFO), not a regular file"


def command(tool: str, *args, cwd: Path) -> subprocess.CompletedProcess:
    """``mlp-<tool> ARGS`` as its own process in ``cwd``."""
    return subprocess.run([sys.executable, "-m", f"mlp_manual.cli.{tool}", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def refused(result: subprocess.CompletedProcess, message: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"Error: {message}", result.stderr
    assert result.returncode == 1


@pytest.fixture
def fifo(tmp_path) -> Path:
    os.mkfifo(tmp_path / "fifo")
    return tmp_path / "fifo"


def test_a_config_that_is_a_fifo_a_device_or_a_folder(tmp_path, fifo):
    refused(command("train", "--config", "fifo", cwd=tmp_path), f"fifo: {FIFO_LINE}")
    refused(command("train", "--config", "/dev/zero", cwd=tmp_path),
            "/dev/zero: is a character device, not a regular file")
    (tmp_path / "folder.yaml").mkdir()
    refused(command("train", "--config", "folder.yaml", cwd=tmp_path), "folder.yaml: is a folder, not a regular file")


def test_data_files_that_are_fifos(tmp_path, fifo):
    rows = "".join(f"{i},{i % 2}\n" for i in range(20))
    (tmp_path / "ok.csv").write_text("a,y\n" + rows)
    for key, dataset, extra in (("path", "csv", ()), ("path", "text", ()),
                                ("val_path", "csv", ("--set", "data.path=ok.csv"))):
        (tmp_path / "c.yaml").write_text(f"data: {{name: {dataset}}}\ntraining: {{epochs: 1}}\n")
        result = command("train", "--config", "c.yaml", "--set", f"data.{key}=fifo", *extra, "--out", "run",
                         cwd=tmp_path)
        refused(result, f"fifo (data.{key}): {FIFO_LINE}")


def test_a_sweep_whose_base_is_a_fifo_or_a_device(tmp_path, fifo):
    pytest.importorskip("optuna")
    (tmp_path / "s.yaml").write_text("base: fifo\nspace: {optimizer.lr: {low: 0.01, high: 0.1}}\n")
    refused(command("sweep", "run", "s.yaml", cwd=tmp_path), f"fifo: {FIFO_LINE}")
    (tmp_path / "s.yaml").write_text("base: /dev/zero\nspace: {optimizer.lr: {low: 0.01, high: 0.1}}\n")
    refused(command("sweep", "run", "s.yaml", cwd=tmp_path), "/dev/zero: is a character device, not a regular file")



def test_a_sweep_folder_whose_record_is_a_fifo(tmp_path):
    pytest.importorskip("optuna")
    (tmp_path / "sweep").mkdir()
    os.mkfifo(tmp_path / "sweep" / "sweep.json")
    for verb in ("status", "best"):
        refused(command("sweep", verb, "sweep", cwd=tmp_path), f"sweep/sweep.json: {FIFO_LINE}")

def test_a_data_directory_file_that_is_a_fifo(tmp_path):
    fake_mnist(tmp_path / "d" / "mnist")
    (tmp_path / "d" / "mnist" / "train-labels-idx1-ubyte.gz").unlink()
    os.mkfifo(tmp_path / "d" / "mnist" / "train-labels-idx1-ubyte")
    (tmp_path / "c.yaml").write_text("data: {name: mnist, data_dir: d}\ntraining: {epochs: 1}\n")
    refused(command("train", "--config", "c.yaml", "--out", "run", cwd=tmp_path),
            f"d/mnist/train-labels-idx1-ubyte: {FIFO_LINE}")
    check = ("from pathlib import Path; from mlp_manual.datasets.fetch import EXPECTED, existing_file_problem; "
             "print(existing_file_problem(Path('d/mnist/train-labels-idx1-ubyte'), "
             "EXPECTED['mnist']['train-labels-idx1-ubyte']))")  # mlp-data fetch downloads such a file again
    done = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.stdout == f"{FIFO_LINE}\n", done.stderr


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("run")
    done = command("train", "--config", ROOT / "configs/xor.yaml", "--epochs", "2", "--out", folder / "run", "-q",
                   cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "run"


def test_mlp_runs_shows_a_run_whose_summary_is_a_fifo_as_damaged(tmp_path, finished_run):
    shutil.copytree(finished_run, tmp_path / "runs" / "good")
    shutil.copytree(finished_run, tmp_path / "runs" / "piped")
    (tmp_path / "runs" / "piped" / "summary.json").unlink()
    os.mkfifo(tmp_path / "runs" / "piped" / "summary.json")
    result = command("runs", "runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    statuses = {line.split()[0]: line.split()[2] for line in result.stdout.splitlines()[1:]}
    assert statuses == {"runs/good": "completed", "runs/piped": "damaged"}
    assert result.stderr == f"damaged: runs/piped/summary.json: {FIFO_LINE}\n"


def test_model_and_input_files_that_are_fifos(tmp_path, fifo, finished_run):
    refused(command("predict", "--model", "fifo", "--input", "fifo", cwd=tmp_path), f"fifo: {FIFO_LINE}")
    refused(command("predict", "--model", finished_run / "model.npz", "--input", "fifo", cwd=tmp_path),
            f"fifo: {FIFO_LINE}")
    refused(command("train", "--config", ROOT / "configs/xor.yaml", "--init-from", "fifo", "--out", "run",
                    cwd=tmp_path), f"fifo: {FIFO_LINE}")


def test_a_file_swapped_for_a_fifo_after_the_check_is_refused_on_its_descriptor(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "plain").write_text("x")
    monkeypatch.setattr(files, "check_regular", lambda *args: None)  # as if a file were there when checked
    with pytest.raises(ConfigError, match=f"fifo: {FIFO_LINE.replace('(', '.').replace(')', '.')}$"):
        files.open_regular(tmp_path / "fifo", "rb", ConfigError)
    with files.open_regular(tmp_path / "plain", "r", DataError, encoding="utf-8") as f:  # a file reads as open() would
        assert f.read() == "x"


def test_a_summary_that_is_a_fifo_reads_as_none(tmp_path):
    from mlp_manual.results.compare import read_summary

    os.mkfifo(tmp_path / "summary.json")
    assert read_summary(tmp_path / "summary.json") == {}
    (tmp_path / "ok.json").write_text(json.dumps({"status": "completed"}))
    assert read_summary(tmp_path / "ok.json") == {"status": "completed"}


@pytest.mark.parametrize("where", ["the check", "the file object made"])
def test_an_interrupt_while_a_file_opens_is_an_interrupt_and_closes_the_descriptor_once(tmp_path, monkeypatch, where):
    """A Ctrl-C while open_regular opens a file ends as a KeyboardInterrupt with no descriptor
    left open; a descriptor closed twice would be an OSError (EBADF), read as a damaged file."""
    from mlp_manual import files
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n")
    real_open, real_set_blocking = open, os.set_blocking

    def interrupted_open(*args, **kwargs):
        real_open(*args, **kwargs)  # made, then dropped: its descriptor closes with it
        raise KeyboardInterrupt

    def interrupted_set_blocking(fd, blocking):
        real_set_blocking(fd, blocking)
        raise KeyboardInterrupt
    if where == "the check":
        monkeypatch.setattr(files.os, "set_blocking", interrupted_set_blocking)
    else:
        monkeypatch.setattr(files, "open", interrupted_open, raising=False)
    before = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(KeyboardInterrupt):
        files.open_regular(path, "rb")
    gc.collect()
    assert sorted(os.listdir("/proc/self/fd")) == before
