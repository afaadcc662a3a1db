"""A run that does not learn says so: the fresh model's baseline, the early warning of a loss that
blows up, the end-of-run warning, and what reaches stderr and summary.json."""

import json
import os
import re
import signal
import warnings

import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli.train import main as train_main
from mlp_manual.config import load_config
from mlp_manual.errors import TrainingInterrupted, TrainingWarning
from mlp_manual.runs.run import resume_run, train_run
from mlp_manual.training.experiment import prepare
from mlp_manual.training.learning_check import Baseline, Chance, LearningCheck


def warned(fn, *args) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    assert all(isinstance(w.message, TrainingWarning) and w.message.kind == "not_learning" for w in caught)
    return [str(w.message) for w in caught]


def test_baseline_of_a_classifier_is_the_fresh_loss_and_the_largest_class_share():
    exp = prepare(load_config("configs/spirals.yaml"))
    b = Baseline.measure(exp)
    assert b.initial_loss == pytest.approx(np.log(3), abs=0.2) and b.mean_loss == {}
    counts = np.bincount(exp.data.y_val, minlength=3)
    assert b.chance["val"] == Chance(counts.max() / counts.sum(), len(exp.data.y_val), 3)
    assert set(b.chance) == {"train", "val"}


def test_baseline_of_a_regression_is_the_loss_of_predicting_the_training_mean():
    exp = prepare(load_config("configs/sine.yaml"))
    b = Baseline.measure(exp)
    d = exp.data
    assert b.mean_loss["train"] == pytest.approx(float(np.var(d.y_train)), rel=1e-5) and b.chance == {}
    assert b.mean_loss["val"] == pytest.approx(float(np.mean((d.y_val - d.y_train.mean()) ** 2)), rel=1e-5)


def test_chance_allows_one_standard_error():
    chance = Chance(0.5, 100, 2)  # one standard error is 0.05
    assert chance.reached_by(0.2) and chance.reached_by(0.549) and not chance.reached_by(0.551)


CLASSIFIER = Baseline(initial_loss=1.1, mean_loss={}, chance={"train": Chance(0.34, 700, 3),
                                                                  "val": Chance(1 / 3, 180, 3)},
                      fresh_loss={"train": 1.1, "val": 1.2}, train_rows_biased=False)


def test_a_loss_that_grows_a_hundredfold_is_reported_once_at_once():
    check = LearningCheck(CLASSIFIER, lr=1000)
    assert warned(check.after_epoch, {"epoch": 1, "train_loss": 109.0}) == []
    [line] = warned(check.after_epoch, {"epoch": 2, "train_loss": 2.063e21})
    assert line == ("WARNING not learning: train_loss grew from 1.1000 (the fresh model) to 2.063e+21 at epoch 2, "
                    "1.88e+21 times. Likely a learning rate too high: lower optimizer.lr (now 1000) about 10 times, "
                    "or sweep it with mlp-train --find-lr.")
    assert warned(check.after_epoch, {"epoch": 3, "train_loss": 5e21}) == []


def test_the_end_check_names_every_failed_bar_with_its_numbers():
    check = LearningCheck(CLASSIFIER, lr=0.1)
    row = {"epoch": 250, "train_loss": 52.45, "train_acc": 0.36, "val_loss": 39.3, "val_acc": 1 / 3}
    [line] = warned(check.at_end, row, "final weights, epoch 250")
    assert line.startswith("WARNING not learning: val_loss 39.3000 is no better than the fresh model's 1.2000 "
                           "(32.8 times); val_acc 0.3333 is no better than chance (0.3333, always guessing the largest "
                           "of 3 classes). Measured with the final weights, epoch 250. ")
    assert line.endswith("Possibly no single cause: the training loss is falling, the gradients reach every layer "
                         "and no activation layer is stuck. Sweep the rate with mlp-train --find-lr, and check that "
                         "the model can fit one batch with mlp-train --overfit-batch 20.")
    [line] = warned(check.at_end, row, "final weights, epoch 250", [30.0, 45.0, 52.45])
    assert "epoch 250. Likely a learning rate too high: the training loss rose. Lower optimizer.lr (now 0.1)" in line
    assert warned(check.at_end, {**row, "val_loss": 0.9, "val_acc": 0.9}, "final weights, epoch 250") == []


