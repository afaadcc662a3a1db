"""loss.label_smoothing through the real commands: what it does to a trained model's
confidence, how the run records it, and its one-line errors."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import invoke_cli

from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.explain import main as explain_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.config import dump_config, load_config
from mlp_manual.explain.html import pass_data
from mlp_manual.explain.trace import trace
from mlp_manual.losses import LOSSES
from mlp_manual.predict.model_file import load_model
from mlp_manual.training.experiment import prepare

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def confidence(tmp_path, name: str, *settings: str) -> float:
    """Train moons with ``settings`` (--set); the mean probability the model gives its predicted
    class on the training rows."""
    options = ["--set", "training.epochs=150", *(a for s in settings for a in ("--set", s))]
    result = invoke_cli(train_main, "--config", str(CONFIGS / "moons.yaml"), *options, "--out",
                        str(tmp_path / name), "-q")
    assert result.exit_code == 0, result.output
    cfg = load_config(tmp_path / name / "config.yaml")
    data = prepare(cfg).data
    p = LOSSES["softmax_cross_entropy"].probabilities(load_model(tmp_path / name / "model.npz").eval().forward(data.X_train))
    return float(p.max(axis=1).mean())


def test_a_smoothed_model_is_less_sure_of_itself_and_its_run_records_the_setting(tmp_path):
    plain = confidence(tmp_path, "plain")
    smoothed = confidence(tmp_path, "smoothed", "loss.label_smoothing=0.2")
    # with e = 0.2 and 2 classes the smoothed target of a row is 0.9 on its class: no reason to go above it
    assert plain > 0.95 and smoothed < 0.9, (plain, smoothed)
    saved = yaml.safe_load((tmp_path / "smoothed" / "config.yaml").read_text())
    assert saved["loss"] == {"name": "softmax_cross_entropy", "label_smoothing": 0.2}
    assert yaml.safe_load((tmp_path / "plain" / "config.yaml").read_text())["loss"] == "softmax_cross_entropy"


@pytest.mark.parametrize("settings, message", [
    (["loss.label_smoothing=1"], "loss.label_smoothing must be in [0, 1), got 1"),
    (["loss.label_smoothing=-0.1"], "loss.label_smoothing must be in [0, 1), got -0.1"),
    (["loss=mse", "data.name=sine", "loss.label_smoothing=0.1"],
     "mse has no label smoothing: loss.label_smoothing is for softmax_cross_entropy"),
    (["loss=bce_with_logits", "loss.label_smoothing=0.1"],
     "bce_with_logits has no label smoothing: loss.label_smoothing is for softmax_cross_entropy"),
])
def test_a_wrong_label_smoothing_is_one_line(tmp_path, settings, message):
    result = invoke_cli(train_main, "--config", str(CONFIGS / "moons.yaml"), *(a for s in settings for a in ("--set", s)),
                        "--out", str(tmp_path / "run"), "-q")
    assert result.exit_code != 0 and len(result.output.splitlines()) == 1 and message in result.output, result.output
    assert not (tmp_path / "run").exists()


def test_explain_shows_the_smoothed_seed_and_scalar_refuses_it():
    result = invoke_cli(explain_main, "--config", str(CONFIGS / "xor.yaml"), "--rows", "2",
                        "--set", "loss.label_smoothing=0.1")
    assert result.exit_code == 0, result.output
    assert "dlogits = (softmax(logits) - q) / N, q = 0.9 onehot(y) + 0.1 / C" in result.output
    result = invoke_cli(explain_main, "--config", str(CONFIGS / "xor.yaml"), "--scalar", "--set", "loss.label_smoothing=0.1")
    assert result.exit_code == 1
    assert result.output == ("Error: --scalar follows the plain losses; this run weighs its classes or smooths its "
                             "labels (loss.class_weights, loss.label_smoothing)\n")


@pytest.mark.parametrize("setting", ["loss.label_smoothing=0.1", "loss.class_weights={0: 2}"])
def test_the_page_of_a_smoothed_or_weighted_loss_shows_its_numbers_without_offering_edits(setting):
    exp = prepare(load_config(CONFIGS / "xor.yaml", [setting]))
    X, y = exp.data.X_train.astype(np.float64), exp.data.y_train
    data = pass_data(trace(exp.model, exp.loss, X, y), "xor")  # the page's own recomputation knows the plain losses
    plain = prepare(load_config(CONFIGS / "xor.yaml"))
    assert data["editable"] == [] and pass_data(trace(plain.model, plain.loss, X, y), "xor")["editable"]
    assert data["values"]["loss"]["data"] == [pytest.approx(exp.loss.fn(exp.model.forward(X), y)[0])]


def test_overfit_batch_aims_at_the_lowest_loss_smoothing_allows(tmp_path):
    result = invoke_cli(train_main, "--config", str(CONFIGS / "xor.yaml"), "--set", "loss.label_smoothing=0.1",
                        "--overfit-batch", "4")
    assert result.exit_code == 0, result.output
    # with e = 0.1 and C = 2 the lowest loss is the entropy of (0.95, 0.05)
    floor = -(0.95 * math.log(0.95) + 0.05 * math.log(0.05))
    assert f"to {floor:.4f}, the lowest the smoothed loss can reach" in result.output.splitlines()[-1]
    assert result.output.splitlines()[-1].startswith("memorised 4 examples in ")


def test_mlp_eval_reports_the_loss_the_run_reported(tmp_path):
    run = tmp_path / "run"
    result = invoke_cli(train_main, "--config", str(CONFIGS / "moons.yaml"), "--set", "loss.label_smoothing=0.2",
                        "--set", "loss.class_weights={0: 2}", "--set", "training.epochs=5", "--out", str(run), "-q")
    assert result.exit_code == 0, result.output
    test = json.loads((run / "summary.json").read_text())["test"]
    result = invoke_cli(eval_main, "--model", str(run / "model.npz"), "--split", "test", "--out", str(tmp_path / "e"))
    assert result.exit_code == 0, result.output
    assert re.search(rf"loss {test['loss']:.4f}\b", result.output), (test, result.output)


def test_a_config_with_smoothing_and_weights_reads_back_as_it_was(tmp_path):
    cfg = load_config(CONFIGS / "moons.yaml", ["loss.label_smoothing=0.25", "loss.class_weights=balanced"])
    (tmp_path / "c.yaml").write_text(dump_config(cfg))
    assert load_config(tmp_path / "c.yaml") == cfg.read_from(str(tmp_path / "c.yaml"))
