"""metrics.csv: what a run writes, mlp-plot reads back unchanged. (Damaged files: tests/bad_inputs.)"""

import pytest

from mlp_manual.errors import ConfigError
from mlp_manual.runs.metrics import read_metrics, write_metrics


def test_round_trip_without_validation_gives_empty_val_columns(tmp_path):
    history = {"epoch": [1, 2, 3], "train_loss": [0.693147, 0.25, 0.0125], "lr": [0.1, 0.1, 0.05],
               "train_acc": [0.5, 0.75, 1.0], "seconds": [0.5, 1.0, 1.5]}
    write_metrics(tmp_path, history)
    read = read_metrics(tmp_path)
    assert list(read) == ["epoch", "lr", "train_loss", "train_acc", "val_loss", "val_acc", "seconds"]
    assert read["val_loss"] == read["val_acc"] == [None, None, None]
    assert {k: v for k, v in read.items() if not k.startswith("val_")} == history


def test_round_trip_with_validation_regression_and_an_extra_column(tmp_path):
    history = {"epoch": [1, 2], "lr": [0.001, 0.001], "train_loss": [12.5, 3.25], "val_loss": [13.0, 4.5],
               "grad_norm": [1e-05, 2.5e+08], "seconds": [0.25, 0.5]}
    write_metrics(tmp_path, history)
    read = read_metrics(tmp_path)
    assert list(read) == ["epoch", "lr", "train_loss", "val_loss", "seconds", "grad_norm"]  # no accuracy columns
    assert read == history


def test_floats_keep_six_significant_digits(tmp_path):
    write_metrics(tmp_path, {"epoch": [1], "train_loss": [1 / 3]})
    assert read_metrics(tmp_path)["train_loss"] == [0.333333]


def test_a_run_folder_without_epochs_is_refused(tmp_path):
    write_metrics(tmp_path, {"epoch": [], "train_loss": []})
    with pytest.raises(ConfigError, match="metrics.csv: holds no epochs"):
        read_metrics(tmp_path)
