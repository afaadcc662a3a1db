import json

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.config import dump_config, load_config
from mlp_manual.datasets.preprocessing import Preprocessing
from mlp_manual.errors import ConfigError, DataError, ModelFileError
from mlp_manual.model import build_model
from mlp_manual.predict.model_file import save_model
from mlp_manual.results.evaluate import check_saved_model, evaluate_saved_model
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
    save_model(build_model([{"type": "linear"}], 64, 10, np.random.default_rng(0)), tmp_path / "model.npz")
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
    with pytest.raises(ConfigError, match="other.yaml: no such config file$"):
        evaluate_saved_model(tmp_path / "run" / "model.npz", config_path=tmp_path / "other.yaml")
    (tmp_path / "alone").mkdir()
    (tmp_path / "run" / "model.npz").rename(tmp_path / "alone" / "model.npz")
    with pytest.raises(ConfigError, match="config.yaml: no run config beside the model; pass --config$"):
        evaluate_saved_model(tmp_path / "alone" / "model.npz")


@pytest.mark.parametrize("inputs, outputs, message", [
    (5, 2, "m.npz takes 5 features, xor has 2"),
    (2, 3, "m.npz has 3 outputs, xor with softmax_cross_entropy needs 2"),
])
def test_a_saved_model_must_take_the_features_and_give_the_outputs_the_data_and_loss_need(inputs, outputs, message):
    exp = prepare(load_config("configs/xor.yaml"))
    check_saved_model(exp.model, "m.npz", exp.data, "xor", exp.loss)
    model = build_model([{"type": "linear"}], inputs, outputs, np.random.default_rng(0))
    with pytest.raises(DataError) as e:
        check_saved_model(model, "m.npz", exp.data, "xor", exp.loss)
    assert str(e.value) == message


IRIS_LIKE = """a,b,label
5.1,3.5,setosa
4.9,3.0,setosa
4.7,3.2,setosa
5.0,3.6,setosa
5.4,3.9,setosa
4.6,3.4,setosa
7.0,3.2,versicolor
6.4,3.2,versicolor
6.9,3.1,versicolor
5.5,2.3,versicolor
6.5,2.8,versicolor
5.7,2.8,versicolor
"""


def csv_run(tmp_path, seed=0):
    """A trained run on a small CSV (text labels, standardized inputs); returns its folder."""
    (tmp_path / "flowers.csv").write_text(IRIS_LIKE)
    config = tmp_path / "flowers.yaml"
    config.write_text(yaml.safe_dump({
        "name": "flowers", "seed": seed,
        "data": {"name": "csv", "path": "flowers.csv", "preprocess": "standardize", "test_fraction": 0.25},
        "model": {"layers": [{"type": "linear", "units": 4}, "tanh", {"type": "linear"}]},
        "optimizer": {"name": "adam", "lr": 0.05}, "training": {"epochs": 5, "batch_size": 3}}))
    run = tmp_path / f"run{seed}"
    result = CliRunner().invoke(train_main, ["--config", str(config), "--out", str(run), "-q"])
    assert result.exit_code == 0, result.output
    return run


def test_eval_refuses_a_data_file_that_changed_since_the_run_split_it(tmp_path):
    run = csv_run(tmp_path)
    test = json.loads((run / "summary.json").read_text())["test"]
    first = CliRunner().invoke(eval_main, ["--model", str(run / "model.npz")]).output.splitlines()[0]
    assert first == f"flowers.csv test: 4 samples, loss {test['loss']:.4f}, accuracy {test['acc']:.4f} ({round(4 * test['acc'])}/4)"
    with open(tmp_path / "flowers.csv", "a") as f:
        f.write("6.3,3.3,versicolor\n")  # a row appended after training moves rows between the splits
    result = CliRunner().invoke(eval_main, ["--model", str(run / "model.npz")])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {run / 'model.npz'}: cannot rebuild the run's test split of flowers.csv: "
                                    "the file at data.path has changed since the run read it (SHA-256 ")
    assert result.output.rstrip().endswith("To evaluate a file as it is now, as a whole, pass it with --data FILE")


