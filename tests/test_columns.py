"""Choosing a CSV's feature columns (data.columns, data.drop) and copying an ID column into
mlp-predict's output (--keep)."""

import csv
import io

import numpy as np
import pytest
import yaml
from conftest import invoke_cli
from datafiles import FLOWER_FEATURES, flowers_csv

from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.predict import main as predict_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.datasets.csvfile import CsvOptions, read_csv
from mlp_manual.errors import DataError
from mlp_manual.predict.model_file import read_model


def with_id(path, first_id=5000):
    """Put an ``id`` column (distinct integers, useless as a feature) first in the CSV at ``path``."""
    lines = path.read_text().splitlines()
    path.write_text("\n".join(["id," + lines[0]] + [f"{first_id + i},{line}" for i, line in enumerate(lines[1:])])
                    + "\n")


@pytest.fixture(scope="module")
def flowers_with_ids(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ids")
    for name, n, seed in (("train.csv", 150, 1), ("test.csv", 60, 2)):
        flowers_csv(folder / name, n, seed=seed)
        with_id(folder / name)
    return folder


def train(folder, out, **data):
    config = {"data": {"name": "csv", "path": str(folder / "train.csv"), "test_path": str(folder / "test.csv"),
                       "target": "species", "preprocess": "standardize", **data},
              "model": {"layers": [{"type": "linear", "units": 16}, "relu", {"type": "linear"}]},
              "optimizer": {"lr": 0.02}, "training": {"epochs": 20, "batch_size": 16}}
    (folder / f"{out}.yaml").write_text(yaml.safe_dump(config))
    return invoke_cli(train_main, "--config", str(folder / f"{out}.yaml"), "--out", str(folder / out), "-q")


def predict(*args):
    result = invoke_cli(predict_main, *map(str, args))
    assert result.exit_code == 0, result.output
    return list(csv.reader(io.StringIO(result.stdout)))


def test_a_dropped_id_column_is_not_a_feature_and_prediction_ignores_it(flowers_with_ids, tmp_path):
    folder = flowers_with_ids
    assert train(folder, "dropped", drop=["id"]).exit_code == 0
    _, info = read_model(folder / "dropped" / "model.npz")
    assert info.feature_names == tuple(FLOWER_FEATURES)
    flowers_csv(tmp_path / "plain.csv", 60, seed=2)  # the test rows without their IDs
    with_ids = predict("--model", folder / "dropped" / "model.npz", "--input", folder / "test.csv")
    assert with_ids == predict("--model", folder / "dropped" / "model.npz", "--input", tmp_path / "plain.csv")
    evaluated = invoke_cli(eval_main, "--model", str(folder / "dropped" / "model.npz"), "--data",
                           str(folder / "test.csv"), "--out", str(tmp_path / "eval"))
    assert evaluated.exit_code == 0 and "accuracy" in evaluated.output


def test_without_drop_the_id_is_a_feature(flowers_with_ids):
    assert train(flowers_with_ids, "kept").exit_code == 0
    _, info = read_model(flowers_with_ids / "kept" / "model.npz")
    assert info.feature_names == ("id", *FLOWER_FEATURES)


def test_columns_choose_the_features_in_their_order(flowers_with_ids):
    chosen = ["stem_mm", "petal_length"]
    assert train(flowers_with_ids, "chosen", columns=chosen).exit_code == 0
    _, info = read_model(flowers_with_ids / "chosen" / "model.npz")
    assert info.feature_names == tuple(chosen)
    table = read_csv(flowers_with_ids / "train.csv", CsvOptions(target="species", columns=(2, "petal_length")))
    full = read_csv(flowers_with_ids / "train.csv", CsvOptions(target="species"))
    assert table.feature_names == (full.feature_names[2], "petal_length")  # full: id, then the flowers' features
    assert np.array_equal(table.X, full.X[:, [2, 1 + FLOWER_FEATURES.index("petal_length")]])


@pytest.mark.parametrize("options, message", [
    ({"drop": ["idd"]}, "data.drop names no column of the file: 'idd' (did you mean 'id'?)"),
    ({"columns": ["hue", "nope"]}, "data.columns names no column of the file: 'nope'; columns: id, "),
    ({"drop": ["species"]}, "data.drop holds the target column 'species' (data.target)"),
    ({"columns": ["hue", "species"]}, "data.columns holds the target column 'species' (data.target)"),
    ({"columns": ["hue", 4]}, "data.columns names 'hue' twice"),
    ({"columns": ["hue"], "drop": ["id"]}, "give data.columns (the features) or data.drop (what is not a feature), "
                                           "not both"),
    ({"columns": []}, "data.columns is empty"),
    ({"drop": [0, 1, 2, 3, 4]}, "data.drop leaves no feature column"),
    ({"drop": [9]}, "data.drop column 9 is out of range for 6 columns"),
])
def test_a_wrong_column_is_one_line_naming_the_key(flowers_with_ids, options, message):
    result = train(flowers_with_ids, "wrong", **options)
    assert result.exit_code == 1 and message in result.output and len(result.output.splitlines()) == 1


def test_a_name_needs_a_header_and_an_item_must_be_a_name_or_an_index(tmp_path):
    path = tmp_path / "noheader.csv"
    path.write_text("1,2,3,0\n4,5,6,1\n")
    with pytest.raises(DataError, match="data.drop names column 'id', but the file has no header"):
        read_csv(path, CsvOptions(header=False, drop=("id",)))
    assert read_csv(path, CsvOptions(header=False, drop=(0,))).X.tolist() == [[2, 3], [5, 6]]
    (tmp_path / "c.yaml").write_text("data: {name: csv, path: noheader.csv, drop: [1.5]}\n")
    result = invoke_cli(train_main, "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "r"))
    assert result.exit_code == 1 and "data.drop[0] must be a column name or index, got 1.5" in result.output


def test_keep_copies_the_id_column_first(flowers_with_ids, tmp_path):
    folder = flowers_with_ids
    assert train(folder, "for_keep", drop=["id"]).exit_code == 0
    model = folder / "for_keep" / "model.npz"
    plain = predict("--model", model, "--input", folder / "test.csv", "--proba")
    kept = predict("--model", model, "--input", folder / "test.csv", "--proba", "--keep", "id", "--keep", "hue")
    ids = [line.split(",")[0] for line in (folder / "test.csv").read_text().splitlines()]
    hues = [line.split(",")[4] for line in (folder / "test.csv").read_text().splitlines()]
    assert [row[:2] for row in kept] == [[i, h] for i, h in zip(ids, hues)]  # header names, then the cells as they are
    assert [row[2:] for row in kept] == plain
    wrong = invoke_cli(predict_main, "--model", str(model), "--input", str(folder / "test.csv"), "--keep", "idx")
    assert wrong.exit_code == 1 and "--keep names no column of the file: 'idx' (did you mean 'id'?)" in wrong.output
    np.save(tmp_path / "rows.npy", np.zeros((2, 4)))
    npy = invoke_cli(predict_main, "--model", str(model), "--input", str(tmp_path / "rows.npy"), "--keep", "0")
    assert npy.exit_code == 1 and "a .npy array has no columns to keep (--keep); give a CSV" in npy.output
