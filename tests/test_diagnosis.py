"""A run that does not learn gets the cause its evidence points to, not a fixed sentence: the
diagnosis rules on constructed evidence, then a gallery of real runs through mlp-train, each with
the diagnosis it must get, and --find-lr, --overfit-batch, the initial-loss check and mlp-explain
on the same evidence."""

import json
import os
import warnings

import numpy as np
import pytest
import yaml
from conftest import invoke_cli

from mlp_manual.cli.explain import main as explain_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.config import load_config
from mlp_manual.datasets import datadir, synthetic
from mlp_manual.training.diagnosis import Evidence, diagnose, trend
from mlp_manual.training.experiment import prepare
from mlp_manual.training.sanity import check_initial_loss, steepest_descent

FLAT = (0.69, 0.69, 0.69, 0.69)


def evidence(**changes) -> Evidence:
    base = dict(grad_norms={"layers.0.W": 0.1, "layers.2.W": 0.2}, step_ratios={"layers.0.W": 1e-3, "layers.2.W": 2e-3},
                stuck_units={"layer 1 (ReLU())": ("dead", 0.1)}, losses=(0.7, 0.6, 0.5, 0.45), lr=0.01)
    return Evidence(**{**base, **changes})


@pytest.mark.parametrize("changes, cause, sure", [
    ({"losses": (0.7, 0.5, 3.0, 9.0)}, "a learning rate too high", True),
    ({"losses": (0.7, 0.3, 0.6, 0.3, 0.6, 0.3, 0.65)}, "a learning rate too high", True),
    ({"step_ratios": {"layers.0.W": 0.5}}, "a learning rate too high", False),
    ({"stuck_units": {"layer 1 (ReLU())": ("dead", 0.9)}}, "dead ReLUs", True),
    ({"stuck_units": {"layer 1 (Tanh())": ("saturated", 0.8)}}, "saturated units", True),
    ({"grad_norms": {"layers.0.W": 1e-6, "layers.2.W": 0.2}}, "vanishing gradients", True),
    ({"inputs_scaled": False}, "unscaled inputs", False),
    ({"target_scale": (150.0, 77.0)}, "unscaled regression targets", True),
    ({"step_ratios": {"layers.0.W": 1e-7}, "losses": FLAT}, "a learning rate too low", True),
    ({"losses": (1.0, 0.99, 0.98, 0.97, 0.96)}, "a learning rate too low", False),
    ({}, "no single cause", False),
])
def test_each_cause_follows_from_its_evidence(changes, cause, sure):
    found = diagnose(evidence(**changes))
    assert (found.cause, found.sure) == (cause, sure)
    assert found.sentence().startswith(f"{'Likely' if sure else 'Possibly'} {cause}: ")


def test_dead_units_outrank_the_rising_loss_that_killed_them_and_say_so():
    found = diagnose(evidence(losses=(0.7, 30.0, 1.1, 1.0), stuck_units={"layer 3 (ReLU())": ("dead", 1.0)}))
    assert found.cause == "dead ReLUs" and "after the training loss rose" in found.evidence


def test_a_learning_rate_too_low_is_raised_by_the_factor_the_steps_need():
    found = diagnose(evidence(step_ratios={"layers.0.W": 3.4e-7}, losses=FLAT, lr=1e-6))
    assert "Raise optimizer.lr (now 1e-06) about 1000 times (to 0.001)" in found.advice


@pytest.mark.parametrize("losses, shape", [
    ((1.0, 1.0, 1.0, 1.0), "flat"), ((1.0, 0.5, 0.2, 0.1), "falling"), ((1.0, 0.99, 0.98, 0.97), "creeping"),
    ((0.5, 77.0, 82.0, 60.0), "rising"), ((1.0, 0.5, 0.9, 0.4, 0.95, 0.5, 0.9), "swinging"),
    ((1.0, float("nan")), "rising"),
])
def test_the_loss_curve_in_one_word(losses, shape):
    assert trend(losses) == shape


