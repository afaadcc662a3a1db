"""mlp-train end to end through click's CliRunner: the run folder and every user mistake."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import invoke_cli

from mlp_manual.cli.train import main
from mlp_manual.config import load_config
from mlp_manual.predict.model_file import load_model

PNG = b"\x89PNG\r\n\x1a\n"
ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return invoke_cli(main, *args)


def test_xor_run_folder_has_every_file(tmp_path):
    out = tmp_path / "run"
    result = run("--config", "configs/xor.yaml", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "epoch 300/300" in result.output and f"run folder: {out}" in result.output.splitlines()[-1]
    for name in ("loss.png", "accuracy.png", "decision_boundary.png"):
        assert (out / name).read_bytes()[:8] == PNG, name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["final"]["train_acc"] == 1.0 and summary["epochs_run"] == 300 and summary["n_params"] == 42
    for key in ("best_epoch", "stopped_early", "seed", "wall_seconds", "best"):
        assert key in summary
    header = (out / "metrics.csv").read_text().splitlines()[0]
    assert header == "epoch,lr,train_loss,train_acc,val_loss,val_acc,seconds"
    assert load_config(out / "config.yaml") == load_config("configs/xor.yaml")
    model = load_model(out / "model.npz")
    assert model.forward(np.array([[0, 1], [1, 1]], dtype=np.float32)).argmax(1).tolist() == [1, 0]


def test_test_split_metrics_and_overrides_reach_the_resolved_config(tmp_path):
    out = tmp_path / "run"
    result = run("--config", "configs/moons.yaml", "--out", str(out), "--set", "training.epochs=2",
                 "--seed", "3", "--quiet")
    assert result.exit_code == 0 and len(result.output.strip().splitlines()) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 3 and set(summary["test"]) == {"loss", "acc"}
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    assert resolved["training"]["epochs"] == 2 and resolved["seed"] == 3
    assert resolved["optimizer"]["beta2"] == 0.999  # defaults filled in


def test_same_seed_gives_identical_model_files(tmp_path):
    for name in ("a", "b"):
        assert run("--config", "configs/moons.yaml", "--out", str(tmp_path / name),
                   "--set", "training.epochs=3", "-q").exit_code == 0
    with np.load(tmp_path / "a" / "model.npz") as a, np.load(tmp_path / "b" / "model.npz") as b:
        assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)


def test_regression_run_has_no_accuracy_plot(tmp_path):
    out = tmp_path / "run"
    assert run("--config", "configs/sine.yaml", "--out", str(out), "--set", "training.epochs=2").exit_code == 0
    assert (out / "loss.png").exists() and not (out / "accuracy.png").exists()
    assert "train_acc" not in (out / "metrics.csv").read_text()


def test_refuses_a_non_empty_out_folder_unless_overwrite(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = run("--config", "configs/xor.yaml", "--out", str(out))
    assert result.exit_code == 1
    assert f"Error: output folder {out} is not empty; pass --overwrite" in result.output
    assert run("--config", "configs/xor.yaml", "--out", str(out), "--overwrite").exit_code == 0
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("args, message", [
    (["--config", "nope.yaml"], "Error: nope.yaml: no such config file"),
    (["--config", "configs/xor.yaml", "--set", "optimizer.lr"], "Error: --set 'optimizer.lr': expected KEY=VALUE"),
    (["--config", "configs/xor.yaml", "--set", "optimizer.lrr=1"],
     "Error: --set 'optimizer.lrr=1': unknown key 'optimizer.lrr' (did you mean 'optimizer.lr'?)"),
    (["--config", "configs/xor.yaml", "--set", "optimizer.lr=0"],
     "Error: configs/xor.yaml with --set optimizer.lr=0: optimizer.lr must be > 0, got 0"),
    (["--config", "configs/xor.yaml", "--set", "training.batch_size=64"],
     "Error: training.batch_size 64 is larger than the 4 training samples of xor"),
    (["--config", "configs/xor.yaml", "--set", "loss=bce_with_logits", "--set", "model.layers.2.units=2"],
     "Error: bce_with_logits needs exactly 1 output unit, the model has 2"),
    (["--config", "configs/sine.yaml", "--set", "loss=softmax_cross_entropy"],
     "Error: softmax_cross_entropy needs class labels, but sine is a regression dataset; use mse"),
])
def test_user_mistakes_give_one_line_and_exit_1(args, message):
    result = run(*args)
    assert result.exit_code == 1
    assert result.output.strip() == message or result.output.startswith(message), result.output
    assert len(result.output.strip().splitlines()) == 1


def test_bad_yaml_and_unknown_key_in_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("training:\n  epochs: [1\n")
    result = run("--config", str(bad))
    assert result.exit_code == 1 and result.output.startswith(f"Error: {bad}: invalid YAML at line")
    typo = tmp_path / "typo.yaml"
    typo.write_text("trainng: {epochs: 3}\n")
    result = run("--config", str(typo))
    assert result.output.strip() == f"Error: {typo}: unknown key 'trainng' (did you mean 'training'?)"


def test_out_folder_that_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    result = run("--config", "configs/xor.yaml", "--out", str(f))
    assert result.exit_code == 1 and result.output.strip() == f"Error: output folder {f} exists and is a file"


def test_without_a_config_mlp_train_trains_the_documented_defaults(tmp_path):
    from mlp_manual.config import Config

    result = run("--out", str(tmp_path / "run"), "-q", "--set", "training.epochs=2")
    assert result.exit_code == 0, result.output
    saved = (tmp_path / "run" / "config.yaml").read_text()
    assert f"name: {Config().name}" not in saved and "name: defaults" in saved
    assert f"lr: {Config().optimizer.lr}" in saved and f"name: {Config().data.name}" in saved


NO_CONFIG = ("No config given: training the defaults (moons data, layers [linear 16, relu, linear], {epochs} epochs "
             "of adam at lr 0.001). To train your own, give a config: mlp-train CONFIG (e.g. mlp-train "
             "configs/xor.yaml); --set KEY=VALUE changes one default.")


def test_mlp_train_with_no_arguments_says_first_that_it_trains_the_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run()
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == NO_CONFIG.format(epochs=100)
    (folder,) = (tmp_path / "runs").iterdir()
    assert folder.name.startswith("defaults-") and "epoch 100/100" in result.stdout
    quiet = run("-q", "--epochs", "2", "--out", "quiet")  # a note, as warnings are: on standard error
    assert quiet.exit_code == 0 and quiet.stderr.splitlines()[0] == NO_CONFIG.format(epochs=2)
    assert len(quiet.stdout.splitlines()) == 1 and "run folder: quiet" in quiet.stdout
    given = run("--config", str(ROOT / "configs" / "xor.yaml"), "--epochs", "2", "--out", "given")
    assert "No config given" not in given.output


def test_a_positional_config_is_the_same_as_the_option(tmp_path):
    args = ("--set", "training.epochs=2", "-q")
    assert run("configs/xor.yaml", "--out", str(tmp_path / "a"), *args).exit_code == 0
    assert run("--config", "configs/xor.yaml", "--out", str(tmp_path / "b"), *args).exit_code == 0
    assert (tmp_path / "a" / "model.npz").read_bytes() == (tmp_path / "b" / "model.npz").read_bytes()


@pytest.mark.parametrize("args, message", [
    (["configs/xor.yaml", "--config", "configs/moons.yaml"],
     "Error: the config is given twice (configs/xor.yaml and --config configs/moons.yaml); give it once"),
    (["configs/xor.yaml", "--resume", "runs/x"],
     "Error: --resume continues a run with its saved config; it takes no --config, --set, --seed, --data-dir"),
    (["configs/xor.yaml", "configs/moons.yaml"], "Error: Got unexpected extra argument (configs/moons.yaml)"),
])
def test_a_config_given_twice_is_a_usage_error(args, message):
    result = run(*args)
    assert result.exit_code == 2 and message in result.output, result.output


def test_a_config_in_another_folder_reads_its_csv_beside_it_and_the_run_config_works_anywhere(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    rows = "\n".join(f"{i % 7},{i % 5},{i % 2}" for i in range(40))
    (project / "d.csv").write_text("a,b,label\n" + rows + "\n")
    (project / "c.yaml").write_text("data: {name: csv, path: d.csv}\ntraining: {epochs: 2, batch_size: 8}\n")
    monkeypatch.chdir(tmp_path)
    result = run("project/c.yaml", "--out", "run", "-q")
    assert result.exit_code == 0, result.output
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert saved["data"]["path"] == str(project / "d.csv")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    again = run("../run/config.yaml", "--out", "../again", "-q")  # an absolute path stays as it is
    assert again.exit_code == 0, again.output


def test_a_closed_standard_output_does_not_stop_the_run(tmp_path):
    """`mlp-train ... | head -3`: the reader goes after three lines, the run completes quietly."""
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "mlp_manual.cli.train", "--config", "configs/xor.yaml",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(3):
        proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and err == ""
    assert json.loads((out / "summary.json").read_text())["status"] == "completed"
    assert {"model.npz", "metrics.csv", "loss.png", "decision_boundary.png"} <= {p.name for p in out.iterdir()}



def test_early_stopping_prints_one_line_and_the_test_metrics_name_their_weights(tmp_path):
    out = tmp_path / "run"
    result = run("--config", "configs/moons.yaml", "--out", str(out), "--set", "training.early_stopping.patience=3")
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    best, last = summary["best_epoch"], summary["epochs_run"]
    reason = (f"early stopping at epoch {last}: val_loss has not improved by min_delta (0) for 3 epochs; "
              f"best epoch {best}, weights restored")
    assert [line for line in result.stdout.splitlines() if "early stopping" in line] == [reason]
    assert summary["status"] == "stopped_early" and summary["stop_reason"] == reason
    assert summary["weights"] == {"source": "best", "epoch": best} and last == best + 3
    test = summary["test"]
    assert result.stdout.splitlines()[-1] == (
        f"best val_loss {summary['best']['val_loss']:.4f} at epoch {best} (val_acc {summary['best']['val_acc']:.4f}); "
        f"test (weights of epoch {best}): loss {test['loss']:.4f}, acc {test['acc']:.4f}; run folder: {out}")


def test_without_early_stopping_the_test_metrics_come_from_the_final_weights(tmp_path):
    result = run("--config", "configs/moons.yaml", "--out", str(tmp_path / "a"), "-q", "--set", "training.epochs=4",
                 "--set", "training.early_stopping.patience=0")
    assert "; test (final weights, epoch 4): loss " in result.stdout
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["weights"] == {"source": "final", "epoch": 4} and summary["stop_reason"] is None
    result = run("--config", "configs/xor.yaml", "--out", str(tmp_path / "b"), "-q", "--set", "training.epochs=3")
    assert "; model.npz holds the final weights, epoch 3; run folder: " in result.stdout


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_an_empty_config_trains_with_defaults_that_fit_together(tmp_path, text):
    (tmp_path / "c.yaml").write_text(text)
    result = run("--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "run"), "--set", "training.epochs=2")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("c: 240 train / 60 val / 0 test samples, 2 features")


@pytest.mark.parametrize("name, folder", [("../../escape", "escape-"), ("a/b\\c d", "a-b-c-d-"), ("..", "run-"),
                                          (".hidden", "hidden-"), ("é" * 100, "é" * 40 + "-")])
def test_the_default_run_folder_is_one_safe_entry_of_runs(tmp_path, monkeypatch, name, folder):
    from mlp_manual.runs.folder import make_run_dir

    monkeypatch.chdir(tmp_path)
    with make_run_dir(None, name) as path:
        pass
    assert path.parent == __import__("pathlib").Path("runs") and path.name.startswith(folder)
    assert list((tmp_path / "runs").iterdir()) == [tmp_path / path] and len(path.name.encode()) <= 80 + 20


def test_a_diverged_run_ends_in_its_error_line_without_numpy_warnings(tmp_path):
    """lr=1e300 diverges at step 1; drawing the decision boundary with the last finite (huge)
    weights must not print numpy's overflow warnings before the Error line."""
    proc = subprocess.run([sys.executable, "-W", "default", "-m", "mlp_manual.cli.train", "--config",
                           "configs/xor.yaml", "--set", "optimizer.lr=1e300", "--out", str(tmp_path / "run"), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3
    assert proc.stderr.startswith("Error: training diverged at step 1") and "Warning" not in proc.stderr
    assert (tmp_path / "run" / "decision_boundary.png").is_file()


def test_a_long_run_prints_about_twenty_evenly_spaced_epoch_lines_by_default(tmp_path):
    from click.testing import CliRunner

    from mlp_manual.cli.train import main

    default = CliRunner().invoke(main, ["configs/xor.yaml", "--out", str(tmp_path / "a")])
    epochs = [int(line.split()[1].split("/")[0]) for line in default.output.splitlines() if line.startswith("epoch ")]
    assert epochs == [1, *range(15, 301, 15)]  # 300 epochs: the first, then every 15th, the last among them
    every = CliRunner().invoke(main, ["configs/xor.yaml", "--out", str(tmp_path / "b"), "--log-every", "1"])
    assert sum(line.startswith("epoch ") for line in every.output.splitlines()) == 300


def test_a_set_fixes_a_value_of_the_file_before_it_is_validated(tmp_path):
    (tmp_path / "c.yaml").write_text("optimizer: {lr: -1}\ntraining: {epochs: 2}\n")
    result = run(str(tmp_path / "c.yaml"), "--set", "optimizer.lr=0.1", "--out", str(tmp_path / "run"), "-q")
    assert result.exit_code == 0, result.output
