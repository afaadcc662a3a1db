"""Numbers written with a decimal comma (data.decimal): a spreadsheet's ``a;b;y`` and
``0,84;0,76;1`` trains as the same table written with points, its model file keeps the mark,
and mlp-predict, mlp-eval and the ONNX export read new rows as the training file had them."""

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
from mlp_manual.datasets.csvfile import CsvOptions, read_csv
from mlp_manual.datasets.preprocessing import Preprocessing
from mlp_manual.errors import DataError
from mlp_manual.predict.model_file import read_model


def write_table(path, X, y=None, delimiter=",", decimal=".", header=True):
    """Rows of numbers X (N, D) (and labels y) as a CSV with columns a, b, ... (and y), each
    number written with ``repr`` and then ``decimal`` as its mark."""
    columns = [chr(ord("a") + j) for j in range(X.shape[1])] + ([] if y is None else ["y"])
    lines = [delimiter.join(columns)] if header else []
    for i, row in enumerate(X):
        cells = [repr(float(v)).replace(".", decimal) for v in row] + ([] if y is None else [str(y[i])])
        lines.append(delimiter.join(cells))
    path.write_text("\n".join(lines) + "\n")


def train(tmp_path, name, **data):
    config = {"data": {"name": "csv", "target": "y", "preprocess": "standardize", "test_fraction": 0.0, **data},
              "optimizer": {"lr": 0.01}, "training": {"epochs": 5}, "seed": 3}
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return invoke_cli(train_main, "--config", str(tmp_path / f"{name}.yaml"), "--out", str(tmp_path / name), "-q")


def predict(model, path, *options):
    result = invoke_cli(predict_main, "--model", str(model), "--input", str(path), "--proba", *options)
    assert result.exit_code == 0, result.output
    return list(csv.reader(io.StringIO(result.stdout)))


@pytest.fixture
def tables(tmp_path):
    """The same rows as train and validation files, written twice: comma-separated with decimal
    points, and semicolon-separated with decimal commas."""
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(240, 2)) * [1.0, 50.0], 3)  # (N, 2)
    y = (X[:, 0] + X[:, 1] / 50 > 0).astype(int)
    for part, rows in (("train", slice(0, 180)), ("val", slice(180, None))):
        write_table(tmp_path / f"{part}_dot.csv", X[rows], y[rows])
        write_table(tmp_path / f"{part}_semi.csv", X[rows], y[rows], ";", ",")
    return X, y


def test_a_decimal_comma_file_is_refused_until_data_decimal_says_so_then_trains_as_with_points(tables, tmp_path):
    semi = {"path": str(tmp_path / "train_semi.csv"), "val_path": str(tmp_path / "val_semi.csv"), "delimiter": ";"}
    result = train(tmp_path, "categories", **semi)
    first = repr(float(tables[0][0, 0])).replace(".", ",")
    assert result.exit_code == 1
    assert result.output == (f"Error: {tmp_path / 'train_semi.csv'} (data.path): column 'a' holds numbers written with "
                             f"a decimal comma ({first!r}); set data.decimal: ',' (or list the column in "
                             "data.categorical to read it as categories)\n")
    assert train(tmp_path, "semi", **semi, decimal=",").exit_code == 0
    assert train(tmp_path, "dot", path=str(tmp_path / "train_dot.csv"), val_path=str(tmp_path / "val_dot.csv")
                 ).exit_code == 0
    with np.load(tmp_path / "semi" / "model.npz") as a, np.load(tmp_path / "dot" / "model.npz") as b:
        weights = [k for k in a.files if k != "__spec__"]
        assert weights and all(np.array_equal(a[k], b[k]) for k in weights)
    assert read_model(tmp_path / "semi" / "model.npz")[1].preprocessing.decimal == ","
    assert read_model(tmp_path / "dot" / "model.npz")[1].preprocessing.decimal == "."


