"""Predicting from a run's model file: mlp-predict and the Python Predictor on raw rows."""

import csv
import io
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import invoke_cli
from datafiles import FLOWER_CLASSES, FLOWER_FEATURES, flowers_csv

from mlp_manual import load_model
from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.predict import main as predict_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.datasets.preprocessing import Preprocessing
from mlp_manual.errors import DataError, ModelFileError
from mlp_manual.model import build_model
from mlp_manual.predict.model_file import read_model, save_model
from mlp_manual.predict.model_info import ModelInfo
from mlp_manual.predict.predictor import Predictor, load_predictor, predict_file

FILES = Path(__file__).parent / "bad_inputs" / "files"
FLOWERS = {
    "data": {"name": "csv", "target": "species", "preprocess": "standardize", "val_fraction": 0.2},
    "model": {"layers": [{"type": "linear", "units": 16}, "relu", {"type": "dropout", "p": 0.3},
                         {"type": "linear"}]},
    "optimizer": {"name": "adam", "lr": 0.02},
    "training": {"epochs": 30, "batch_size": 16},
}


@pytest.fixture(scope="module")
def flowers(tmp_path_factory):
    """A run trained through mlp-train on a CSV with text labels and named columns, with a
    held-out test file; returns its folder."""
    folder = tmp_path_factory.mktemp("flowers")
    flowers_csv(folder / "train.csv", 150, seed=1)
    flowers_csv(folder / "test.csv", 60, seed=2)
    config = dict(FLOWERS, data=dict(FLOWERS["data"], path=str(folder / "train.csv"),
                                     test_path=str(folder / "test.csv")))
    (folder / "flowers.yaml").write_text(yaml.safe_dump(config))
    result = invoke_cli(train_main, "--config", str(folder / "flowers.yaml"), "--out", str(folder / "run"), "-q")
    assert result.exit_code == 0, result.output
    return folder


def predict(*args):
    result = invoke_cli(predict_main, *map(str, args))
    assert result.exit_code == 0, result.output
    return list(csv.reader(io.StringIO(result.stdout)))


def test_mlp_predict_gives_the_accuracy_of_mlp_eval_with_or_without_the_target_and_in_any_column_order(flowers, tmp_path):
    model = flowers / "run" / "model.npz"
    evaluated = invoke_cli(eval_main, "--model", str(model), "--out", str(tmp_path))
    eval_accuracy = float(re.search(r"accuracy (\S+)", evaluated.output).group(1))
    truth = [row.rsplit(",", 1)[1] for row in (flowers / "test.csv").read_text().splitlines()[1:]]
    with_target = predict("--model", model, "--input", flowers / "test.csv")
    shuffled = ["hue", "petal_width", "stem_mm", "petal_length"]
    flowers_csv(tmp_path / "new.csv", 60, seed=2, columns=shuffled, target=False)
    without = predict("--model", model, "--input", tmp_path / "new.csv")
    assert with_target[0] == without[0] == ["prediction"]
    assert with_target == without and len(with_target) == 61
    accuracy = np.mean([row[0] == label for row, label in zip(with_target[1:], truth)])
    assert round(accuracy, 4) == eval_accuracy and accuracy > 0.9
    assert {row[0] for row in with_target[1:]} <= set(FLOWER_CLASSES)


def test_proba_rows_sum_to_one_and_agree_with_the_prediction(flowers):
    rows = predict("--model", flowers / "run" / "model.npz", "--input", flowers / "test.csv", "--proba")
    assert rows[0] == ["prediction"] + [f"p_{c}" for c in FLOWER_CLASSES]
    for row in rows[1:]:
        p = np.array(row[1:], dtype=float)
        assert abs(p.sum() - 1) < 1e-6 and FLOWER_CLASSES[int(p.argmax())] == row[0]


def test_a_model_with_dropout_predicts_identically_twice(flowers):
    path = flowers / "run" / "model.npz"
    model = load_model(path)
    assert [type(layer).__name__ for layer in model.layers].count("Dropout") == 1
    assert not any(layer.training for layer in model.layers)  # loaded in evaluation mode
    X = np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32)
    assert np.array_equal(model.forward(X), model.forward(X))
    args = ("--model", path, "--input", flowers / "test.csv", "--proba")
    assert predict(*args) == predict(*args)


