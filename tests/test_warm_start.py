"""Longer runs and warm starts: mlp-train --resume RUN --epochs N and --init-from MODEL."""

import numpy as np
import pytest
import yaml
from conftest import invoke_cli
from datafiles import flowers_csv

from mlp_manual.cli.train import main
from mlp_manual.config import load_config
from mlp_manual.errors import ConfigError
from mlp_manual.predict.model_file import load_model
from mlp_manual.results.warm_start import warm_start
from mlp_manual.runs.checkpoint import load_checkpoint
from mlp_manual.runs.run import resume_run, train_run
from mlp_manual.training.experiment import prepare

CONFIG = "configs/moons.yaml"  # its settings, on a CSV of 4 features (no decision-boundary plot to draw)
LAYERS = ("model.layers=[{type: linear, units: 16}, relu, dropout, {type: linear, units: 16}, batchnorm, tanh, "
          "{type: linear}]")


@pytest.fixture
def base(tmp_path):
    """Overrides for 3 epochs on 160 rows of flowers.csv: 128 to train on, 7 steps an epoch."""
    flowers_csv(tmp_path / "flowers.csv", 160, seed=0)
    return ["training.epochs=3", "training.batch_size=20", "data.test_fraction=0", "optimizer.lr=0.02",
            LAYERS, "data.name=csv", f"data.path={tmp_path / 'flowers.csv'}", "data.target=species",
            "data.preprocess=standardize"]


def run(cfg, folder):
    return train_run(cfg, str(folder), echo=lambda line: None)


def weights(folder):
    return load_model(folder / "model.npz").state()


def metrics(folder):
    return [row.rsplit(",", 1)[0] for row in (folder / "metrics.csv").read_text().splitlines()]  # seconds differ


def test_extending_a_finished_run_equals_training_that_long_from_the_start(tmp_path, base):
    schedule = ["schedule.name=step", "schedule.step_size=2", "schedule.gamma=0.5"]
    run(load_config(CONFIG, base + schedule + ["training.epochs=5"]), tmp_path / "straight")
    run(load_config(CONFIG, base + schedule), tmp_path / "short")
    result = invoke_cli(main, "--resume", str(tmp_path / "short"), "--epochs", "5", "-q")
    assert result.exit_code == 0, result.output
    a, b = weights(tmp_path / "straight"), weights(tmp_path / "short")
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert metrics(tmp_path / "straight") == metrics(tmp_path / "short")
    assert load_config(tmp_path / "short" / "config.yaml").training.epochs == 5  # a later --resume goes on to 5


def test_a_cosine_schedule_is_recomputed_for_the_new_total(tmp_path, base):
    cosine = ["schedule.name=cosine", "schedule.warmup_epochs=0", "schedule.min_lr=0.001"]
    run(load_config(CONFIG, base + cosine + ["training.epochs=6"]), tmp_path / "straight")
    run(load_config(CONFIG, base + cosine), tmp_path / "short")
    lr_before = [row.split(",")[1] for row in metrics(tmp_path / "short")[1:]]
    lines = []
    resume_run(str(tmp_path / "short"), echo=lines.append, epochs=6)
    assert any(line.endswith("after epoch 3, step 21, to epoch 6") for line in lines)
    lr_straight = [row.split(",")[1] for row in metrics(tmp_path / "straight")[1:]]
    lr_extended = [row.split(",")[1] for row in metrics(tmp_path / "short")[1:]]
    assert lr_extended[:3] == lr_before and float(lr_before[-1]) < 0.002  # the short run ended near min_lr
    assert lr_extended[3:] == lr_straight[3:] and float(lr_extended[3]) > 0.005  # then the 6-epoch curve
    meta = load_checkpoint(tmp_path / "short" / "checkpoint.npz")["meta"]
    assert meta["epoch"] == 6 and meta["step"] == 42


def test_init_from_starts_from_the_trained_weights_with_a_fresh_optimizer(tmp_path, base):
    first = tmp_path / "first"
    run(load_config(CONFIG, base), first)
    cfg = load_config(CONFIG, base + ["training.epochs=1", f"model.init_from={first / 'model.npz'}"])
    exp = prepare(cfg)
    assert warm_start(exp.model, exp.data, first / "model.npz") == []
    trained = weights(first)
    assert all(np.array_equal(exp.model.state()[k], trained[k]) for k in trained)
    result = invoke_cli(main, "--config", CONFIG, *[arg for o in base for arg in ("--set", o)],
                        "--epochs", "1", "--init-from", str(first / "model.npz"), "--out", str(tmp_path / "warm"))
    assert result.exit_code == 0, result.output
    assert f"starting from the weights of {first / 'model.npz'}" in result.output
    saved = yaml.safe_load((tmp_path / "warm" / "config.yaml").read_text())
    assert saved["model"]["init_from"] == str(first / "model.npz") and saved["training"]["epochs"] == 1
    assert load_checkpoint(tmp_path / "warm" / "checkpoint.npz")["arrays"]["optim/t"] == 7  # one epoch's steps
    fresh = load_config(CONFIG, base + ["training.epochs=1"])
    run(fresh, tmp_path / "fresh")
    loss = (lambda folder: float(metrics(folder)[1].split(",")[2]))
    assert loss(tmp_path / "warm") < 0.8 * loss(tmp_path / "fresh")


def test_init_from_names_the_first_layer_that_differs(tmp_path, base):
    first = tmp_path / "first"
    run(load_config(CONFIG, base), first)
    for change, message in [
        ("model.layers.0.units=8", ("layer 0 differs: the config builds linear(in_features=4, out_features=8, "
                                    "bias=True), the model file has linear(in_features=4, out_features=16, bias=True)")),
        ("model.layers.2=relu", "layer 2 differs: the config builds relu(), the model file has dropout(p=0.5)"),
        (LAYERS[:-1] + ", sigmoid]", "layer 7 differs: the config builds sigmoid(), the model file has nothing"),
    ]:
        exp = prepare(load_config(CONFIG, base + [change]))
        with pytest.raises(ConfigError) as e:
            warm_start(exp.model, exp.data, first / "model.npz")
        assert str(e.value) == f"--init-from {first / 'model.npz'}: {message}"
    exp = prepare(load_config(CONFIG, base + ["model.layers.0.init=glorot_normal", "data.preprocess=scale"]))
    assert warm_start(exp.model, exp.data, first / "model.npz") == [
        f"WARNING --init-from {first / 'model.npz'} was trained on inputs preprocessed with standardize, this run uses scale"]


def test_resume_takes_no_init_from(tmp_path):
    result = invoke_cli(main, "--resume", str(tmp_path), "--init-from", "m.npz")
    assert result.exit_code == 2 and "it takes no --config, --set, --seed, --data-dir, --diagnostics or --init-from" in result.output