def test_the_model_reads_new_rows_written_with_decimal_commas_everywhere(tables, tmp_path):
    assert train(tmp_path, "semi", path=str(tmp_path / "train_semi.csv"), delimiter=";", decimal=",").exit_code == 0
    model = tmp_path / "semi" / "model.npz"
    new = np.array([[0.84, -12.5], [-1500.0, 0.0125], [2.0, 75.0]])  # (3, 2)
    write_table(tmp_path / "new_semi.csv", new, delimiter=";", decimal=",")
    text = (tmp_path / "new_semi.csv").read_text()
    assert "-1500,0;0,0125" in text
    (tmp_path / "new_exp.csv").write_text(text.replace("-1500,0", "-1,5e3").replace("0,0125", "1,25E-2"))
    write_table(tmp_path / "new_bare.csv", new, delimiter=";", decimal=",", header=False)
    rows = predict(model, tmp_path / "new_semi.csv", "--delimiter", ";")
    assert predict(model, tmp_path / "new_exp.csv", "--delimiter", ";") == rows
    assert predict(model, tmp_path / "new_bare.csv", "--delimiter", ";") == rows
    probabilities = load_predictor(model).predict_proba(new)  # (3, 2): the numbers as numbers
    np.testing.assert_allclose(np.array([r[1:] for r in rows[1:]], dtype=float), probabilities, rtol=1e-6)

    result = invoke_cli(predict_main, "--model", str(model), "--input", str(tmp_path / "new_semi.csv"))
    assert result.exit_code == 1
    assert result.output == (f"Error: {tmp_path / 'new_semi.csv'}: the model reads numbers written with a decimal "
                             "comma (data.decimal: ','), so the file must separate its cells by another character: "
                             "give it with --delimiter (such as --delimiter ';')\n")
    (tmp_path / "points.csv").write_text("a;b\n0.84;1\n")
    result = invoke_cli(predict_main, "--model", str(model), "--input", str(tmp_path / "points.csv"),
                        "--delimiter", ";")
    assert result.exit_code == 1
    assert result.output == (f"Error: {tmp_path / 'points.csv'}: line 2, column 1 (a): '0.84' is not a number "
                             "(written with a decimal point? the model was trained with data.decimal: ',')\n")

    X, y = tables
    correct = int((load_predictor(model).predict(X[:180]) == y[:180]).sum())
    result = invoke_cli(eval_main, "--model", str(model), "--data", str(tmp_path / "train_semi.csv"),
                        "--out", str(tmp_path / "eval"))
    assert result.exit_code == 0, result.output
    assert "train_semi.csv (whole file): 180 samples" in result.output
    assert f"({correct}/180)" in result.output

    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from mlp_manual.export.onnx import export_file

    export_file(model, tmp_path / "m.onnx")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    (onnx_probabilities,) = session.run(["probabilities"], {"input": new.astype(np.float32)})
    np.testing.assert_allclose(onnx_probabilities, probabilities, atol=1e-5)


def test_cells_and_regression_targets_read_with_a_decimal_comma(tmp_path):
    (tmp_path / "r.csv").write_text("a;b;y\n0,84;-1,5e3;2,5\n1;1,25E-2;-0,125\n  3,0 ;NA;7\n")
    table = read_csv(tmp_path / "r.csv", CsvOptions(target="y", delimiter=";", task="regression", missing="mean",
                                                    decimal=","))
    np.testing.assert_array_equal(table.X, [[0.84, -1500.0], [1.0, 0.0125], [3.0, np.nan]])
    np.testing.assert_array_equal(table.y, [[2.5], [-0.125], [7.0]])
    (tmp_path / "t.csv").write_text("a;b;y\n1.234,5;2;0\n0,5;3;1\n2;4;0\n")  # no thousands separator
    with pytest.raises(DataError, match=r"line 2, column 1 \(a\): '1.234,5' is not a number \(a column of categories"):
        read_csv(tmp_path / "t.csv", CsvOptions(target="y", delimiter=";", decimal=","))


def test_the_decimal_mark_travels_in_the_model_file_and_is_checked_on_loading():
    p = Preprocessing.fit("standardize", np.array([[1.0], [3.0]]), decimal=",")
    spec = p.to_json()
    assert spec["decimal"] == "," and Preprocessing.from_json(spec, 1).decimal == ","
    assert "decimal" not in Preprocessing.fit("standardize", np.array([[1.0], [3.0]])).to_json()
    assert Preprocessing.from_json({"kind": "none"}, 1).decimal == "."  # "." is not written
    with pytest.raises(ValueError, match="decimal must be one of '.', ','"):
        Preprocessing.from_json({**spec, "decimal": ";"}, 1)
