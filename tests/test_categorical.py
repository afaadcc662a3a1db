"""Categorical columns (data.categorical, data.unseen_category): detected or declared, their
categories fitted on the training split, one-hot encoded, stored in the model file and encoded
again by mlp-predict, mlp-eval and the ONNX graph."""

import csv
import io
import os

import numpy as np
import pytest
import yaml
from conftest import invoke_cli

from mlp_manual import load_predictor
from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.predict import main as predict_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.datasets.preprocessing import Preprocessing
from mlp_manual.predict.model_file import read_model

COLOURS, SIZES = ["blue", "green", "red"], ["L", "M", "S"]


def shop_csv(path, n=400, seed=2, holes=0.0):
    """id, colour (text), size (text), weight (a number), label: the label depends on the colour
    and the weight. Returns the rows as written (lists of cells)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        colour, size, weight = COLOURS[rng.integers(3)], SIZES[rng.integers(3)], rng.normal(2.0, 1.0)
        label = "yes" if (colour == "red") ^ (weight > 2.0) else "no"
        cells = [colour, size, f"{weight:.3f}"]
        cells = ["" if rng.random() < holes else c for c in cells]
        rows.append([f"c{i}", *cells, label])
    path.write_text("\n".join(",".join(r) for r in [["id", "colour", "size", "weight", "label"], *rows]) + "\n")
    return rows


def train(tmp_path, out="run", **data):
    config = {"data": {"name": "csv", "path": str(tmp_path / "shop.csv"), "target": "label", "drop": ["id"],
                       "preprocess": "standardize", "test_fraction": 0.2, **data},
              "optimizer": {"lr": 0.01}, "training": {"epochs": 15}}
    (tmp_path / f"{out}.yaml").write_text(yaml.safe_dump(config))
    return invoke_cli(train_main, "--config", str(tmp_path / f"{out}.yaml"), "--out", str(tmp_path / out), "-q")


def predict(model, path, *options):
    result = invoke_cli(predict_main, "--model", str(model), "--input", str(path), *options)
    return result, list(csv.reader(io.StringIO(result.stdout)))


def test_the_encoding_is_scikit_learns_one_hot_encoder_after_its_imputer(rng):
    sklearn = pytest.importorskip("sklearn")
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    levels = (None, ("a", "b", "c", "d"), None)
    X = np.column_stack([rng.normal(size=50), rng.integers(0, 4, 50), rng.normal(size=50) * 10]).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    p = Preprocessing.fit("standardize", X, "median", levels)
    texts = np.array([[None if np.isnan(v) else levels[1][int(v)]] for v in X[:, 1]], dtype=object)
    numbers = X[:, [0, 2]]
    reference = ColumnTransformer([
        ("numbers", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), [0, 1]),
        ("categories", make_pipeline(SimpleImputer(strategy="most_frequent", missing_values=None),
                                     OneHotEncoder(sparse_output=False)), [2])])
    expected = reference.fit_transform(np.column_stack([numbers, texts]).astype(object))
    assert sklearn.__version__ and p.categories == (None, tuple(c for c in "abcd" if c in texts), None)
    np.testing.assert_allclose(p.apply(X), expected.astype(float), rtol=1e-12, atol=1e-12)
    assert p.input_names(("x", "letter", "z")) == ["x", "z", "letter=a", "letter=b", "letter=c", "letter=d"]


def test_text_columns_are_one_hot_encoded_and_travel_to_mlp_predict_mlp_eval_and_onnx(tmp_path):
    rows = shop_csv(tmp_path / "shop.csv", holes=0.05)
    result = train(tmp_path, missing="mean")
    assert result.exit_code == 0, result.output
    model_path = tmp_path / "run" / "model.npz"
    _, info = read_model(model_path)
    p = info.preprocessing
    assert p.categories == (tuple(COLOURS), tuple(SIZES), None) and info.n_features == 7 and info.raw_features == 3
    assert info.feature_names == ("colour", "size", "weight") and p.shift.shape == (1,)
    new = rows[:30]
    (tmp_path / "new.csv").write_text("id,colour,size,weight\n" + "\n".join(",".join(r[:4]) for r in new) + "\n")
    result, out = predict(model_path, tmp_path / "new.csv", "--proba", "--keep", "id")
    assert result.exit_code == 0, result.output
    assert out[0] == ["id", "prediction", "p_no", "p_yes"] and [r[0] for r in out[1:]] == [r[0] for r in new]
    predictor = load_predictor(model_path)
    codes = np.array([[COLOURS.index(r[1]) if r[1] else np.nan, SIZES.index(r[2]) if r[2] else np.nan,
                       float(r[3]) if r[3] else np.nan] for r in new])  # (30, 3)
    probabilities = predictor.predict_proba(codes)
    np.testing.assert_allclose(np.array([r[2:] for r in out[1:]], dtype=float), probabilities, rtol=1e-6)
    accuracy = np.mean([r[1] == row[4] for r, row in zip(out[1:], new)])
    assert accuracy > 0.8, accuracy
    evaluated = invoke_cli(eval_main, "--model", str(model_path), "--data", str(tmp_path / "shop.csv"),
                           "--out", str(tmp_path / "eval"))
    assert evaluated.exit_code == 0 and "accuracy" in evaluated.output, evaluated.output
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from mlp_manual.export.onnx import export_file

    export_file(model_path, tmp_path / "m.onnx")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input", "categories"]
    numbers = np.array([[float(r[3]) if r[3] else np.nan] for r in new], dtype=np.float32)
    texts = np.array([[r[1], r[2]] for r in new], dtype=object)  # raw text, "" where a cell is empty
    onnx_p, label = session.run(["probabilities", "label"], {"input": numbers, "categories": texts})
    assert any("" in r for r in texts.tolist()) and np.isnan(numbers).any()
    np.testing.assert_allclose(onnx_p, probabilities, atol=1e-5)
    assert label.tolist() == [r[1] for r in out[1:]]
    with pytest.raises(Exception, match="Unknown Category"):  # unseen_category: error, in the graph too
        session.run(["label"], {"input": numbers[:1], "categories": np.array([["purple", "S"]], dtype=object)})


def test_an_unseen_category_is_an_error_naming_the_cell_or_all_zeros_as_chosen(tmp_path):
    shop_csv(tmp_path / "shop.csv")
    assert train(tmp_path).exit_code == 0
    assert train(tmp_path, "zeros", unseen_category="zeros").exit_code == 0
    (tmp_path / "new.csv").write_text("colour,size,weight\nred,S,1.5\npurple,S,1.5\n")
    result, _ = predict(tmp_path / "run" / "model.npz", tmp_path / "new.csv")
    assert result.exit_code == 1 and len(result.output.splitlines()) == 1
    assert "new.csv: line 3, column 1 (colour): 'purple' is not one of the categories the model was trained on " \
           "('blue', 'green', 'red') (the model was trained with data.unseen_category: error" in result.output
    result, out = predict(tmp_path / "zeros" / "model.npz", tmp_path / "new.csv", "--proba")
    assert result.exit_code == 0, result.output
    predictor = load_predictor(tmp_path / "zeros" / "model.npz")
    zeros = predictor.predict_proba(np.array([[-1.0, 2.0, 1.5]]))  # -1: unseen, no colour column set
    np.testing.assert_allclose(np.array(out[2][1:], dtype=float), zeros[0], rtol=1e-6)
    assert out[1] != out[2]
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from mlp_manual.export.onnx import export_file

    export_file(tmp_path / "zeros" / "model.npz", tmp_path / "z.onnx")
    session = ort.InferenceSession(str(tmp_path / "z.onnx"), providers=["CPUExecutionProvider"])
    p, = session.run(["probabilities"], {"input": np.array([[1.5]], dtype=np.float32),
                                         "categories": np.array([["purple", "S"]], dtype=object)})
    np.testing.assert_allclose(p, zeros, atol=1e-5)


def test_categories_are_fitted_on_the_training_split_only(tmp_path):
    shop_csv(tmp_path / "shop.csv", n=60)
    (tmp_path / "val.csv").write_text("id,colour,size,weight,label\nv1,red,XL,1.0,yes\nv2,blue,S,2.0,no\n")
    result = train(tmp_path, val_path=str(tmp_path / "val.csv"))
    assert result.exit_code == 1 and len(result.output.splitlines()) == 1
    assert "the val split has the category 'XL' in 'size', which the training split lacks ('L', 'M', 'S'); set " \
           "data.unseen_category: zeros to read such a value as all zeros" in result.output
    assert train(tmp_path, val_path=str(tmp_path / "val.csv"), unseen_category="zeros").exit_code == 0
    _, info = read_model(tmp_path / "run" / "model.npz")
    assert info.preprocessing.categories[1] == tuple(SIZES)  # XL, only in the validation file, is no category


def test_declared_columns_are_categories_even_when_they_are_numbers(tmp_path):
    (tmp_path / "shop.csv").write_text("id,zone,weight,label\n" + "\n".join(
        f"{i},{10 * (i % 3)},{i % 7},{'yes' if i % 3 == 1 else 'no'}" for i in range(60)) + "\n")
    assert train(tmp_path, categorical=["zone"]).exit_code == 0
    _, info = read_model(tmp_path / "run" / "model.npz")
    assert info.preprocessing.categories == (("0", "10", "20"), None)
    shop_csv(tmp_path / "shop.csv", n=60)
    result = train(tmp_path, "listed", categorical=["colour"])
    assert result.exit_code == 1
    assert "line 2, column 3 (size): 'L' is not a number (a column of categories? name it in data.categorical)" \
           in result.output
    result = train(tmp_path, "wrong", categorical=["label"])
    assert result.exit_code == 1 and "data.categorical names 'label', which is not a feature column" in result.output


def test_an_id_of_text_is_refused_as_a_category_and_a_typo_among_numbers_is_named(tmp_path):
    shop_csv(tmp_path / "shop.csv", n=300)
    (tmp_path / "empty.yaml").write_text("")
    result = invoke_cli(train_main, "--config", str(tmp_path / "empty.yaml"), "--set", "data.name=csv", "--set",
                        f"data.path={tmp_path / 'shop.csv'}", "--set", "data.target=label", "--out",
                        str(tmp_path / "ids"), "-q")
    assert result.exit_code == 1 and len(result.output.splitlines()) == 1
    assert "'id' holds text with 300 different values in 300 rows, too many to be categories (an ID or free " \
           "text?); leave it out with data.drop" in result.output
    lines = (tmp_path / "shop.csv").read_text().splitlines()
    lines[5] = lines[5].rsplit(",", 2)[0] + ",2.5kg," + lines[5].rsplit(",", 1)[1]
    (tmp_path / "shop.csv").write_text("\n".join(lines) + "\n")
    result = train(tmp_path)
    assert "line 6, column 4 (weight): '2.5kg' is not a number (a column of categories? name it in " \
           "data.categorical)" in result.output


def test_damaged_categories_in_a_model_file_are_refused():
    spec = Preprocessing(categories=(("a", "b"), None)).to_json()
    assert Preprocessing.from_json(spec, 3).categories == (("a", "b"), None)
    for damaged, message in [({**spec, "categories": [["a", "a"], None]}, "categories must be a list"),
                             ({**spec, "unseen": "ignore"}, "unseen must be one of error, zeros"),
                             (spec, "categories must give 4 model inputs")]:
        with pytest.raises(ValueError, match=message):
            Preprocessing.from_json(damaged, 4 if damaged is spec else 3)


def test_a_headerless_file_with_a_text_column_keeps_its_first_row(tmp_path):
    (tmp_path / "plain.csv").write_text("".join(f"{i % 5},{'xy'[i % 2]},{i % 2}\n" for i in range(40)))
    (tmp_path / "empty.yaml").write_text("")
    result = invoke_cli(train_main, "--config", str(tmp_path / "empty.yaml"), "--set", "data.name=csv", "--set",
                        f"data.path={tmp_path / 'plain.csv'}", "--set", "data.header=false", "--set",
                        "data.val_fraction=0", "--set", "optimizer.lr=0.05", "--out", str(tmp_path / "run"), "-q")
    assert result.exit_code == 0, result.output
    (tmp_path / "new.csv").write_text("1,x\n2,y\n")  # the first row is text in a categorical column, not a header
    result, out = predict(tmp_path / "run" / "model.npz", tmp_path / "new.csv")
    assert result.exit_code == 0 and out == [["prediction"], ["0"], ["1"]], result.output


def test_validation_and_evaluated_files_are_read_by_column_name(tmp_path):
    rows = shop_csv(tmp_path / "shop.csv", n=200)
    header = ["id", "colour", "size", "weight", "label"]
    order = [4, 3, 0, 2, 1]  # label, weight, id, size, colour
    for name, columns in (("val.csv", range(5)), ("val_reordered.csv", order)):
        (tmp_path / name).write_text("\n".join(",".join(r[k] for k in columns) for r in [header, *rows[:40]]) + "\n")
    assert train(tmp_path, "plain", val_path=str(tmp_path / "val.csv")).exit_code == 0
    assert train(tmp_path, "reordered", val_path=str(tmp_path / "val_reordered.csv")).exit_code == 0
    metrics = [(tmp_path / run / "metrics.csv").read_text().splitlines() for run in ("plain", "reordered")]
    assert [r.rsplit(",", 1)[0] for r in metrics[0]] == [r.rsplit(",", 1)[0] for r in metrics[1]]
    evaluated = [invoke_cli(eval_main, "--model", str(tmp_path / "plain" / "model.npz"), "--data",
                            str(tmp_path / name), "--out", str(tmp_path / "eval")).output.splitlines()[0]
                 for name in ("val.csv", "val_reordered.csv")]
    assert evaluated[0].split(":", 1)[1] == evaluated[1].split(":", 1)[1] and "accuracy" in evaluated[0]
    (tmp_path / "no_size.csv").write_text("id,colour,weight,label\nx,red,1.0,yes\n")
    result = train(tmp_path, "lacking", val_path=str(tmp_path / "no_size.csv"))
    assert result.exit_code == 1 and "no_size.csv (data.val_path): has no column 'size', a feature of " in result.output


def test_a_warm_start_from_other_categories_is_refused(tmp_path):
    shop_csv(tmp_path / "shop.csv")
    assert train(tmp_path).exit_code == 0
    text = (tmp_path / "shop.csv").read_text().replace("green", "amber")
    (tmp_path / "shop.csv").write_text(text)
    result = invoke_cli(train_main, "--config", str(tmp_path / "run.yaml"), "--out", str(tmp_path / "again"),
                        "--init-from", str(tmp_path / "run" / "model.npz"), "-q")
    assert result.exit_code == 1 and "was trained on other categories (blue, green, red; L, M, S) than this data " \
                                      "has (amber, blue, red; L, M, S)" in result.output


def test_one_hot_columns_beyond_the_memory_a_run_may_use_are_refused_before_they_are_made(tmp_path):
    import resource
    import subprocess
    import sys

    (tmp_path / "wide.csv").write_text("x,code,y\n" + "".join(f"{i % 10},k{i},{i % 2}\n" for i in range(6000)))
    (tmp_path / "c.yaml").write_text("data: {name: csv, path: wide.csv, categorical: [code], unseen_category: zeros, "
                                     "val_fraction: 0.2}\ntraining: {epochs: 1}\n")
    limit = 1 << 30  # 1 GiB of address space: a run may use 512 MiB; 6,000 rows of 4,801 inputs need more

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run([sys.executable, "-m", "mlp_manual.cli.train", "--config", "c.yaml", "--out", "run"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=limited,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 1, done.stderr
    assert done.stderr == ("Error: wide.csv (data.path): 'code' has 4,800 categories, one model input each; the 4,801 "
                           "inputs of 6,000 rows need about 691 MB, more than the 537 MB a run may use (half the "
                           "address-space limit, ulimit -v): leave the column out with data.drop, or group its rare "
                           "values into one\n")
