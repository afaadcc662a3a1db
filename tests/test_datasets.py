"""Generated datasets, the CSV reader, splits, preprocessing and data validation."""

import json
import re

import numpy as np
import pytest

from mlp_manual.config import DataConfig
from mlp_manual.datasets import load_dataset
from mlp_manual.datasets.csvfile import CsvOptions, read_csv
from mlp_manual.datasets.dataset import Dataset, check_arrays, split
from mlp_manual.datasets.preprocessing import Preprocessing
from mlp_manual.errors import DataError


@pytest.mark.parametrize("name, features, classes", [("xor", 2, 2), ("moons", 2, 2), ("circles", 2, 2),
                                                      ("spirals", 2, 3), ("blobs", 2, 3), ("sine", 1, None)])
def test_generated_datasets(name, features, classes):
    ds = load_dataset(DataConfig(name=name, val_fraction=0.0 if name == "xor" else 0.2), np.random.default_rng(0))
    assert ds.n_features == features and ds.n_classes == classes and ds.X_train.dtype == np.float32
    again = load_dataset(DataConfig(name=name, val_fraction=0.0 if name == "xor" else 0.2), np.random.default_rng(0))
    assert np.array_equal(ds.X_train, again.X_train)


def test_xor_first_copy_is_the_exact_four_points():
    ds = load_dataset(DataConfig(name="xor", copies=3, noise=0.2, val_fraction=0), np.random.default_rng(0))
    assert np.array_equal(ds.X_train[:4], [[0, 0], [0, 1], [1, 0], [1, 1]]) and len(ds.X_train) == 12
    assert list(ds.y_train[:4]) == [0, 1, 1, 0]


def test_stratified_split_keeps_class_proportions():
    y = np.repeat([0, 1, 2], [50, 30, 20])
    X = np.arange(100.0)[:, None]
    _, ytr, _, yva = split(X, y, 0.2, np.random.default_rng(0), stratify=True)
    assert list(np.bincount(yva)) == [10, 6, 4] and list(np.bincount(ytr)) == [40, 24, 16]


def test_standardize_uses_training_statistics_only():
    ds = load_dataset(DataConfig(name="moons", preprocess="standardize", val_fraction=0.5), np.random.default_rng(0),
                      np.float64)
    assert np.allclose(ds.X_train.mean(0), 0) and np.allclose(ds.X_train.std(0), 1)
    assert not np.allclose(ds.X_val.mean(0), 0)


def test_the_fitted_preprocessing_is_recorded_and_reapplies_to_raw_rows_exactly(tmp_path):
    path = tmp_path / "d.csv"
    rows = [f"{i % 7 + 0.25 * i},{3.0},{(i * 37) % 11},{i % 2}" for i in range(40)]  # feature b is constant
    path.write_text("a,b,c,label\n" + "\n".join(rows) + "\n")
    raw = read_csv(path).X
    for kind in ("none", "scale", "standardize"):
        ds = load_dataset(DataConfig(name="csv", path=str(path), preprocess=kind, val_fraction=0), np.random.default_rng(0),
                          np.float64)
        p = ds.preprocessing
        assert p.kind == kind and np.array_equal(p.apply(raw), ds.X_train)
        again = Preprocessing.from_json(json.loads(json.dumps(p.to_json())), 3)  # through the model file's JSON
        assert np.array_equal(again.apply(raw), ds.X_train)
        assert np.allclose(p.invert(ds.X_train), raw)
    assert p.scale[1] == 1.0 and np.all(ds.X_train[:, 1] == 0)  # a constant feature is only centred
    assert Preprocessing.fit("scale", raw).to_json() == {"kind": "scale", "shift": 0.0, "scale": raw.max()}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shift, scale", [(0.0, 255.0), (3.0, 250.0), (0.0, 16.0)])
def test_scaling_bytes_through_a_table_gives_the_numbers_of_the_formula(dtype, shift, scale):
    """Every byte value, scaled as images are, equals (x - shift) / scale computed in float64
    and then cast, bit for bit."""
    X = np.arange(256, dtype=np.uint8).reshape(16, 16)
    p = Preprocessing("scale", shift, scale)
    expected = ((X.astype(np.float64) - shift) / scale).astype(dtype)
    got = p.apply(X, dtype)
    assert got.dtype == dtype and got.shape == X.shape
    assert np.array_equal(got.view(f"u{got.itemsize}"), expected.view(f"u{got.itemsize}"))
    assert np.array_equal(p.apply(X), (X.astype(np.float64) - shift) / scale)  # float64 without a dtype