def test_without_validation_the_training_accuracy_is_judged():
    check = LearningCheck(CLASSIFIER, lr=0.1)
    [line] = warned(check.at_end, {"epoch": 5, "train_loss": 1.0, "train_acc": 0.35}, "weights of epoch 3")
    assert "train_acc 0.3500 is not clearly better than chance (0.3400" in line and "train_loss" not in line.split(";")[0][22:40]
    assert warned(check.at_end, {"epoch": 5, "train_loss": 1.0, "train_acc": 0.5}, "weights of epoch 3") == []


def test_training_metrics_of_a_model_with_dropout_are_not_judged():
    """Dropout's training-mode loss is noisier than the fresh model's evaluation-mode loss: only a
    validation split (evaluation mode) or a hundredfold growth may say the run does not learn."""
    biased = Baseline(initial_loss=0.69, mean_loss={}, chance={"train": Chance(0.5, 96, 2)},
                      fresh_loss={"train": 0.69}, train_rows_biased=True)
    check = LearningCheck(biased, lr=0.01)
    assert warned(check.at_end, {"epoch": 4, "train_loss": 0.707, "train_acc": 0.5}, "final weights, epoch 4") == []
    [line] = warned(check.after_epoch, {"epoch": 5, "train_loss": 70.0})
    assert "train_loss grew from" in line


def test_a_regression_no_better_than_the_mean_is_reported():
    check = LearningCheck(Baseline(initial_loss=2.0, mean_loss={"train": 0.5, "val": 0.6}, chance={},
                                   fresh_loss={"train": 2.0, "val": 2.0}, train_rows_biased=False), lr=0.01)
    [line] = warned(check.at_end, {"epoch": 9, "train_loss": 0.4, "val_loss": 0.61}, "final weights, epoch 9")
    assert line.startswith("WARNING not learning: val_loss 0.6100 is no better than always predicting the "
                           "training mean (0.6000).")
    assert warned(check.at_end, {"epoch": 9, "train_loss": 0.4, "val_loss": 0.3}, "final weights, epoch 9") == []


def test_the_runaway_learning_rate_run_warns_records_and_still_completes(tmp_path):
    out = tmp_path / "run"
    result = invoke_cli(train_main, "--config", "configs/spirals.yaml", "--set", "optimizer.lr=1000",
                        "--set", "training.epochs=12", "--out", str(out))
    assert result.exit_code == 0, result.output
    stderr = result.stderr.splitlines()
    assert len(stderr) == 2 and all(line.startswith("WARNING not learning: ") for line in stderr)
    assert "train_loss grew from" in stderr[0] and "at epoch 1," in stderr[0]
    assert "val_acc 0.3333 is no better than chance" in stderr[1] and "final weights, epoch 12" in stderr[1]
    # readable at any magnitude; the digits of a runaway loss depend on the CPU's last bits
    assert re.search(r"^epoch  1/12  train_loss \d\.\d{3}e\+\d\d  ", result.stdout, re.M)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed"
    assert summary["warnings"] == [{"kind": "not_learning", "message": line} for line in stderr]


def test_a_run_that_learns_has_no_warning(tmp_path):
    out = tmp_path / "run"
    result = invoke_cli(train_main, "--config", "configs/moons.yaml", "--set", "training.epochs=5", "--out", str(out))
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads((out / "summary.json").read_text())["warnings"] == []


def test_a_resumed_run_is_judged_against_the_same_fresh_model(tmp_path):
    cfg = load_config("configs/spirals.yaml", ["optimizer.lr=1000", "training.epochs=4"])
    straight = train_run(cfg, str(tmp_path / "straight"), echo=lambda line: None)

    def echo(line):  # Ctrl-C after epoch 2
        if line.startswith("epoch 2/"):
            os.kill(os.getpid(), signal.SIGINT)

    with warnings.catch_warnings(record=True):  # shown (so recorded by the run), not printed
        warnings.simplefilter("always", TrainingWarning)
        with pytest.raises(TrainingInterrupted):
            train_run(cfg, str(tmp_path / "cut"), echo=echo)
        resumed = resume_run(str(tmp_path / "cut"), echo=lambda line: None)
    assert straight["warnings"][-1] == resumed["warnings"][-1]
    assert "than the fresh model's 1.1852" in resumed["warnings"][-1]["message"]
