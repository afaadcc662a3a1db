import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from datafiles import fake_mnist

from mlp_manual.config import DataConfig
from mlp_manual.datasets import LOADERS, datadir, load_dataset
from mlp_manual.datasets.fetch import EXPECTED
from mlp_manual.datasets.idx import read_bytes, read_images_labels
from mlp_manual.datasets.real import DIGITS_FILE, FASHION_NAMES, MNIST1D_FILE
from mlp_manual.errors import DataError

SHARED = os.environ.get(datadir.ENV_VAR)


def test_every_real_dataset_is_registered():
    assert {"digits", "mnist1d", "mnist", "fashion_mnist"} <= set(LOADERS)


def test_shipped_files_live_inside_the_package():
    package = Path(__file__).resolve().parents[1] / "mlp_manual"
    assert DIGITS_FILE.parent == MNIST1D_FILE.parent == package / "datasets" / "files"
    assert DIGITS_FILE.is_file() and MNIST1D_FILE.is_file()


def test_digits_default_split_is_stratified_and_seeded():
    cfg = DataConfig(name="digits", val_fraction=0.0)
    a = load_dataset(cfg, np.random.default_rng(3))
    b = load_dataset(cfg, np.random.default_rng(3))
    assert a.X_train.shape == (1438, 64) and a.X_test.shape == (359, 64)
    assert a.image_shape == (8, 8) and a.n_classes == 10 and a.X_train.max() == 16
    np.testing.assert_array_equal(a.X_test, b.X_test)
    counts = np.bincount(a.y_test, minlength=10)
    assert counts.min() >= 35 and counts.max() <= 37  # 20% of 174..183 per class


def test_digits_test_fraction_and_validation_come_from_the_config():
    ds = load_dataset(DataConfig(name="digits", test_fraction=0.5, val_fraction=0.25), np.random.default_rng(0))
    assert len(ds.X_test) == 898 and len(ds.X_val) + len(ds.X_train) == 899


def test_mnist1d_keeps_its_official_split():
    ds = load_dataset(DataConfig(name="mnist1d", val_fraction=0.0, test_fraction=0.3), np.random.default_rng(0))
    assert ds.X_train.shape == (4000, 40) and ds.X_test.shape == (1000, 40)
    assert ds.y_train.dtype == np.int64 and ds.image_shape is None


def test_data_dir_order(clean_env, monkeypatch):
    assert [why for _, why in datadir.candidate_dirs()] == ["./data", "user cache"]
    assert datadir.user_cache_dir() == clean_env / "cache" / "mlp-manual"
    monkeypatch.setenv(datadir.ENV_VAR, "/env/dir")
    assert [str(p) for p, _ in datadir.candidate_dirs()] == ["/env/dir", "data", str(clean_env / "cache" / "mlp-manual")]
    assert datadir.candidate_dirs("/opt/d") == [(Path("/opt/d"), "--data-dir")]
    assert datadir.download_dir() == Path("/env/dir") and datadir.download_dir("/opt/d") == Path("/opt/d")