@pytest.mark.parametrize("spec, message", [
    ({"kind": "minmax"}, "kind must be one of none, scale, standardize"),
    ({"kind": "none", "shift": 1}, "none has keys ['kind', 'shift']"),
    ({"kind": "scale", "shift": 0.0, "scale": 0.0}, "scale must hold finite numbers > 0"),
    ({"kind": "scale", "shift": "0", "scale": 1.0}, "shift must hold finite numbers"),
    ({"kind": "standardize", "shift": [0.0], "scale": [1.0, 1.0]}, "shift must be a list of 2 numbers, one per number column"),
    ({"kind": "standardize", "shift": [0.0, 1e400], "scale": [1.0, 1.0]}, "shift must hold finite numbers"),
])
def test_a_damaged_preprocessing_description_is_refused(spec, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Preprocessing.from_json(spec, 2)


def test_scale_maps_training_range_to_unit_interval():
    ds = load_dataset(DataConfig(name="blobs", preprocess="scale"), np.random.default_rng(0), np.float64)
    assert ds.X_train.min() == 0.0 and ds.X_train.max() == 1.0


def test_csv_with_header_target_by_name_and_text_labels(tmp_path):
    path = tmp_path / "iris.csv"
    path.write_text("a,b,species\n1,2,setosa\n3,4,virginica\n5,6,setosa\n")
    X, y, names, features, target, *_ = read_csv(path, CsvOptions(target="species"))
    assert X.tolist() == [[1, 2], [3, 4], [5, 6]] and y.tolist() == [0, 1, 0] and names == ["setosa", "virginica"]
    assert features == ("a", "b") and target == "species"
    ds = load_dataset(DataConfig(name="csv", path=str(path), target="species", val_fraction=0), np.random.default_rng(0))
    assert ds.n_classes == 2 and ds.class_names == ("setosa", "virginica")
    assert ds.feature_names == ("a", "b") and ds.target_names == ("species",)


def test_csv_regression_and_target_index(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("0.5,1,2\n1.5,3,4\n")
    X, y, _, features, target, *_ = read_csv(path, CsvOptions(target=0, header=False, task="regression"))
    assert X.tolist() == [[1, 2], [3, 4]] and y.tolist() == [[0.5], [1.5]] and features is target is None


@pytest.mark.parametrize("text, kwargs, message", [
    ("a,b\n1,2\n3\n", {}, "line 3 has 1 columns, expected 2"),
    ("a,b\n", {}, "no data rows"),
    ("x,y\n1,0\n", {"header": False}, "line 1, column 1: 'x' is not a number (is the first row a header?"),
    ("a,b\n1,0.5\n", {}, "line 2: class label '0.5' is not an integer >= 0"),
    ("a,b\n1,-1\n", {}, "line 2: class label '-1' is not an integer >= 0"),
    ("a,b\n1,2\n", {"target": "c"}, "no column named 'c'; columns: a, b"),
    ("a,b\n1,2\n", {"target": 5}, "target column 5 is out of range for 2 columns"),
])
def test_csv_errors_name_the_line(tmp_path, text, kwargs, message):
    path = tmp_path / "d.csv"
    path.write_text(text)
    with pytest.raises(DataError) as e:
        read_csv(path, CsvOptions(**kwargs))
    assert message in str(e.value) and str(path) in str(e.value)


def test_missing_csv_file(tmp_path):
    with pytest.raises(DataError, match="no such data file"):
        read_csv(tmp_path / "nope.csv")


def test_non_finite_inputs_and_out_of_range_labels_are_named():
    X = np.ones((3, 2))
    X[1, 1] = np.nan
    with pytest.raises(DataError, match="1 non-finite values .* the first at row 1, feature 1"):
        check_arrays("d", X, np.zeros(3, dtype=int), 2, "train")
    with pytest.raises(DataError, match=r"labels must lie in 0..1, found 0..2"):
        check_arrays("d", np.ones((3, 2)), np.array([0, 1, 2]), 2, "train")


def test_csv_with_given_validation_and_test_files(tmp_path):
    for name, rows in (("train", "1,2,a\n3,4,b\n5,6,a\n7,8,b\n"), ("val", "1,1,b\n"), ("test", "2,2,a\n0,0,b\n")):
        (tmp_path / f"{name}.csv").write_text("x,y,label\n" + rows)
    cfg = DataConfig(name="csv", path=str(tmp_path / "train.csv"), val_path=str(tmp_path / "val.csv"),
                     test_path=str(tmp_path / "test.csv"), target="label")
    ds = load_dataset(cfg, np.random.default_rng(0))
    assert len(ds.X_train) == 4 and ds.y_val.tolist() == [1] and ds.y_test.tolist() == [0, 1]
    (tmp_path / "val.csv").write_text("x,y,label\n1,1,c\n")
    with pytest.raises(DataError, match=r"val.csv: class labels \['c'\] do not occur in"):
        load_dataset(cfg, np.random.default_rng(0))


def test_a_spreadsheet_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffsepal,petal,species\n1,2,a\n3,4,b\n".encode("utf-8"))
    X, y, classes, features, *_ = read_csv(path, CsvOptions(target="species"))
    assert X.shape == (2, 2) and classes == ["a", "b"] and features == ("sepal", "petal")
    path.write_bytes("\ufeffsepal,petal\n1,2\n3,4\n".encode("utf-8"))
    X, y, *_ = read_csv(path, CsvOptions(target="sepal", task="regression"))
    assert y[:, 0].tolist() == [1.0, 3.0] and X[:, 0].tolist() == [2.0, 4.0]


def test_classes_are_called_by_name_or_by_number():
    X, y = np.zeros((2, 1)), np.array([0, 1])
    assert Dataset("d", X, y, n_classes=3).class_names_or_numbers == ("0", "1", "2")
    assert Dataset("d", X, y, n_classes=2, class_names=("cat", "dog")).class_names_or_numbers == ("cat", "dog")


@pytest.mark.parametrize("name, key", [("spirals", "arms"), ("blobs", "centers")])
def test_more_classes_than_points_is_refused_before_generating(name, key):
    """Each class would be a Python loop turn or an array row: a huge count must not reach them."""
    with pytest.raises(DataError) as e:
        load_dataset(DataConfig(name=name, n_samples=300, **{key: 10**12}), np.random.default_rng(0))
    assert str(e.value) == (f"{name}: data.{key} 1000000000000 is more than the 300 points to generate "
                            "(data.n_samples); every class needs a point")


def test_a_value_beyond_float32_is_refused_in_float32_and_read_in_float64(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n1,2,0\n1e39,4,1\n3,5,0\n-2,1,1\n")
    cfg = DataConfig(name="csv", path=str(path), val_fraction=0, preprocess="standardize")
    with pytest.raises(DataError, match=re.escape("line 3, column 1 (a): '1e39' is beyond float32's range "
                                                  "(magnitudes up to 3.4e+38): it cannot be trained on in float32")):
        load_dataset(cfg, np.random.default_rng(0), np.float32)
    ds = load_dataset(cfg, np.random.default_rng(0), np.float64)
    assert np.isfinite(ds.X_train).all() and ds.X_train.dtype == np.float64


@pytest.mark.parametrize("kind, message", [
    ("standardize", "feature 2 (b) overflows float64 once preprocessed (data.preprocess: standardize), in the train "
                    "split"),
    ("scale", "the training values span too wide a range for data.preprocess: scale (their largest minus their "
              "smallest overflows float64)")])
def test_statistics_that_overflow_float64_name_the_feature(tmp_path, kind, message, recwarn):
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n1,1.5e308,0\n2,-1.5e308,1\n3,1e308,0\n4,-1e308,1\n")
    cfg = DataConfig(name="csv", path=str(path), val_fraction=0, preprocess=kind)
    with pytest.raises(DataError, match=re.escape(message)):
        load_dataset(cfg, np.random.default_rng(0), np.float64)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]  # no numpy warning leaks