DEEP_SIGMOID = [x for _ in range(8) for x in ({"type": "linear", "units": 16}, "sigmoid")] + [{"type": "linear"}]
TANH = [{"type": "linear", "units": 32}, "tanh", {"type": "linear"}]
RELU2 = [{"type": "linear", "units": 32}, "relu", {"type": "linear", "units": 32}, "relu", {"type": "linear"}]
MOONS = {"name": "moons", "n_samples": 400, "noise": 0.2, "val_fraction": 0.25}
CIRCLES = {"name": "circles", "n_samples": 400, "noise": 0.05, "val_fraction": 0.25}

GALLERY = {  # name: (config, the diagnosis its warning must give, or None for no warning at all)
    "deep sigmoid": ({"data": MOONS, "model": {"layers": DEEP_SIGMOID}, "optimizer": {"name": "sgd", "lr": 0.1}},
                     "Likely vanishing gradients: layers.0.W's gradient norm is "),
    "rate too high": ({"data": MOONS, "model": {"layers": TANH}, "optimizer": {"name": "sgd", "lr": 30.0}},
                      "Likely a learning rate too high: the training loss rose"),
    "rate too low": ({"data": CIRCLES, "model": {"layers": TANH}, "optimizer": {"name": "sgd", "lr": 1e-6}},
                     "Likely a learning rate too low: "),
    "dead relus": ({"data": MOONS, "model": {"layers": RELU2}, "optimizer": {"name": "sgd", "lr": 5.0}},
                   "Likely dead ReLUs: layer 3 (ReLU()) has "),
    "saturated tanh": ({"data": {"name": "csv", "path": "circles100.csv", "val_fraction": 0.25},
                        "model": {"layers": TANH}, "optimizer": {"name": "sgd", "lr": 0.1}},
                       "Likely saturated units: layer 1 (Tanh()) has "),
    "unscaled target": ({"data": {"name": "csv", "path": "wide_target.csv", "task": "regression",
                                  "preprocess": "standardize", "val_fraction": 0.2}, "loss": "mse",
                         "model": {"layers": [{"type": "linear", "units": 32}, "relu", {"type": "linear"}]},
                         "optimizer": {"name": "adam", "lr": 0.001}},
                        "Likely unscaled regression targets: the targets have mean 155.5523 and spread 45.9781"),
    "healthy": ({"data": MOONS, "model": {"layers": TANH}, "optimizer": {"name": "adam", "lr": 0.01}}, None),
}


@pytest.fixture
def gallery(tmp_path):
    """The gallery's data files and configs in tmp_path; returns the path of a case's config."""
    rng = np.random.default_rng(0)
    X, y = synthetic.circles(rng, n=400, noise=0.05)
    (tmp_path / "circles100.csv").write_text(  # raw inputs in the hundreds: tanh saturates
        "a,b,label\n" + "".join(f"{a * 100},{b * 100},{int(t)}\n" for (a, b), t in zip(X, y)))
    X = rng.normal(size=(400, 3))
    target = 150 + 77 * np.tanh(X @ [0.8, -0.5, 0.3])  # a regression target in the hundreds
    (tmp_path / "wide_target.csv").write_text(
        "a,b,c,y\n" + "".join(f"{a},{b},{c},{t}\n" for (a, b, c), t in zip(X, target)))

    def config(name):
        path = tmp_path / f"{name.replace(' ', '_')}.yaml"
        path.write_text(yaml.safe_dump({"name": name.replace(" ", "_"), "training": {"epochs": 30, "batch_size": 32},
                                        **GALLERY[name][0]}))
        return path
    return config


