"""Checkpoints: exact resume after an interruption, Ctrl-C from the CLI, and kill -9 during a write;
a run stopped in its final writes or before its first checkpoint resumes to the files of an
uninterrupted run. The random kill loops are in test_kill.py."""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import assert_same_run, with_every_key

from mlp_manual.cli.train import main
from mlp_manual.config import load_config
from mlp_manual.errors import TrainingInterrupted
from mlp_manual.runs.checkpoint import load_checkpoint
from mlp_manual.runs.run import resume_run, train_run

OVERRIDES = {
    "sgd_momentum": ["optimizer.name=sgd", "optimizer.lr=0.05", "optimizer.momentum=0.9"],
    "adam": ["optimizer.name=adam", "optimizer.lr=0.01", "schedule.name=cosine", "schedule.warmup_epochs=1"],
}
BASE = ["training.epochs=6", "training.batch_size=16", "data.n_samples=200",
        "model.layers=[{type: linear, units: 16}, relu, dropout, {type: linear, units: 16}, batchnorm, tanh, "
        "{type: linear}]"]


def weights(run_dir):
    with np.load(run_dir / "model.npz") as f:
        return {k: f[k] for k in f.files if k != "__spec__"}


@pytest.mark.parametrize("optimizer", list(OVERRIDES))
@pytest.mark.parametrize("stop_after_epoch", [3])
def test_interrupted_then_resumed_equals_uninterrupted_bit_for_bit(tmp_path, optimizer, stop_after_epoch):
    cfg = load_config("configs/moons.yaml", BASE + OVERRIDES[optimizer])
    train_run(cfg, str(tmp_path / "straight"), echo=lambda line: None)

    def echo(line):  # Ctrl-C right after epoch k: the run stops one step into epoch k + 1
        if line.startswith(f"epoch {stop_after_epoch}/"):
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(TrainingInterrupted):
        train_run(cfg, str(tmp_path / "cut"), echo=echo)
    meta = load_checkpoint(tmp_path / "cut" / "checkpoint.npz")["meta"]
    assert meta["epoch"] == stop_after_epoch and meta["epoch_state"]["next_batch"] == 1
    resumed = resume_run(str(tmp_path / "cut"), echo=lambda line: None)
    a, b = weights(tmp_path / "straight"), weights(tmp_path / "cut")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert (tmp_path / "straight" / "metrics.csv").read_text().splitlines()[1:] and resumed["epochs_run"] == 6
    straight = (tmp_path / "straight" / "metrics.csv").read_text().splitlines()
    cut = (tmp_path / "cut" / "metrics.csv").read_text().splitlines()
    strip = (lambda rows: [r.rsplit(",", 1)[0] for r in rows])  # seconds differ
    assert strip(straight) == strip(cut)


