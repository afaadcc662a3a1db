import json

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.config import dump_config, load_config
from mlp_manual.errors import ConfigError, DataError
from mlp_manual.model import build_model
from mlp_manual.runs.evaluate import check_saved_model, evaluate_saved_model
from mlp_manual.runs.model_file import save_model
from mlp_manual.training.evaluation import class_table, confusion_matrix, evaluate
from mlp_manual.training.experiment import prepare

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


def saved_run(folder, config="configs/xor.yaml", overrides=()):
    """A run folder holding an untrained model of ``config`` and its config.yaml; returns the experiment."""
    exp = prepare(load_config(config, list(overrides)))
    folder.mkdir()
    (folder / "config.yaml").write_text(dump_config(exp.cfg))
    save_model(exp.model, folder / "model.npz")
    return exp


def test_evaluate_saved_model_matches_the_trainers_evaluation_of_the_same_model(tmp_path):
    exp = saved_run(tmp_path / "run")
    ev = evaluate_saved_model(tmp_path / "run" / "model.npz", "train")
    expected = evaluate(exp.model, exp.loss, exp.data.X_train, exp.data.y_train)
    assert (ev.dataset, ev.split, ev.class_names) == ("xor", "train", ["0", "1"])
    assert ev.result.loss == expected["loss"] and ev.result.accuracy == expected["acc"]
    assert ev.result.confusion.sum() == 4 and ev.result.y_true.tolist() == exp.data.y_train.tolist()


def test_evaluate_saved_model_refuses_what_it_cannot_evaluate(tmp_path):
    saved_run(tmp_path / "run")
    with pytest.raises(DataError, match=r"^xor has no val split with this config \(data.val_fraction is 0\); its splits: train$"):
        evaluate_saved_model(tmp_path / "run" / "model.npz", "val")
    with pytest.raises(ConfigError, match="other.yaml: no run config beside the model; pass --config$"):
        evaluate_saved_model(tmp_path / "run" / "model.npz", config_path=tmp_path / "other.yaml")


@pytest.mark.parametrize("inputs, outputs, message", [
    (5, 2, "m.npz takes 5 features, xor has 2"),
    (2, 3, "m.npz has 3 outputs, xor with softmax_cross_entropy needs 2"),
])
def test_a_saved_model_must_take_the_features_and_give_the_outputs_the_data_and_loss_need(inputs, outputs, message):
    exp = prepare(load_config("configs/xor.yaml"))
    check_saved_model(exp.model, "m.npz", exp)
    model = build_model([{"type": "linear"}], inputs, outputs, np.random.default_rng(0))
    with pytest.raises(DataError) as e:
        check_saved_model(model, "m.npz", exp)
    assert str(e.value) == message
