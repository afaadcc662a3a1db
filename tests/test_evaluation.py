import json

import numpy as np
import yaml
from click.testing import CliRunner

from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.training.evaluation import class_table, confusion_matrix

SMALL_DIGITS = {
    "name": "digits-small",
    "data": {"name": "digits", "preprocess": "scale", "val_fraction": 0.1},
    "model": {"layers": [{"type": "linear", "units": 32}, "relu", {"type": "linear"}]},
    "optimizer": {"name": "adam", "lr": 0.01},
    "training": {"epochs": 3, "batch_size": 64},
}


def test_confusion_matrix_rows_are_true_classes():
    cm = confusion_matrix(np.array([0, 0, 1, 2, 2, 2]), np.array([0, 1, 1, 2, 2, 0]), 3)
    assert cm.tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 2]]


def test_class_table_handles_a_class_never_predicted():
    cm = np.array([[2, 0], [1, 0]])
    lines = class_table(cm, ["cat", "dog"]).splitlines()
    assert lines[1].split() == ["cat", "2", "0.6667", "1.0000"]
    assert lines[2].split() == ["dog", "1", "-", "0.0000"]
    assert lines[3].split() == ["all", "3", "0.6667"]


def test_train_writes_class_plots_and_eval_reproduces_the_test_split(tmp_path):
    config = tmp_path / "digits.yaml"
    config.write_text(yaml.safe_dump(SMALL_DIGITS))
    run = tmp_path / "run"
    result = CliRunner().invoke(train_main, ["--config", str(config), "--out", str(run), "-q"])
    assert result.exit_code == 0, result.output
    assert (run / "confusion.png").stat().st_size > 0 and (run / "mistakes.png").stat().st_size > 0
    test = json.loads((run / "summary.json").read_text())["test"]
    result = CliRunner().invoke(eval_main, ["--model", str(run / "model.npz"), "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first == f"digits test: 359 samples, loss {test['loss']:.4f}, accuracy {test['acc']:.4f} ({round(test['acc'] * 359)}/359)"
    assert len(result.output.splitlines()) == 1 + 12 + 1
    assert (tmp_path / "report" / "confusion.png").is_file()


def test_eval_without_a_config_says_so(tmp_path):
    (tmp_path / "model.npz").write_bytes(b"")
    result = CliRunner().invoke(eval_main, ["--model", str(tmp_path / "model.npz")])
    assert result.exit_code == 1 and "config.yaml: no run config beside the model; pass --config" in result.output


def test_eval_of_a_missing_dataset_names_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.delenv("MLP_MANUAL_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(SMALL_DIGITS))
    (tmp_path / "model.npz").write_bytes(b"")
    result = CliRunner().invoke(eval_main, ["--model", "model.npz", "--data", "fashion_mnist"])
    assert result.exit_code == 1
    assert "Error: fashion_mnist is not downloaded; run `mlp-data fetch fashion_mnist` to get it" in result.output