def test_the_python_predictor_takes_raw_rows_and_answers_with_the_original_labels(flowers, tmp_path):
    predictor = load_predictor(flowers / "run" / "model.npz")
    assert predictor.classes == list(FLOWER_CLASSES) and predictor.feature_names == list(FLOWER_FEATURES)
    table = np.genfromtxt(flowers / "test.csv", delimiter=",", skip_header=1, usecols=range(4))  # (60, 4) raw
    labels = predictor.predict(table)
    proba = predictor.predict_proba(table)
    assert labels.dtype.kind == "U" and proba.shape == (60, 3) and np.allclose(proba.sum(axis=1), 1)
    assert [FLOWER_CLASSES[i] for i in proba.argmax(axis=1)] == labels.tolist()
    cli = predict("--model", flowers / "run" / "model.npz", "--input", flowers / "test.csv")
    assert labels.tolist() == [row[0] for row in cli[1:]]
    np.save(tmp_path / "rows.npy", table)
    assert predict("--model", flowers / "run" / "model.npz", "--input", tmp_path / "rows.npy") == cli
    headerless = "\n".join(",".join(repr(float(v)) for v in row) for row in table) + "\n"
    (tmp_path / "rows.csv").write_text(headerless)
    assert predict("--model", flowers / "run" / "model.npz", "--input", tmp_path / "rows.csv") == cli


def test_the_model_file_describes_the_data(flowers):
    with np.load(flowers / "run" / "model.npz") as f:
        spec = json.loads(str(f["__spec__"]))
    assert spec["task"] == "classification" and spec["loss"] == "softmax_cross_entropy"
    assert spec["classes"] == list(FLOWER_CLASSES) and spec["feature_names"] == list(FLOWER_FEATURES)
    assert spec["target_names"] == ["species"] and spec["dtype"] == "float32" and spec["input_shape"] is None
    assert spec["preprocess"]["kind"] == "standardize" and len(spec["preprocess"]["shift"]) == 4
    assert spec["mlp_manual_version"] == "0.1.0" and spec["n_features"] == 4
    raw = np.genfromtxt(flowers / "train.csv", delimiter=",", skip_header=1, usecols=range(4))
    assert np.all(np.abs(np.array(spec["preprocess"]["shift"]) - raw.mean(axis=0)) < 0.2 * raw.std(axis=0))


def same_predictions(a: str, b: str) -> bool:
    """Two CSVs of ``--proba`` predictions agree: the same header and labels, and probabilities
    within float32 rounding of the logits (a BLAS kernel may round a row differently in a matmul of
    another height; a tiny probability's relative error is its logit's absolute error)."""
    rows_a, rows_b = (list(csv.reader(io.StringIO(t))) for t in (a, b))
    if rows_a[0] != rows_b[0] or [r[0] for r in rows_a] != [r[0] for r in rows_b]:
        return False
    p_a, p_b = (np.array([r[1:] for r in rows[1:]], dtype=np.float64) for rows in (rows_a, rows_b))
    return np.allclose(p_a, p_b, rtol=1e-5, atol=0)


def test_predictions_stream_in_chunks_with_the_same_answers_and_errors_that_name_the_line(flowers, tmp_path):
    predictor = load_predictor(flowers / "run" / "model.npz")
    whole, chunked, progress = io.StringIO(), io.StringIO(), []
    assert predict_file(predictor, flowers / "test.csv", whole, proba=True) == 60
    assert predict_file(predictor, flowers / "test.csv", chunked, proba=True, chunk_rows=7,
                        on_progress=progress.append) == 60
    assert same_predictions(whole.getvalue(), chunked.getvalue()) and len(progress) == 9
    assert progress == sorted(progress) and progress[-1] == (flowers / "test.csv").stat().st_size
    lines = (flowers / "test.csv").read_text().splitlines()
    cells = lines[50].split(",")
    cells[2] = "n/a"
    lines[50] = ",".join(cells)
    (tmp_path / "bad.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=re.escape(f"{tmp_path / 'bad.csv'}: line 51, column 3 (stem_mm): the cell is "
                                                  "'n/a', a missing value; a missing value cannot be predicted from")):
        predict_file(predictor, tmp_path / "bad.csv", io.StringIO(), chunk_rows=7)
    (tmp_path / "bad.csv").write_text((tmp_path / "bad.csv").read_text().replace("n/a", "n.a."))
    with pytest.raises(DataError, match=re.escape(f"{tmp_path / 'bad.csv'}: line 51, column 3 (stem_mm): 'n.a.' is not a number")):
        predict_file(predictor, tmp_path / "bad.csv", io.StringIO(), chunk_rows=7)