def test_eval_refuses_a_config_whose_seed_splits_the_data_differently(tmp_path):
    run = csv_run(tmp_path)
    other = tmp_path / "other.yaml"
    other.write_text((run / "config.yaml").read_text().replace("seed: 0", "seed: 7"))
    with pytest.raises(DataError, match="the config has seed 7, the run split its data with seed 0"):
        evaluate_saved_model(run / "model.npz", config_path=other)


def test_eval_uses_the_model_files_preprocessing_and_never_fits_it_again(tmp_path, monkeypatch):
    run = csv_run(tmp_path)
    test = json.loads((run / "summary.json").read_text())["test"]

    def no_fit(*args):
        raise AssertionError("preprocessing fitted again")

    monkeypatch.setattr(Preprocessing, "fit", classmethod(no_fit))
    ev = evaluate_saved_model(run / "model.npz")
    assert ev.result.loss == pytest.approx(test["loss"], rel=1e-6) and ev.result.accuracy == test["acc"]


def test_eval_of_a_labelled_file_evaluates_every_row_with_the_models_classes(tmp_path):
    run = csv_run(tmp_path)
    rows = IRIS_LIKE.splitlines()
    (tmp_path / "new.csv").write_text("\n".join([rows[0], rows[1], rows[7], rows[8]]) + "\n")
    result = CliRunner().invoke(eval_main, ["--model", str(run / "model.npz"), "--data", str(tmp_path / "new.csv")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith("new.csv (whole file): 3 samples, loss ")
    assert [line.split()[:2] for line in result.output.splitlines()[2:4]] == [["setosa", "1"], ["versicolor", "2"]]
    assert (run / "confusion_new.png").is_file() and result.output.rstrip().endswith("confusion_new.png")
    result = CliRunner().invoke(eval_main, ["--model", str(run / "model.npz"), "--data", str(tmp_path / "new.csv"),
                                            "--split", "val"])
    assert result.exit_code == 2 and "--split does not apply to --data FILE: the file is evaluated as a whole" in result.output
    (tmp_path / "odd.csv").write_text("a,b,label\n5.0,3.0,virginica\n")
    result = CliRunner().invoke(eval_main, ["--model", str(run / "model.npz"), "--data", str(tmp_path / "odd.csv")])
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path / 'odd.csv'}: class label 'virginica' is not one of the model's classes (setosa, versicolor)\n"
    result = CliRunner().invoke(eval_main, ["--model", str(run / "model.npz"), "--data", "missing.csv"])
    assert result.exit_code == 1 and result.output == "Error: missing.csv: no such file\n"


def test_a_damaged_split_record_names_the_key(tmp_path):
    run = csv_run(tmp_path)
    with np.load(run / "model.npz") as f:
        arrays = dict(f)
    spec = json.loads(str(arrays["__spec__"]))
    spec["split"]["files_sha256"]["data.path"] = "not a digest"
    arrays["__spec__"] = np.array(json.dumps(spec))
    np.savez(run / "model.npz", **arrays)
    with pytest.raises(ModelFileError, match=r"damaged model spec \(split: files_sha256 must map"):
        evaluate_saved_model(run / "model.npz")


def test_a_split_read_from_its_own_file_is_named_by_that_file(tmp_path):
    rows = IRIS_LIKE.splitlines()
    (tmp_path / "train.csv").write_text("\n".join(rows[:5] + rows[7:11]) + "\n")
    (tmp_path / "held.csv").write_text("\n".join([rows[0], *rows[5:7], *rows[11:]]) + "\n")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"data": {"name": "csv", "path": "train.csv", "test_path": "held.csv"},
                                      "training": {"epochs": 2, "batch_size": 4}}))
    assert CliRunner().invoke(train_main, ["--config", str(config), "--out", str(tmp_path / "run"), "-q"]).exit_code == 0
    result = CliRunner().invoke(eval_main, ["--model", str(tmp_path / "run" / "model.npz")])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("held.csv test: 4 samples, loss ")