def test_cache_defaults_to_home(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(datadir.ENV_VAR, raising=False)
    assert datadir.user_cache_dir() == tmp_path / ".cache" / "mlp-manual"
    assert datadir.download_dir() == datadir.user_cache_dir()


def test_first_directory_holding_the_dataset_wins(clean_env, monkeypatch):
    fake_mnist(clean_env / "cache" / "mlp-manual" / "mnist")
    assert datadir.locate("mnist")["t10k-images-idx3-ubyte"].parent == Path(clean_env / "cache" / "mlp-manual" / "mnist")
    fake_mnist(clean_env / "data" / "mnist", gz=False)
    assert datadir.locate("mnist")["t10k-images-idx3-ubyte"] == Path("data/mnist/t10k-images-idx3-ubyte")
    monkeypatch.setenv(datadir.ENV_VAR, str(clean_env / "env"))
    fake_mnist(clean_env / "env" / "mnist")
    assert datadir.locate("mnist")["train-labels-idx1-ubyte"] == clean_env / "env" / "mnist" / "train-labels-idx1-ubyte.gz"


def test_an_incomplete_folder_does_not_count(clean_env):
    folder = fake_mnist(clean_env / "data" / "mnist")
    (folder / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DataError, match="mnist is not downloaded"):
        datadir.locate("mnist")


def test_missing_dataset_says_how_to_fetch_it_and_where_it_looked(clean_env):
    with pytest.raises(DataError) as e:
        load_dataset(DataConfig(name="fashion_mnist"), np.random.default_rng(0))
    message = str(e.value)
    assert "\n" not in message
    assert "run `mlp-data fetch fashion_mnist` to get it" in message
    assert "data/fashion_mnist (./data)" in message and "cache/mlp-manual/fashion_mnist (user cache)" in message


def test_explicit_data_dir_is_the_only_place_looked_at(clean_env):
    fake_mnist(clean_env / "data" / "mnist")
    with pytest.raises(DataError, match=r"run `mlp-data fetch mnist --data-dir /nowhere` .*looked in /nowhere/mnist \(--data-dir\)\)$"):
        load_dataset(DataConfig(name="mnist", data_dir="/nowhere"), np.random.default_rng(0))


def test_mnist_loader_flattens_and_keeps_the_official_split(clean_env):
    fake_mnist(clean_env / "d" / "fashion_mnist", n_train=10, n_test=5, labels_train=[0, 1] * 5)
    cfg = DataConfig(name="fashion_mnist", data_dir=str(clean_env / "d"), val_fraction=0.2, preprocess="scale")
    ds = load_dataset(cfg, np.random.default_rng(0))
    assert ds.X_train.shape == (8, 784) and ds.X_val.shape == (2, 784) and ds.X_test.shape == (5, 784)
    assert ds.image_shape == (28, 28) and ds.class_names == FASHION_NAMES and ds.X_train.dtype == np.float32
    assert 0 <= ds.X_test.min() and ds.X_test.max() <= 1.0 + 1e-6


def test_labels_above_nine_are_rejected(clean_env):
    fake_mnist(clean_env / "data" / "mnist", labels_train=[1, 2, 3, 4, 5, 12])
    with pytest.raises(DataError, match=r"train-labels-idx1-ubyte.gz: labels must lie in 0..9, found 12"):
        load_dataset(DataConfig(name="mnist"), np.random.default_rng(0))


def _shared_mnist() -> Path | None:
    folder = Path(SHARED) / "mnist" if SHARED else None
    return folder if folder and (folder / "t10k-images-idx3-ubyte.gz").is_file() else None


@pytest.mark.skipif(_shared_mnist() is None, reason=f"real MNIST not found through ${datadir.ENV_VAR}")
def test_real_mnist_test_set_parses_and_matches_its_checksums():
    folder = _shared_mnist()
    sums = dict(line.split()[::-1] for line in (folder / "SHA256SUMS").read_text().splitlines() if line.strip())
    for stem in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        assert hashlib.sha256(read_bytes(folder / f"{stem}.gz")).hexdigest() == sums[stem]
    images, labels = read_images_labels(folder / "t10k-images-idx3-ubyte.gz", folder / "t10k-labels-idx1-ubyte.gz")
    assert images.shape == (10000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


@pytest.mark.skipif(_shared_mnist() is None, reason=f"real MNIST not found through ${datadir.ENV_VAR}")
def test_packaged_mnist_checksums_are_the_published_ones():
    sums = (_shared_mnist() / "SHA256SUMS").read_text().split()
    assert {stem: e.sha256 for stem, e in EXPECTED["mnist"].items()} == dict(zip(sums[1::2], sums[0::2]))
    assert all(e.size == len(read_bytes(_shared_mnist() / f"{stem}.gz")) for stem, e in EXPECTED["mnist"].items()
               if stem.startswith("t10k"))