def test_output_is_written_atomically_and_only_on_success(flowers, tmp_path):
    out = tmp_path / "pred.csv"
    result = invoke_cli(predict_main, "--model", str(flowers / "run" / "model.npz"), "--input",
                        str(flowers / "test.csv"), "--output", str(out))
    assert result.exit_code == 0 and result.stdout == "" and f"wrote 60 predictions to {out}" in result.output
    assert "predicting" not in result.output  # no progress bar without a terminal
    assert out.read_text().splitlines()[0] == "prediction" and len(out.read_text().splitlines()) == 61
    (tmp_path / "bad.csv").write_text("petal_length,petal_width,stem_mm,hue\n1,2,3,nan\n")
    result = invoke_cli(predict_main, "--model", str(flowers / "run" / "model.npz"), "--input",
                        str(tmp_path / "bad.csv"), "--output", str(tmp_path / "new.csv"))
    assert result.exit_code == 1 and not (tmp_path / "new.csv").exists()
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


def test_an_image_model_takes_rows_or_images_and_regression_names_its_columns(tmp_path, rng):
    model = build_model([{"type": "linear", "units": 3}, {"type": "tanh"}, {"type": "linear"}], 4, 2, rng)
    info = ModelInfo("regression", "mse", 4, Preprocessing("scale", 0.0, 255.0), None, None, ("x", "y"), (2, 2), "0.1.0")
    save_model(model, tmp_path / "m.npz", info=info)
    predictor = load_predictor(tmp_path / "m.npz")
    images = rng.integers(0, 256, size=(5, 2, 2)).astype(np.uint8)
    expected = model.eval().forward((images.reshape(5, 4) / 255.0).astype(np.float32))
    assert np.array_equal(predictor.predict(images), expected) and predictor.classes is None
    np.save(tmp_path / "images.npy", images)
    rows = predict("--model", tmp_path / "m.npz", "--input", tmp_path / "images.npy")
    assert rows[0] == ["prediction_x", "prediction_y"]
    assert np.array_equal(np.array(rows[1:], dtype=np.float32), expected)
    with pytest.raises(DataError, match=re.escape("X: has shape (5, 3, 3), the model takes (rows, 4) or (rows, 2, 2)")):
        predictor.predict(np.zeros((5, 3, 3)))
    with pytest.raises(DataError, match=re.escape("X: row 1, column 2: inf is not a finite number")):
        predictor.predict(np.array([[0, 0, 0, 0], [0, 0, np.inf, 0]]))
    with pytest.raises(DataError, match="a regression model gives no class probabilities"):
        predictor.predict_proba(images)


def test_a_model_file_without_a_description_predicts_with_a_note_that_it_carries_no_preprocessing(tmp_path):
    model, info = read_model(FILES / "xor-model.npz")  # saved without a description of its data
    assert info.preprocessing is None and info.task is None and info.classes is None and info.n_features == 2
    with pytest.warns(UserWarning, match="carries no description of its preprocessing"):
        predictor = load_predictor(FILES / "xor-model.npz")
    assert np.array_equal(predictor.predict(np.array([[0, 0], [0, 1]])),
                          model.forward(np.array([[0, 0], [0, 1]], dtype=np.float32)))
    (tmp_path / "x.csv").write_text("0,0\n1,0\n")
    result = invoke_cli(predict_main, "--model", str(FILES / "xor-model.npz"), "--input", str(tmp_path / "x.csv"))
    assert result.exit_code == 0 and result.stdout.splitlines()[0] == "prediction_y0,prediction_y1"
    assert len(result.stdout.splitlines()) == 3
    assert "note: " in result.output and "carries no description of its preprocessing" in result.output


