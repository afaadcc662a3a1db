"""Gradient-flow diagnostics, the NaN guard, sanity checks, and mlp-plot."""

import csv
import json
import re
import warnings

import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli.plot import main as plot_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.config import DiagnosticsConfig, load_config
from mlp_manual.errors import TrainingWarning
from mlp_manual.layers import Linear, ReLU, Sigmoid, Tanh
from mlp_manual.losses import softmax_cross_entropy
from mlp_manual.model import Model
from mlp_manual.training.diagnostics import (
    Recorder,
    gradient_table,
    locate_nonfinite,
    unit_fraction,
)
from mlp_manual.training.experiment import prepare
from mlp_manual.training.sanity import check_initial_loss, find_lr, overfit_batch

PNG = b"\x89PNG\r\n\x1a\n"




def test_diagnostics_run_writes_tidy_csv_and_plots(tmp_path):
    out = tmp_path / "run"
    result = invoke_cli(train_main, "--config", "configs/spirals.yaml", "--diagnostics", "--out", str(out),
                    "--set", "training.epochs=3", "--set", "diagnostics.every=5")
    assert result.exit_code == 0, result.output
    for name in ("grad_norms.png", "update_ratio.png", "activations.png"):
        assert (out / name).read_bytes()[:8] == PNG
    with open(out / "diagnostics.csv") as f:
        rows = list(csv.DictReader(f))
    assert set(rows[0]) == {"step", "layer", "tensor", "stat", "value"}
    stats = {(r["tensor"], r["stat"]) for r in rows}
    for tensor in ("layers.0.W", "layers.0.b", "layers.4.W"):
        assert {(tensor, "grad_norm"), (tensor, "weight_norm"), (tensor, "update_ratio")} <= stats
    assert ("layers.1", "dead_fraction") in stats and ("layers.3", "act_std") in stats
    steps = sorted({int(r["step"]) for r in rows})
    assert steps[:3] == [4, 9, 14]  # every 5th optimizer step, counted from 0


def test_update_ratio_is_lr_times_gradient_over_weight_for_sgd():
    model = Model([Linear(3, 2, rng=np.random.default_rng(0), bias=False, dtype=np.float64)])
    recorder = Recorder(DiagnosticsConfig())
    X = np.random.default_rng(1).normal(size=(4, 3))
    model.backward(softmax_cross_entropy(model.forward(X), np.array([0, 1, 0, 1]))[1])
    before = {"layers.0.W": model.layers[0].params["W"].copy()}
    model.layers[0].params["W"] -= 0.1 * model.layers[0].grads["W"]
    recorder.record_step(0, model, before)
    values = {stat: v for _, _, _, stat, v in recorder.rows}
    g, w = model.layers[0].grads["W"], before["layers.0.W"]
    assert np.isclose(values["update_ratio"], 0.1 * np.linalg.norm(g) / np.linalg.norm(w))
    assert np.isclose(values["grad_norm"], np.linalg.norm(g))


def test_warnings_name_the_layer_and_the_step():
    recorder = Recorder(DiagnosticsConfig(max_grad_norm=100.0))
    model = Model([Linear(2, 2, rng=np.random.default_rng(0), dtype=np.float64)])
    before = {"layers.0.W": model.layers[0].params["W"].copy(), "layers.0.b": np.ones(2)}
    with pytest.warns(TrainingWarning) as caught:
        for step, scale in enumerate([1.0, 1.0, 1.0, 50.0]):
            model.layers[0].grads["W"] = np.full((2, 2), scale)
            model.layers[0].grads["b"] = np.zeros(2) + 1e-12
            recorder.record_step(step, model, before)
        watch = recorder.record_activations(7)
        relu = ReLU()
        watch(1, relu, relu.forward(-np.abs(np.random.default_rng(0).normal(size=(8, 4)))))
    lines = [(w.message.kind, str(w.message)) for w in caught]
    assert any(kind == "exploding" and
               ln.startswith("EXPLODING step 3: layers.0.W gradient norm 1.00e+02 is 50x its running median")
               for kind, ln in lines)
    assert any(kind == "vanishing" and ln.startswith("VANISHING step 0: layers.0.b") for kind, ln in lines)
    assert lines[-1] == ("dead", "DEAD step 7: layer 1 (ReLU()) has 100% of its units zero for the whole batch")