@pytest.mark.parametrize("name", sorted(GALLERY))
def test_every_run_of_the_gallery_gets_its_diagnosis(name, gallery, tmp_path):
    out = tmp_path / "run"
    result = invoke_cli(train_main, "--config", str(gallery(name)), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    expected = GALLERY[name][1]
    if expected is None:
        assert result.stderr == "" and json.loads((out / "summary.json").read_text())["warnings"] == []
        return
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("WARNING not learning: ") and expected in last, last
    if "vanishing" in expected:
        assert "lower optimizer.lr" not in last.lower()  # the old fixed sentence blamed the rate


def test_find_lr_names_a_structural_cause_and_never_suggests_the_edge(gallery, tmp_path):
    result = invoke_cli(train_main, "--config", str(gallery("deep sigmoid")), "--find-lr", "--out", str(tmp_path / "lr"))
    assert result.exit_code == 0, result.output
    first, second = result.stdout.strip().splitlines()[-2:]
    suggested = float(first.split("suggested optimizer.lr ")[1].split(";")[0])
    assert suggested > 1e-4  # the sweep starts at 1e-6; its first steps are the running average settling
    assert second.startswith("The fresh network: Likely vanishing gradients: layers.0.W's gradient norm is ")


def test_a_sweep_without_a_clear_descent_suggests_nothing():
    lrs = list(np.geomspace(1e-6, 1.0, 100))
    noise = 0.02 * np.sin(np.arange(100) * 1.7)
    assert steepest_descent(lrs, list(0.69 + noise), settle=10) is None
    early_wiggle = [0.9, 0.6] + list(0.69 + noise[2:])
    assert steepest_descent(lrs, early_wiggle, settle=10) is None
    falling = list(0.69 - 0.5 / (1 + np.exp(-(np.arange(100) - 60) / 5)) + noise)
    assert lrs[50] <= steepest_descent(lrs, falling, settle=10) <= lrs[70]


def test_overfit_batch_blames_vanishing_gradients_not_a_bug(gallery):
    result = invoke_cli(train_main, "--config", str(gallery("deep sigmoid")), "--overfit-batch", "20",
                        "--max-steps", "200")
    assert result.exit_code == 1
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("could not memorise 20 examples in 200 steps: ")
    assert "Likely vanishing gradients" in last and "bug" not in last


def test_the_initial_loss_check_blames_scaling_only_when_the_inputs_are_unscaled():
    exp = prepare(load_config("configs/spirals.yaml"))
    last = exp.model.layers[-1].params["W"]
    last *= 3  # logits of spread 3 or so on scaled inputs: a loss about 1.5 nats above ln(3), no fault
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_initial_loss(exp)
    last *= 30  # far off on scaled inputs: the init, not the data
    with pytest.warns(UserWarning) as caught:
        check_initial_loss(exp)
    [warning] = caught
    assert str(warning.message).endswith("ln(3) = 1.099, the loss of uniform guesses, though the inputs are scaled: "
                                         "check the init (model.init) and the labels")


def test_mlp_explain_says_when_the_gradient_vanishes_across_the_layers(gallery):
    result = invoke_cli(explain_main, "--config", str(gallery("deep sigmoid")))
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("gradient flow: the gradient shrinks ") and "on its way back through 17 layers" in last
    assert "It vanishes: the first layers get almost no gradient" in last
    result = invoke_cli(explain_main, "--config", "configs/xor.yaml")
    assert "gradient flow" not in result.stdout


SHIPPED = ["xor", "moons", "spirals", "sine", "digits", "mnist1d", "mnist1d_residual", "mnist_fast", "mnist_speedrun",
           "iris", "names_mlp", "digits_best"]
LONG = {"mnist": "20 epochs of MNIST", "fashion_mnist": "30 epochs of Fashion-MNIST",
        "names_best": "about 3 minutes (benchmarks/names.py trains it)",
        "mnist_best": "about 5 minutes (benchmarks/accuracy.py --only mnist_best trains it)",
        "fashion_best": "about 12 minutes (benchmarks/accuracy.py --only fashion_best trains it)"}


def test_every_shipped_config_is_checked_for_warnings_or_said_why_not():
    from pathlib import Path

    shipped = {p.stem for p in Path("configs").glob("*.yaml")}
    assert shipped == set(SHIPPED) | set(LONG)


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_no_healthy_shipped_config_gets_a_warning(name, tmp_path):
    if name in ("mnist_fast", "mnist_speedrun") and not os.environ.get(datadir.ENV_VAR):
        pytest.skip(f"real MNIST not found through ${datadir.ENV_VAR}")
    result = invoke_cli(train_main, "--config", f"configs/{name}.yaml", "--out", str(tmp_path / "run"), "-q")
    assert result.exit_code == 0, result.output
    assert result.stderr == "", result.stderr