def test_a_model_saved_without_a_description_predicts_its_raw_outputs(tmp_path, rng):
    model = build_model([{"type": "linear"}], 3, 2, rng)
    save_model(model, tmp_path / "m.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        predictor = load_predictor(tmp_path / "m.npz")
    X = rng.normal(size=(4, 3))
    assert predictor.header() == ["prediction_y0", "prediction_y1"]
    assert np.array_equal(predictor.predict(X), model.forward(X.astype(np.float32)))
    assert isinstance(Predictor(model, predictor.info).predict(X[:0]), np.ndarray)


def test_a_model_spec_without_its_dtype_is_damaged(tmp_path, rng):
    save_model(build_model([{"type": "linear"}], 3, 2, rng), tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as f:
        arrays = {k: f[k] for k in f.files}
    spec = json.loads(str(arrays["__spec__"]))
    assert spec.pop("dtype") == "float32"  # every model file says its dtype
    np.savez(tmp_path / "m.npz", **{**arrays, "__spec__": np.array(json.dumps(spec))})
    with pytest.raises(ModelFileError, match=re.escape(f"{tmp_path / 'm.npz'}: damaged model spec (dtype None, "
                                                       "expected one of float16, float32, float64)")):
        load_model(tmp_path / "m.npz")


def test_a_progress_bar_is_drawn_only_when_asked_for_by_a_terminal(flowers, tmp_path, monkeypatch):
    from mlp_manual.cli import predict as predict_cli

    args = ["--model", str(flowers / "run" / "model.npz"), "--input", str(flowers / "test.csv"),
            "--output", str(tmp_path / "p.csv")]
    assert not predict_cli.show_progress(10 << 20)  # tests run without a terminal
    assert "predicting" not in invoke_cli(predict_main, *args).output
    monkeypatch.setattr(predict_cli, "show_progress", lambda size: True)
    result = invoke_cli(predict_main, *args)
    assert result.exit_code == 0 and "predicting" in result.output and len((tmp_path / "p.csv").read_text().splitlines()) == 61


def test_train_and_predict_write_to_sys_stdout_not_through_click_get_text_stream(flowers, tmp_path, monkeypatch):
    """click 8.5 deprecates click.get_text_stream (a DeprecationWarning under `python -m`); the
    commands write to sys.stdout instead."""
    import click

    def deprecated(*args, **kwargs):
        raise AssertionError("click.get_text_stream is deprecated")

    monkeypatch.setattr(click, "get_text_stream", deprecated)
    rows = predict("--model", flowers / "run" / "model.npz", "--input", flowers / "test.csv")
    assert rows[0] == ["prediction"] and len(rows) == 61
    result = invoke_cli(train_main, "--config", "configs/xor.yaml", "--out", str(tmp_path / "xor"),
                        "--epochs", "2")
    assert result.exit_code == 0 and "epoch 2/2" in result.output


def test_a_row_whose_outputs_overflow_is_an_error_and_no_nan_is_written(tmp_path, rng):
    model = build_model([{"type": "linear"}], 2, 2, rng)
    model.layers[0].params["W"][...] = 4.0
    info = ModelInfo("classification", "softmax_cross_entropy", 2, Preprocessing(), ("cat", "dog"), ("a", "b"),
                     ("label",), None, "0.1.0")
    save_model(model, tmp_path / "m.npz", info=info)
    (tmp_path / "x.csv").write_text("a,b\n1,2\n\n3e38,2e38\n")
    result = invoke_cli(predict_main, "--model", str(tmp_path / "m.npz"), "--input", str(tmp_path / "x.csv"), "--proba")
    assert result.exit_code == 1 and "nan" not in result.stdout
    assert result.output.splitlines()[-1] == (
        f"Error: {tmp_path / 'x.csv'}: line 4: the model's outputs overflow float32 (the row's inputs reach 3e+38 once "
        "preprocessed, far beyond the training data's); no prediction is written for it")