def test_a_run_whose_config_holds_every_key_as_earlier_versions_wrote_resumes_bit_for_bit(tmp_path):
    cfg = load_config("configs/moons.yaml", BASE + OVERRIDES["sgd_momentum"])
    train_run(cfg, str(tmp_path / "straight"), echo=lambda line: None)

    def echo(line):
        if line.startswith("epoch 3/"):
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(TrainingInterrupted):
        train_run(cfg, str(tmp_path / "cut"), echo=echo)
    written = (tmp_path / "cut" / "config.yaml").read_text()
    assert "context:" not in written and "beta1:" not in written  # a text dataset's option, and adam's
    assert "context" in with_every_key(tmp_path / "cut" / "config.yaml")["data"]
    assert resume_run(str(tmp_path / "cut"), echo=lambda line: None)["epochs_run"] == 6
    a, b = weights(tmp_path / "straight"), weights(tmp_path / "cut")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_ctrl_c_in_the_cli_saves_a_checkpoint_and_exits_130(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "mlp_manual.cli.train", "--config", "configs/spirals.yaml",
                             "--out", str(out), "--set", "training.epochs=100000", "--set", "training.batch_size=4"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    line = proc.stdout.readline()
    while line and not line.startswith("epoch"):
        line = proc.stdout.readline()
    assert line, proc.stderr.read()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert f"Resume with: mlp-train --resume {out}" in err and "Traceback" not in err
    assert load_checkpoint(out / "checkpoint.npz")["meta"]["epoch"] >= 1
    with open(out / "config.yaml") as f:  # resume a shorter version of the run to its end
        text = f.read().replace("epochs: 100000", f"epochs: {load_checkpoint(out / 'checkpoint.npz')['meta']['epoch'] + 1}")
    (out / "config.yaml").write_text(text)
    result = CliRunner().invoke(main, ["--resume", str(out), "--quiet"])
    assert result.exit_code == 0 and f"run folder: {out}" in result.output, result.output


def test_resume_errors(tmp_path):
    result = CliRunner().invoke(main, ["--resume", str(tmp_path)])
    assert result.exit_code == 1 and f"{tmp_path}: not a run folder (no config.yaml)" in result.output
    result = CliRunner().invoke(main, ["--resume", str(tmp_path), "--config", "configs/xor.yaml"])
    assert result.exit_code == 2 and "--resume continues a run with its saved config" in result.output


WRITER = textwrap.dedent("""
    import sys, numpy as np
    from mlp_manual.runs.checkpoint import save_checkpoint
    from mlp_manual.config import config_from_dict
    from mlp_manual.training.experiment import prepare, training_plan
    from mlp_manual.training.trainer import Trainer
    cfg = config_from_dict({"data": {"name": "blobs", "n_samples": 64},
                            "model": {"layers": [{"type": "linear", "units": 1500}, "relu", {"type": "linear"}]}})
    exp = prepare(cfg)
    trainer = Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng)
    i = 0
    while True:
        i += 1
        trainer.step_count = i
        save_checkpoint(sys.argv[1], trainer)
        print(i, flush=True)
""")


def test_kill_9_during_checkpoint_writes_leaves_the_previous_one_readable(tmp_path):
    path = tmp_path / "checkpoint.npz"
    rng = np.random.default_rng(0)
    for attempt in range(4):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()  # at least one checkpoint is complete
        time.sleep(rng.uniform(0.0, 0.3))
        proc.kill()
        proc.wait()
        ckpt = load_checkpoint(path)
        assert ckpt["meta"]["step"] >= 1 and ckpt["arrays"]["model/layers.0.W"].shape == (2, 1500)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "checkpoint.npz"]
    assert all(name.startswith(".checkpoint.npz.") for name in leftovers)  # only temporary names


def test_resuming_a_finished_run_is_refused(tmp_path):
    runner = CliRunner()
    done = tmp_path / "done"
    assert runner.invoke(main, ["--config", "configs/xor.yaml", "--out", str(done), "-q",
                                "--set", "training.epochs=3"]).exit_code == 0
    result = runner.invoke(main, ["--resume", str(done)])
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {done}: the run is complete (it ran all 3 epochs); nothing to resume. "
                                     "To train it longer, pass --epochs N with N > 3")
    result = runner.invoke(main, ["--resume", str(done), "--epochs", "2"])
    assert result.output.strip() == f"Error: {done}: the run has done 3 epochs; --epochs 2 would end it before that"
    early = tmp_path / "early"
    assert runner.invoke(main, ["--config", "configs/moons.yaml", "--out", str(early), "-q",
                                "--set", "optimizer.lr=0.05", "--set", "schedule.name=constant",
                                "--set", "training.early_stopping.patience=2"]).exit_code == 0
    result = runner.invoke(main, ["--resume", str(early)])
    assert result.output.strip() == (f"Error: {early}: the run is complete (it stopped early); nothing to resume. To "
                                     f"train on from its weights, start a new run with --init-from {early / 'model.npz'}")


