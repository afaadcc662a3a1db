"""data.augment_shift: training images moved at random by a few pixels, seeded by (seed, epoch,
batch); only training batches; a resumed run draws the same shifts."""

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import interrupted_run
from datafiles import fake_mnist

from mlp_manual.cli.train import main
from mlp_manual.config import load_config
from mlp_manual.datasets.augment import RandomAugment, shift_images
from mlp_manual.runs.run import resume_run, train_run
from mlp_manual.training.experiment import prepare, training_plan
from mlp_manual.training.trainer import Trainer, evaluate

DIGITS = ["training.epochs=4", "training.batch_size=64", "data.augment_shift=1", "optimizer.lr=0.01",
          "model.layers=[{type: linear, units: 16}, relu, {type: linear}]"]


def moved_by_roll(image, dy, dx, background):
    """The reference: np.roll, then the rows and columns that wrapped round set to background."""
    out = np.roll(image, (dy, dx), axis=(0, 1))
    if dy > 0:
        out[:dy] = background[:dy]
    elif dy < 0:
        out[dy:] = background[dy:]
    if dx > 0:
        out[:, :dx] = background[:, :dx]
    elif dx < 0:
        out[:, dx:] = background[:, dx:]
    return out


def test_each_row_is_moved_by_its_own_shift_and_uncovered_pixels_are_background():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5 * 7))  # images of 5 x 7
    background = rng.standard_normal(5 * 7)
    dy, dx = rng.integers(-3, 4, size=(2, 40))
    moved = shift_images(X, (5, 7), dy, dx, background)
    for i in range(40):
        expected = moved_by_roll(X[i].reshape(5, 7), dy[i], dx[i], background.reshape(5, 7))
        np.testing.assert_array_equal(moved[i].reshape(5, 7), expected)
    assert not np.shares_memory(moved, X)


def test_the_shifts_depend_on_seed_epoch_and_batch_only():
    X = np.random.default_rng(1).random((64, 64)).astype(np.float32)
    shift = RandomAugment(2, False, (8, 8), np.zeros(64), seed=3)
    np.testing.assert_array_equal(shift(X, 1, 5), RandomAugment(2, False, (8, 8), np.zeros(64), seed=3)(X, 1, 5))
    assert not np.array_equal(shift(X, 1, 5), shift(X, 1, 6))
    assert not np.array_equal(shift(X, 1, 5), shift(X, 2, 5))
    assert shift(X, 0, 0).dtype == np.float32


def test_the_uncovered_pixels_are_those_of_an_empty_image_as_preprocessed():
    ex = prepare(load_config("configs/digits.yaml", DIGITS + ["data.preprocess=standardize"]))
    X = ex.data.X_train  # standardized: an empty pixel is -mean/std of its column, not 0
    moved = ex.augment(X, 0, 0).reshape(-1, 8, 8)
    raw_zero = ex.data.preprocessing.apply(np.zeros((1, 64)))[0].reshape(8, 8).astype(X.dtype)
    dy, dx = np.random.default_rng([0, 0, 0]).integers(-1, 2, size=(2, len(X)))  # the draws of (seed 0, epoch 0, batch 0)
    down = np.flatnonzero(dy == 1)  # moved down: the top row is uncovered
    assert len(down) and np.array_equal(moved[down, 0, :], np.broadcast_to(raw_zero[0], (len(down), 8)))
    assert ex.augment.shape == (8, 8) and ex.augment.max_shift == 1


def test_only_training_batches_are_moved(monkeypatch):
    ex = prepare(load_config("configs/digits.yaml", DIGITS))
    seen = []
    real = Trainer._train_batch

    def spy(self, Xb, yb, lr, steps):
        seen.append(Xb.copy())
        return real(self, Xb, yb, lr, steps)
    monkeypatch.setattr(Trainer, "_train_batch", spy)
    rows = []
    t = Trainer(ex.model, ex.loss, training_plan(ex.cfg), ex.train_rng, on_epoch=rows.append)
    t.fit(ex.data.X_train, ex.data.y_train, ex.data.X_val, ex.data.y_val, ex.augment)
    train_rows = {r.tobytes() for r in ex.data.X_train}
    unmoved = sum(r.tobytes() in train_rows for batch in seen for r in batch)
    assert unmoved < 0.3 * sum(len(b) for b in seen)  # (1 - 1/3^2) of the rows move
    # the validation metrics are those of the unmoved validation images
    assert rows[-1]["val_acc"] == evaluate(ex.model, ex.loss, ex.data.X_val, ex.data.y_val)["acc"]


@pytest.mark.parametrize("dataset", ["digits", "fashion_mnist"])
def test_a_run_interrupted_mid_training_resumes_to_the_same_weights(tmp_path, dataset):
    settings = DIGITS if dataset == "digits" else [
        *DIGITS, "data.name=fashion_mnist", f"data.data_dir={tmp_path}", "data.augment_flip=true"]
    fake_mnist(tmp_path / "fashion_mnist", n_train=600, n_test=50)
    cfg = load_config("configs/digits.yaml", settings)
    train_run(cfg, str(tmp_path / "straight"), echo=lambda line: None)
    interrupted_run(cfg, tmp_path / "cut")
    resume_run(str(tmp_path / "cut"), echo=lambda line: None)
    with np.load(tmp_path / "straight" / "model.npz") as a, np.load(tmp_path / "cut" / "model.npz") as b:
        assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)


@pytest.mark.parametrize("setting, message", [
    ("data.augment_shift=9", "data.augment_shift must be in 0..8, got 9"),
    ("data.augment_shift=-1", "data.augment_shift must be in 0..8, got -1"),
    ("data.augment_shift=4", "data.augment_shift must be below 4 for images of 8 x 8 pixels (half their side), got 4"),
    ("data.augment_flip=true", "data.augment_flip is an option of fashion_mnist, not of digits"),
])
def test_bad_shifts_are_named(setting, message):
    result = CliRunner().invoke(main, ["--config", "configs/digits.yaml", "--set", setting])
    assert result.exit_code == 1 and message in result.output


def test_a_dataset_without_images_is_refused():
    result = CliRunner().invoke(main, ["--config", "configs/moons.yaml", "--set", "data.augment_shift=1"])
    assert result.exit_code == 1
    assert "data.augment_shift is an option of digits, mnist and fashion_mnist, not of moons" in result.output


def test_a_flip_mirrors_about_half_the_images_left_to_right():
    X = np.random.default_rng(2).random((400, 12))  # images of 3 x 4
    flipped = RandomAugment(0, True, (3, 4), np.zeros(12), seed=0)(X, 0, 0)
    images, out = X.reshape(-1, 3, 4), flipped.reshape(-1, 3, 4)
    mirrored = [np.array_equal(o, i[:, ::-1]) for o, i in zip(out, images)]
    assert all(m or np.array_equal(o, i) for m, o, i in zip(mirrored, out, images))
    assert 160 < sum(mirrored) < 240