def layer_warnings(recorder, steps) -> list[str]:
    """The cross-layer VANISHING lines of ``compare_layers`` over ``steps`` ({tensor: grad norm} each)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step, norms in enumerate(steps):
            recorder.compare_layers(step, norms)
    assert all(w.message.kind == "vanishing" for w in caught)
    return [str(w.message) for w in caught]


def test_a_weight_gradient_far_below_the_largest_layers_is_vanishing_once_until_it_recovers():
    recorder = Recorder(DiagnosticsConfig())  # layer_ratio 1e-3
    faint = {"layers.0.W": 2e-6, "layers.2.W": 5e-4, "layers.4.W": 0.5}
    healthy = {"layers.0.W": 1e-3, "layers.2.W": 5e-4, "layers.4.W": 0.5}  # 2e-3 of the largest
    lines = layer_warnings(recorder, [faint, faint, healthy, faint])
    first = ("VANISHING step 0: layers.0.W gradient norm 2.00e-06 is 4.0e-06 of the largest, layers.4.W's 5.00e-01 "
             "(below diagnostics.layer_ratio 0.001)")
    # layers.2.W at exactly 1e-3 of the largest is not below; layers.0.W is warned again after recovering
    assert lines == [first, first.replace("step 0", "step 3")]
    assert layer_warnings(Recorder(DiagnosticsConfig(layer_ratio=1e-6)), [faint]) == []


def test_a_deep_sigmoid_stack_stuck_at_chance_gets_the_cross_layer_warning(tmp_path):
    layers = ", ".join(["{type: linear, units: 16}, sigmoid"] * 10) + ", {type: linear}"
    out = tmp_path / "deep"
    result = invoke_cli(train_main, "--config", "configs/moons.yaml", "--diagnostics", "--out", str(out),
                        "--set", f"model.layers=[{layers}]", "--set", "optimizer.name=sgd",
                        "--set", "optimizer.lr=0.01", "--set", "training.epochs=2")
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["final"]["val_acc"] == 0.5
    vanishing = [line for line in result.stderr.splitlines() if line.startswith("VANISHING")]
    first = next(line for line in vanishing if " layers.0.W " in line)
    match = re.fullmatch(r"VANISHING step \d+: layers\.0\.W gradient norm \S+ is (\S+) of the largest, "
                         r"layers\.20\.W's \S+ \(below diagnostics\.layer_ratio 0\.001\)", first)
    assert match and float(match[1]) < 1e-4  # the first layer learns ten thousand times slower than the last
    assert "WARNING not learning" in result.stderr


def test_unit_fractions():
    assert unit_fraction(ReLU(), np.array([[0.0, 1.0], [0.0, 0.0]])) == ("dead_fraction", 0.5)
    assert unit_fraction(Tanh(), np.array([[0.995, 0.2], [-0.999, 0.9]])) == ("saturated_fraction", 0.5)
    assert unit_fraction(Sigmoid(), np.array([[0.999, 0.5], [0.001, 0.5]])) == ("saturated_fraction", 0.5)


def test_gradient_table_after_any_backward():
    exp = prepare(load_config("configs/spirals.yaml"))
    out = exp.model.forward(exp.data.X_train[:32])
    exp.model.backward(exp.loss.fn(out, exp.data.y_train[:32])[1])
    table = gradient_table(exp.model, lr=0.1)
    lines = table.splitlines()
    assert lines[0].split() == ["tensor", "shape", "grad", "norm", "param", "norm", "ratio", "status"]
    assert lines[2].startswith("layers.0.W") and "2x64" in lines[2] and lines[2].endswith("ok")
    assert len(lines) == 2 + 6


def test_nan_guard_stops_names_the_layer_saves_finite_weights_and_exits_3(tmp_path):
    out = tmp_path / "run"
    result = invoke_cli(train_main, "--config", "configs/spirals.yaml", "--out", str(out),
                    "--set", "optimizer.lr=1e6", "--set", "optimizer.momentum=0")
    assert result.exit_code == 3
    message = result.output.strip().splitlines()[-1]
    assert message.startswith("Error: training diverged at step ")
    assert "the output of layer 4 (Linear(in_features=64, out_features=3" in message
    assert "lower learning rate (optimizer.lr) or gradient clipping (optimizer.clip_norm)" in message
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "diverged" and summary["stop_reason"].startswith("training diverged at step")
    with np.load(out / "model.npz") as f:
        assert all(np.all(np.isfinite(f[k])) for k in f.files if k != "__spec__")


def test_locate_nonfinite_names_the_first_layer_in_forward_order():
    rng = np.random.default_rng(0)
    model = Model([Linear(2, 3, rng=rng, dtype=np.float64), ReLU(), Linear(3, 2, rng=rng, dtype=np.float64)])
    model.layers[2].params["W"][0, 0] = np.inf
    where = locate_nonfinite(model, softmax_cross_entropy, np.ones((4, 2)), np.array([0, 1, 0, 1]))
    assert where.startswith("the output of layer 2 (Linear(in_features=3")


def test_initial_loss_check_warns_on_unscaled_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_initial_loss(prepare(load_config("configs/spirals.yaml")))
    exp = prepare(load_config("configs/spirals.yaml"))
    exp.data.X_train[:] *= 1000
    with pytest.warns(TrainingWarning) as caught:
        check_initial_loss(exp)
    [warning] = caught
    assert warning.message.kind == "initial_loss"
    assert str(warning.message).startswith("WARNING initial loss") and "ln(3) = 1.099" in str(warning.message)


def test_overfit_batch_reports_success_and_failure():
    lines = []
    assert overfit_batch(prepare(load_config("configs/spirals.yaml")), 20, 500, lines.append)
    assert lines[-1].startswith("memorised 20 examples in ")
    lines.clear()
    exp = prepare(load_config("configs/spirals.yaml", ["optimizer.lr=1e-9"]))
    assert not overfit_batch(exp, 20, 30, lines.append)
    assert lines[-1].startswith("could not memorise 20 examples in 30 steps")


def test_overfit_batch_cli_exit_codes():
    ok = invoke_cli(train_main, "--config", "configs/spirals.yaml", "--overfit-batch", "20")
    assert ok.exit_code == 0 and "memorised 20 examples" in ok.output
    bad = invoke_cli(train_main, "--config", "configs/spirals.yaml", "--overfit-batch", "20", "--max-steps", "5",
                 "--set", "optimizer.lr=1e-9")
    assert bad.exit_code == 1 and "could not memorise" in bad.output
    diverged = invoke_cli(train_main, "--config", "configs/spirals.yaml", "--overfit-batch", "20",
                      "--set", "optimizer.lr=1e6", "--set", "optimizer.momentum=0")
    assert diverged.exit_code == 1
    assert diverged.output.strip().splitlines()[-1].startswith(
        "could not memorise 20 examples: training diverged at step ")


def test_find_lr_sweeps_upward_and_writes_the_plot(tmp_path):
    lrs, losses, suggested = find_lr(prepare(load_config("configs/spirals.yaml")))
    assert all(a < b for a, b in zip(lrs, lrs[1:])) and lrs[0] == 1e-6
    assert lrs[0] < suggested < lrs[-1]
    result = invoke_cli(train_main, "--config", "configs/spirals.yaml", "--find-lr", "--out", str(tmp_path / "lr"))
    assert result.exit_code == 0 and "suggested optimizer.lr" in result.output
    assert (tmp_path / "lr" / "lr_find.png").read_bytes()[:8] == PNG


def test_mlp_plot_compares_runs_with_labels_from_config_differences(tmp_path):
    for lr in ("0.1", "0.01"):
        assert invoke_cli(train_main, "--config", "configs/xor.yaml", "--out", str(tmp_path / lr), "-q",
                      "--set", f"optimizer.lr={lr}", "--set", "training.epochs=5").exit_code == 0
    out = tmp_path / "compare.png"
    result = invoke_cli(plot_main, str(tmp_path / "0.1"), str(tmp_path / "0.01"), "-o", str(out),
                    "--metric", "train_loss")
    assert result.exit_code == 0 and "lr=0.1; lr=0.01" in result.output
    assert out.read_bytes()[:8] == PNG
    (tmp_path / "0.1" / "loss.png").unlink()
    assert invoke_cli(plot_main, str(tmp_path / "0.1")).exit_code == 0
    assert (tmp_path / "0.1" / "loss.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize("args, message", [
    (["nowhere"], "Error: nowhere: not a run folder (no metrics.csv)"),
])
def test_mlp_plot_errors(args, message):
    result = invoke_cli(plot_main, *args)
    assert result.exit_code == 1 and result.output.strip() == message


def test_mlp_plot_falls_back_to_train_loss_without_validation(tmp_path):
    for lr in ("0.1", "0.01"):
        assert invoke_cli(train_main, "--config", "configs/xor.yaml", "--out", str(tmp_path / lr), "-q",
                      "--set", f"optimizer.lr={lr}", "--set", "training.epochs=3").exit_code == 0
    result = invoke_cli(plot_main, str(tmp_path / "0.1"), str(tmp_path / "0.01"), "-o", str(tmp_path / "c.png"))
    assert result.exit_code == 0 and "comparing train_loss" in result.output
    result = invoke_cli(plot_main, str(tmp_path / "0.1"), str(tmp_path / "0.01"), "--metric", "val_loss",
                    "-o", str(tmp_path / "c.png"))
    assert result.exit_code == 1
    assert "the val_loss column of metrics.csv is empty (a run without a validation set)" in result.output


def test_final_line_names_the_monitored_metric(tmp_path):
    result = invoke_cli(train_main, "--config", "configs/moons.yaml", "--out", str(tmp_path / "r"), "-q",
                    "--set", "training.epochs=3", "--set", "training.early_stopping.monitor=val_acc")
    assert result.output.startswith("best val_acc ") and "(val_loss " in result.output


def test_batchnorm_with_one_row_batches_is_refused_before_training(tmp_path):
    result = invoke_cli(train_main, "--config", "configs/moons.yaml", "--out", str(tmp_path / "r"),
                    "--set", "model.layers=[{type: linear, units: 8}, batchnorm, relu, {type: linear}]",
                    "--set", "training.batch_size=4", "--set", "optimizer.accumulate=4")
    assert result.exit_code == 1 and not (tmp_path / "r").exists()
    assert result.output.strip() == ("Error: batchnorm needs at least 2 rows per batch, but training.batch_size 4 "
                                     "split over optimizer.accumulate 4 gives 1")