def test_the_run_config_holds_absolute_data_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("a,b,label\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(20)))
    (tmp_path / "c.yaml").write_text("data: {name: csv, path: d.csv}\ntraining: {epochs: 1, batch_size: 4}\n")
    assert CliRunner().invoke(main, ["--config", "c.yaml", "--out", "run", "-q"]).exit_code == 0
    saved = load_config(tmp_path / "run" / "config.yaml")
    assert saved.data.path == str(tmp_path / "d.csv")
    monkeypatch.chdir("/")  # the run folder's config works from anywhere
    assert CliRunner().invoke(main, ["--config", str(tmp_path / "run" / "config.yaml"), "--out",
                                     str(tmp_path / "again"), "-q"]).exit_code == 0


def test_a_checkpoint_of_an_earlier_version_resumes_to_the_weights_of_a_straight_run(tmp_path):
    """The corpus' xor-checkpoint.npz was written after epoch 2 of xor.yaml by an earlier version,
    on another machine: its weights may differ from this machine's epoch 2 in the last float32
    bits, which two more epochs carry along, so the weights agree to float32 rounding."""
    files = Path(__file__).parent / "bad_inputs" / "files"
    train_run(load_config(files / "xor.yaml", ["training.epochs=4"]), str(tmp_path / "straight"), echo=lambda line: None)
    run = tmp_path / "old"
    run.mkdir()
    shutil.copy(files / "xor-checkpoint.npz", run / "checkpoint.npz")
    (run / "config.yaml").write_text((files / "xor.yaml").read_text().replace("epochs: 2", "epochs: 4"))
    assert resume_run(str(run), echo=lambda line: None)["epochs_run"] == 4
    a, b = weights(tmp_path / "straight"), weights(run)
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype == np.float32
        np.testing.assert_allclose(b[k], a[k], rtol=0, atol=1e-5 * np.abs(a[k]).max(), err_msg=k)


SMALL = ["training.epochs=4", "data.n_samples=120", "training.batch_size=16", "optimizer.name=adam",
         "optimizer.lr=0.01", "model.layers=[{type: linear, units: 8}, relu, dropout, {type: linear}]"]


class Killed(BaseException):
    """Stands for kill -9: nothing the run does catches it."""


def kill_at(monkeypatch, name, nth=1):
    """Stop the process, as kill -9 would, just before the ``nth`` write of the run file ``name``
    is moved into place (every file is written to a temporary name, then renamed)."""
    real, seen = os.replace, []

    def replace(src, dst):
        if Path(dst).name == name:
            seen.append(dst)
            if len(seen) == nth:
                raise Killed
        return real(src, dst)
    monkeypatch.setattr(os, "replace", replace)


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """An uninterrupted run of moons with a test split, SMALL, to compare the others with."""
    out = tmp_path_factory.mktemp("straight") / "run"
    train_run(load_config("configs/moons.yaml", SMALL), str(out), echo=lambda line: None)
    return out


@pytest.mark.parametrize("name", ["model.npz", "confusion.png", "summary.json"])  # the first, a plot, the last
def test_a_run_killed_in_its_final_writes_resumes_to_the_same_files(tmp_path, monkeypatch, straight, name):
    out = tmp_path / "run"
    kill_at(monkeypatch, name)
    with pytest.raises(Killed):
        train_run(load_config("configs/moons.yaml", SMALL), str(out), echo=lambda line: None)
    monkeypatch.undo()
    assert not (out / "summary.json").exists() and load_checkpoint(out / "checkpoint.npz")["meta"]["epoch"] == 4
    lines = []
    resume_run(str(out), echo=lines.append)
    assert f"finishing {out}: training is complete, writing its final files" in lines
    assert_same_run(straight, out)
    result = CliRunner().invoke(main, ["--resume", str(out)])
    assert result.output.strip() == (f"Error: {out}: the run is complete (it ran all 4 epochs); nothing to resume. "
                                     "To train it longer, pass --epochs N with N > 4")


def test_ctrl_c_in_the_final_plots_exits_130_and_resume_writes_them(tmp_path, monkeypatch, straight):
    out = tmp_path / "run"

    def ctrl_c(*args):
        raise KeyboardInterrupt  # what Python's own SIGINT handler raises outside the training steps
    monkeypatch.setattr("mlp_manual.runs.finish.write_plots", ctrl_c)
    result = CliRunner().invoke(main, ["--config", "configs/moons.yaml", "--out", str(out), "-q",
                                       *[a for kv in SMALL for a in ("--set", kv)]])
    assert result.exit_code == 130, result.output
    assert result.output.strip() == f"Interrupted: {out} is saved. Resume with: mlp-train --resume {out}"
    assert not (out / "summary.json").exists() and not (out / ".lock").exists()
    monkeypatch.undo()
    result = CliRunner().invoke(main, ["--resume", str(out), "-q"])
    assert result.exit_code == 0 and f"run folder: {out}" in result.output
    assert_same_run(straight, out)


def test_ctrl_c_as_training_ends_exits_130_and_resume_only_finishes(tmp_path, straight):
    out = tmp_path / "run"

    def echo(line):  # the signal arrives after the last step: the trainer has no step left to stop after
        if line.startswith("epoch 4/"):
            os.kill(os.getpid(), signal.SIGINT)
    with pytest.raises(TrainingInterrupted):
        train_run(load_config("configs/moons.yaml", SMALL), str(out), echo=echo)
    assert not (out / "summary.json").exists() and not (out / "model.npz").exists()
    lines = []
    resume_run(str(out), echo=lines.append)
    assert lines[1].startswith("finishing") and not any(line.startswith("epoch") for line in lines)
    assert_same_run(straight, out)


def test_a_stale_summary_of_an_interrupted_run_is_not_taken_for_the_finished_one(tmp_path, monkeypatch, straight):
    out = tmp_path / "run"

    def echo(line):
        if line.startswith("epoch 2/"):
            os.kill(os.getpid(), signal.SIGINT)
    with pytest.raises(TrainingInterrupted):
        train_run(load_config("configs/moons.yaml", SMALL), str(out), echo=echo)
    assert json.loads((out / "summary.json").read_text())["status"] == "interrupted"
    kill_at(monkeypatch, "decision_boundary.png")
    with pytest.raises(Killed):
        resume_run(str(out), echo=lambda line: None)
    monkeypatch.undo()
    assert not (out / "summary.json").exists()  # the interrupted run's summary went as the resume began
    resume_run(str(out), echo=lambda line: None)
    assert_same_run(straight, out)


@pytest.mark.parametrize("nth", [1, 8])
def test_a_run_killed_at_a_checkpoint_inside_an_epoch_resumes_exactly(tmp_path, monkeypatch, straight, nth):
    """With a clock on which every reading is a second later, a checkpoint is due after every step."""
    class Ticking:
        now = 0.0

        def perf_counter(self):
            self.now += 1.0
            return self.now
    monkeypatch.setattr("mlp_manual.training.trainer.time", Ticking())
    kill_at(monkeypatch, "checkpoint.npz", nth + 1)
    out = tmp_path / "run"
    with pytest.raises(Killed):
        train_run(load_config("configs/moons.yaml", SMALL + ["training.checkpoint_seconds=0.5"]), str(out),
                  echo=lambda line: None)
    monkeypatch.undo()
    if nth == 1:  # saved after the first step
        assert load_checkpoint(out / "checkpoint.npz")["meta"]["epoch_state"]["next_batch"] == 1
    resume_run(str(out), echo=lambda line: None)
    assert_same_run(straight, out)


def test_a_run_stopped_before_its_first_checkpoint_resumes_from_the_first_epoch(tmp_path, straight):
    out = tmp_path / "run"
    out.mkdir()
    shutil.copy(straight / "config.yaml", out / "config.yaml")
    lines = []
    resume_run(str(out), echo=lines.append)
    assert not any(line.startswith("resuming") for line in lines) and lines[-1].startswith("best")
    assert_same_run(straight, out)


def test_resuming_on_a_data_file_that_changed_is_refused(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("a,b,label\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(40)))
    (tmp_path / "c.yaml").write_text(f"data: {{name: csv, path: {data}}}\ntraining: {{epochs: 3, batch_size: 4}}\n")
    out = tmp_path / "run"
    assert CliRunner().invoke(main, ["--config", str(tmp_path / "c.yaml"), "--out", str(out), "-q"]).exit_code == 0
    (out / "summary.json").unlink()  # as if stopped in its final writes
    with open(data, "a") as f:
        f.write("99,0,1\n")
    result = CliRunner().invoke(main, ["--resume", str(out)])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {out / 'checkpoint.npz'}: cannot resume on other data: the file at "
                                    "data.path has changed since the run read it (SHA-256 ")
    assert result.output.endswith("now). Put the run's data back, or start a new run\n")
