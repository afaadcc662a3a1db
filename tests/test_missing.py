"""Missing feature values (data.missing): filled from the training split, stored in the model
file, filled again by mlp-predict, mlp-eval and the ONNX graph."""

import csv
import io

import numpy as np
import pytest
import yaml
from conftest import invoke_cli

from mlp_manual import load_predictor
from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.predict import main as predict_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.datasets.preprocessing import Preprocessing
from mlp_manual.errors import DataError
from mlp_manual.predict.model_file import read_model


def holes_csv(path, n=300, seed=1, rate=0.1):
    """A CSV of three features on different scales with ``rate`` of the cells empty, an ID and a
    0/1 label; returns the features (N, 3) with NaN where a cell is empty."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0] + [0.0, 5.0, 50.0]  # (N, 3)
    y = (X[:, 0] + X[:, 1] / 10 > 0.5).astype(int)
    X[rng.random(X.shape) < rate] = np.nan
    lines = ["id,a,b,c,label"] + [f"{i}," + ",".join("" if np.isnan(v) else f"{v:.4f}" for v in row) + f",{label}"
                                   for i, (row, label) in enumerate(zip(X, y))]
    path.write_text("\n".join(lines) + "\n")
    return np.round(X, 4)


def train(tmp_path, missing, out="run"):
    config = {"data": {"name": "csv", "path": str(tmp_path / "holes.csv"), "target": "label", "drop": ["id"],
                       "preprocess": "standardize", "missing": missing, "test_fraction": 0.2},
              "optimizer": {"lr": 0.01}, "training": {"epochs": 20}}
    (tmp_path / f"{out}.yaml").write_text(yaml.safe_dump(config))
    return invoke_cli(train_main, "--config", str(tmp_path / f"{out}.yaml"), "--out", str(tmp_path / out), "-q")


@pytest.mark.parametrize("how", ["mean", "median", "most_frequent"])
def test_the_fill_values_are_scikit_learns_simple_imputer_statistics(how, rng):
    impute = pytest.importorskip("sklearn.impute")
    X = rng.integers(0, 5, size=(60, 4)).astype(float)  # small integers: ties for most_frequent
    X[rng.random(X.shape) < 0.2] = np.nan
    p = Preprocessing.fit("standardize", X, how)
    imputer = impute.SimpleImputer(strategy=how).fit(X)
    np.testing.assert_allclose(p.fill, imputer.statistics_, rtol=1e-12)
    filled = imputer.transform(X)
    np.testing.assert_allclose(p.shift, filled.mean(axis=0), rtol=1e-12)  # statistics of the filled values
    np.testing.assert_allclose(p.apply(X), (filled - filled.mean(axis=0)) / filled.std(axis=0), rtol=1e-12)


def test_a_feature_with_no_training_value_cannot_be_filled():
    X = np.array([[1.0, np.nan], [2.0, np.nan]])
    with pytest.raises(DataError, match=r"feature 2 has no value in the training split .*data.missing: mean"):
        Preprocessing.fit("none", X, "mean")


def test_the_fill_values_travel_in_the_model_file_and_are_checked_on_loading():
    p = Preprocessing.fit("scale", np.array([[1.0, np.nan], [3.0, 4.0]]), "mean")
    spec = p.to_json()
    assert spec["fill"] == [2.0, 4.0]
    back = Preprocessing.from_json(spec, 2)
    assert back.kind == "scale" and back.fill.tolist() == [2.0, 4.0]
    assert Preprocessing.from_json({"kind": "none", "fill": [1.0, 2.0]}, 2).fill.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="fill must be a list of 2 finite numbers"):
        Preprocessing.from_json({**spec, "fill": [1.0]}, 2)
    assert "fill" not in Preprocessing.fit("scale", np.array([[1.0], [2.0]])).to_json()


def test_a_run_with_holes_predicts_empty_cells_as_their_fill_values_everywhere(tmp_path):
    X = holes_csv(tmp_path / "holes.csv")
    result = train(tmp_path, "median")
    assert result.exit_code == 0, result.output
    model_path = tmp_path / "run" / "model.npz"
    _, info = read_model(model_path)
    fill = info.preprocessing.fill
    assert fill.shape == (3,) and np.isfinite(fill).all()
    rows = X[:20]  # (20, 3) with holes
    (tmp_path / "new.csv").write_text("id,a,b,c\n" + "\n".join(
        f"{i}," + ",".join("" if np.isnan(v) else repr(float(v)) for v in row) for i, row in enumerate(rows)) + "\n")
    typed = np.where(np.isnan(rows), fill, rows)  # the fill values written in
    typed_lines = [",".join(repr(float(v)) for v in row) for row in typed]
    (tmp_path / "typed.csv").write_text("a,b,c\n" + "\n".join(typed_lines) + "\n")
    out = {}
    for name in ("new", "typed"):
        result = invoke_cli(predict_main, "--model", str(model_path), "--input", str(tmp_path / f"{name}.csv"),
                            "--proba")
        assert result.exit_code == 0, result.output
        out[name] = list(csv.reader(io.StringIO(result.stdout)))
    assert out["new"] == out["typed"] and np.isnan(rows).any()
    evaluated = invoke_cli(eval_main, "--model", str(model_path), "--data", str(tmp_path / "holes.csv"),
                           "--out", str(tmp_path / "eval"))
    assert evaluated.exit_code == 0 and "accuracy" in evaluated.output
    predictor = load_predictor(model_path)
    np.testing.assert_array_equal(predictor.predict_proba(rows), predictor.predict_proba(typed))
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from mlp_manual.export.onnx import export_file

    export_file(model_path, tmp_path / "m.onnx")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    probabilities, label = session.run(["probabilities", "label"], {"input": rows.astype(np.float32)})
    np.testing.assert_allclose(probabilities, predictor.predict_proba(rows.astype(np.float32)), atol=1e-5)
    assert label.tolist() == [str(c) for c in predictor.predict(rows.astype(np.float32))]


def test_without_data_missing_an_empty_cell_is_an_error_that_says_how_to_fill_it(tmp_path):
    holes_csv(tmp_path / "holes.csv")
    result = train(tmp_path, "error")
    assert result.exit_code == 1 and len(result.output.splitlines()) == 1
    assert "the cell is empty; a missing value cannot be trained on: fill it in or remove the row (or fill such " \
           "cells: data.missing: mean, median or most_frequent)" in result.output
    holes_csv(tmp_path / "full.csv", rate=0.0)
    (tmp_path / "holes.csv").write_text((tmp_path / "full.csv").read_text())
    assert train(tmp_path, "error", out="full").exit_code == 0
    (tmp_path / "new.csv").write_text("a,b,c\n1.0,,3.0\n")
    result = invoke_cli(predict_main, "--model", str(tmp_path / "full" / "model.npz"), "--input",
                        str(tmp_path / "new.csv"))
    assert result.exit_code == 1 and "new.csv: line 2, column 2 (b): the cell is empty" in result.output
    assert "(this model was trained without data.missing, so it fills none)" in result.output


def test_na_nan_null_and_question_marks_are_missing_values_as_an_empty_cell_is(tmp_path):
    holes_csv(tmp_path / "blank.csv")
    text = (tmp_path / "blank.csv").read_text()
    markers = iter(["NA", "NaN", "null", "?", " N/A ", "None", "nan", "#N/A", "NULL"] * 1000)
    marked = "\n".join(",".join(c if c or k in (0, 4) else next(markers) for k, c in enumerate(line.split(",")))
                       for line in text.splitlines()) + "\n"
    assert "NA," in marked and ",?," in marked
    for name, content in (("holes", text), ("marked", marked)):  # the same table, its holes written two ways
        (tmp_path / "holes.csv").write_text(content)
        assert train(tmp_path, "median", out=name).exit_code == 0
    blank, marked_model = (read_model(tmp_path / name / "model.npz") for name in ("holes", "marked"))
    np.testing.assert_array_equal(blank[0].layers[0].params["W"], marked_model[0].layers[0].params["W"])
    assert marked_model[1].preprocessing.missing_values == ("NA", "N/A", "n/a", "#N/A", "NaN", "nan", "null", "NULL",
                                                            "None", "?")
    (tmp_path / "new.csv").write_text("a,b,c\nNA,1.0,2.0\n,1.0,2.0\n")
    result = invoke_cli(predict_main, "--model", str(tmp_path / "marked" / "model.npz"), "--input",
                        str(tmp_path / "new.csv"), "--proba")
    assert result.exit_code == 0, result.output
    first, second = result.stdout.splitlines()[1:]
    assert first == second  # NA is filled as an empty cell is
    result = train(tmp_path, "error", out="refused")
    assert result.exit_code == 1
    assert "the cell is 'NA', a missing value; a missing value cannot be trained on: fill it in or remove the row " \
           "(or fill such cells: data.missing: mean, median or most_frequent)" in result.output


def test_the_texts_of_a_missing_value_are_yours_to_choose(tmp_path):
    rows = [f"{i % 7}.5,{'red' if i % 3 else 'None'},{i % 2}" for i in range(60)]
    (tmp_path / "d.csv").write_text("x,colour,y\n" + "\n".join(rows) + "\n-,blue,1\n")
    config = tmp_path / "c.yaml"
    config.write_text(f"data: {{name: csv, path: {tmp_path / 'd.csv'}, missing: mean, missing_values: ['-']}}\n"
                      "training: {epochs: 1}\n")
    result = invoke_cli(train_main, "--config", str(config), "--out", str(tmp_path / "run"), "-q")
    assert result.exit_code == 0, result.output
    _, info = read_model(tmp_path / "run" / "model.npz")
    assert info.preprocessing.categories[1] == ("None", "blue", "red")  # 'None' is a colour here
    config.write_text(config.read_text().replace("['-']", "[NA, null]"))
    result = invoke_cli(train_main, "--config", str(config), "--out", str(tmp_path / "run2"), "-q")
    assert result.output == (f"Error: {config}: data.missing_values[1] must be a string, got None (YAML reads null, "
                             "NULL and ~ as nothing: quote it, 'null')\n")
