"""mlp-explain: the printed pass on every shipped config, every step checked, trained weights,
the scalar view and the refusals."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli.explain import main
from mlp_manual.config import load_config
from mlp_manual.datasets import datadir
from mlp_manual.explain.scalar import MAX_PARAMS, scalar_pass
from mlp_manual.explain.text import preview_rows
from mlp_manual.explain.trace import BlockEnd, trace
from mlp_manual.layers.registry import LAYERS, row_of
from mlp_manual.losses import LOSSES
from mlp_manual.predict.model_file import save_model
from mlp_manual.training.experiment import prepare

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
OFFLINE = ["xor", "moons", "spirals", "sine", "digits", "mnist1d", "mnist1d_residual"]  # need no download
CLOSING = re.compile(r"^(\d+) of (\d+) gradient steps agree with finite differences \(all agree; "
                     r"worst relative error (\S+)\)$", re.M)


def explain(*args):
    result = invoke_cli(main, *args)
    assert result.exit_code == 0, result.output
    return result.output


def assert_every_step_agrees(output: str, cfg) -> None:
    """The closing line counts the loss's seed plus dx and every parameter of every layer (a
    block's dx, and its inner layers as layers), all agreeing, and each printed relative error is
    below the checker's pass threshold."""
    exp = prepare(cfg)
    expected = 1 + sum(1 + (0 if layer.sublayers() else len(layer.params)) for _, layer in exp.model.named_layers())
    agree, total, worst = CLOSING.search(output).groups()
    assert int(agree) == int(total) == expected
    errors = [float(e) for e in re.findall(r"finite differences: rel err (\S+)  (?:PASS|KINK)", output)]
    assert len(errors) == expected and len(re.findall(r"rel err", output)) == expected
    assert max(errors) == pytest.approx(float(worst), rel=0.06) and max(errors) <= 1e-7


def section(output: str, title: str) -> str:
    return next(block for block in output.split("\n\n") if block.startswith(title))


@pytest.mark.parametrize("name", OFFLINE)
def test_every_offline_config_is_explained_and_every_step_agrees(name):
    path = CONFIGS / f"{name}.yaml"
    output = explain("--config", str(path), "--rows", "2", "--max-elements", "12")
    cfg = load_config(path)
    assert_every_step_agrees(output, cfg)
    layers = prepare(cfg).model.layers
    forward, backward = section(output, "forward"), section(output, "backward")
    assert "training mode" in forward and "dropout draws one mask" in forward
    for i, layer in enumerate(layers):
        formulas = row_of(layer).formulas
        assert f"layers.{i} " in forward and formulas.forward in forward
        for formula in formulas.backward.values():
            assert f"fwd: {formulas.forward}  =>  {formula}" in backward
    order = [int(i) for i in dict.fromkeys(re.findall(r"^  layers\.(\d+) ", backward, re.M))]  # a block: twice
    assert order == list(range(len(layers)))[::-1]
    assert LOSSES[cfg.loss.name].seed_formula in section(output, "loss")


def _shared_mnist():
    root = os.environ.get(datadir.ENV_VAR)
    return root if root and datadir.dataset_files(Path(root) / "mnist", "mnist") else None


@pytest.mark.skipif(_shared_mnist() is None, reason=f"real MNIST not found through ${datadir.ENV_VAR}")
def test_mnist_is_explained_on_two_rows():
    output = explain("--config", str(CONFIGS / "mnist.yaml"), "--rows", "2", "--max-elements", "8")
    assert_every_step_agrees(output, load_config(CONFIGS / "mnist.yaml"))
    assert "x (2, 784), W (784, 1024), b (1024,) -> out (2, 1024)" in output


def test_the_loss_and_its_seed_are_printed_with_their_numbers():
    output = explain("--config", str(CONFIGS / "xor.yaml"))
    loss = section(output, "loss")
    exp = prepare(load_config(CONFIGS / "xor.yaml"))
    logits = exp.model.astype(np.float64).forward(exp.data.X_train.astype(np.float64))
    value, dlogits = LOSSES["softmax_cross_entropy"].fn(logits, exp.data.y_train)
    assert f"logits[y]) = {value:.6g}" in loss
    assert "N = 4" in loss and "softmax(logits)[1] =" in loss and "onehot(y)[1] =" in loss
    assert "dlogits[1] = " + " ".join(f"{v:9.4g}" for v in dlogits[1]) in loss
    forward = section(output, "forward")  # XOR's row 0 is [0, 0]: with zero biases it shows nothing
    assert "X[1] =" in forward and "X[2] =" in forward and "[0] =" not in forward and "[0] =" not in loss


def test_the_preview_rows_skip_rows_whose_input_is_all_zeros():
    assert preview_rows(np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])) == [1, 2]
    assert preview_rows(np.array([[0.0, 0.0], [0.0, 0.0], [3.0, 0.0]])) == [0, 2]  # topped up in order
    assert preview_rows(np.array([[5, 0, 0], [0, 0, 0]])) == [0, 1]
    assert preview_rows(np.array([[1.0]])) == [0]


def test_trained_weights_are_used_and_a_different_model_is_refused(tmp_path):
    cfg = load_config(CONFIGS / "xor.yaml")
    model = prepare(cfg).model
    for layer in model.layers:
        for k in layer.params:
            layer.params[k] = layer.params[k] * 3 + 0.5
    save_model(model, tmp_path / "model.npz")
    output = explain("--config", str(CONFIGS / "xor.yaml"), "--model", str(tmp_path / "model.npz"))
    assert f"trained weights from {tmp_path / 'model.npz'}" in output
    exp = prepare(cfg)
    logits = model.astype(np.float64).forward(exp.data.X_train.astype(np.float64))
    assert f"logits[y]) = {LOSSES['softmax_cross_entropy'].fn(logits, exp.data.y_train)[0]:.6g}" in output

    save_model(prepare(load_config(CONFIGS / "moons.yaml")).model, tmp_path / "other.npz")
    result = invoke_cli(main, "--config", str(CONFIGS / "xor.yaml"), "--model", str(tmp_path / "other.npz"))
    assert result.exit_code == 1
    assert "holds a different model than" in result.output and result.output.count("\n") == 1


def test_model_alone_reads_the_config_beside_it(tmp_path):
    result = invoke_cli(main, "--model", str(CONFIGS / "xor.yaml"))
    assert result.exit_code == 2 and "no run config beside the model" in result.output
    result = invoke_cli(main)
    assert result.exit_code == 2 and "give --config" in result.output


def test_rows_and_seed_pick_the_batch():
    a = explain("--config", str(CONFIGS / "moons.yaml"), "--rows", "3", "--seed", "1", "--max-elements", "5")
    b = explain("--config", str(CONFIGS / "moons.yaml"), "--rows", "3", "--seed", "2", "--max-elements", "5")
    assert "x (3, 2)" in a and a.splitlines()[0] != b.splitlines()[0]


SCALAR_STEP = re.compile(r"^(\S+)\.grad \+= (.+) \* (\S+)\.grad  = (\S+) \* (\S+) = (\S+); running total (\S+)$")


def test_scalar_view_prints_chain_rule_steps_and_equals_the_matrix_pass():
    output = explain("--config", str(CONFIGS / "xor.yaml"), "--rows", "2", "--scalar")
    steps = [m for m in map(SCALAR_STEP.match, output.splitlines()) if m]
    assert len(steps) > 100
    assert steps[0].groups()[1:] == ("1/2", "L", "0.5", "1", "0.5", "0.5")  # loss[n].grad += 1/N * L.grad
    assert {"W0[0,0]", "b0[0]", "W2[7,1]", "b2[1]"} <= {m.group(1) for m in steps}
    totals = {}
    for m in steps:  # the product is local * out.grad; the running total adds the products of a value
        product = float(m.group(6))
        assert product == pytest.approx(float(m.group(4)) * float(m.group(5)), rel=2e-3, abs=1e-12)
        totals[m.group(1)] = totals.get(m.group(1), 0.0) + product
        assert float(m.group(7)) == pytest.approx(totals[m.group(1)], rel=1e-2, abs=1e-9)
    assert any(list(m.group(1) for m in steps).count(name) > 1 for name in totals)  # some value is used twice
    agree = re.search(r"scalar and matrix passes agree to (\S+) \(max abs difference\)", output)
    assert float(agree.group(1)) < 1e-12
    for name in ("layers.0.W (2, 8)", "layers.0.b (8,)", "layers.2.W (8, 2)", "layers.2.b (2,)"):
        assert f"  {name}: max |scalar - matrix| = " in output


@pytest.mark.parametrize("config, overrides", [
    ("sine", ["model.layers=[{type: linear, units: 4}, sigmoid, {type: linear, units: 3}, leaky_relu, "
              "{type: linear, units: 3}, identity, relu, {type: linear}]"]),
    ("xor", ["loss=bce_with_logits", "model.layers=[{type: linear, units: 4}, relu, {type: linear}]"]),
    ("xor", ["model.layers=[{type: linear, units: 3, bias: false}, tanh, {type: linear}]"]),
])
def test_scalar_gradients_equal_the_matrix_ones_for_every_supported_layer_and_loss(config, overrides):
    cfg = load_config(CONFIGS / f"{config}.yaml", overrides)
    exp = prepare(cfg)
    assert exp.model.n_params <= MAX_PARAMS
    t = trace(exp.model, exp.loss, exp.data.X_train[:3], exp.data.y_train[:3], check=False)
    result = scalar_pass(t)
    assert result.loss == pytest.approx(t.loss.value, rel=1e-12)
    names = {f"{s.name}.{k}" for s in t.steps for k in s.layer.params}
    assert set(result.grads) == names
    for s in t.steps:
        for k in s.layer.params:
            np.testing.assert_allclose(result.grads[f"{s.name}.{k}"], s.grads[k], rtol=1e-10, atol=1e-14)


def test_scalar_refuses_large_models_and_other_layers():
    result = invoke_cli(main, "--config", str(CONFIGS / "moons.yaml"), "--scalar")
    assert result.exit_code == 1
    assert result.output == (f"Error: --scalar is for tiny models: this one has 1,218 parameters, "
                             f"the limit is {MAX_PARAMS}\n")
    result = invoke_cli(main, "--config", str(CONFIGS / "xor.yaml"), "--scalar",
                        "--set", "model.layers=[{type: linear, units: 4}, layernorm, {type: linear}]")
    assert result.exit_code == 1
    assert result.output.startswith("Error: --scalar supports the layers identity, leaky_relu, linear, relu")
    assert result.output.endswith("; layers.1 is layernorm\n")


RESIDUAL = ["model.layers=[{type: linear, units: 4}, {type: residual, layers: [{type: linear, units: 3}, tanh, "
            "{type: residual, layers: [dropout, {type: linear}]}, {type: linear}]}, {type: linear}]"]


def test_a_residual_is_walked_into_its_add_and_the_sum_of_its_two_gradients_shown():
    output = explain("--config", str(CONFIGS / "xor.yaml"), "--rows", "3", *(f"--set={o}" for o in RESIDUAL))
    cfg = load_config(CONFIGS / "xor.yaml", RESIDUAL)
    assert_every_step_agrees(output, cfg)
    forward, backward = section(output, "forward"), section(output, "backward")
    order = re.findall(r"^ *(layers[.\d]+) (\w+)", forward, re.M)
    assert order == [("layers.0", "linear"), ("layers.1", "residual"), ("layers.1.0", "linear"),
                     ("layers.1.1", "tanh"), ("layers.1.2", "residual"), ("layers.1.2.0", "dropout"),
                     ("layers.1.2.1", "linear"), ("layers.1.2", "residual"), ("layers.1.3", "linear"),
                     ("layers.1", "residual"), ("layers.2", "linear")]
    assert re.findall(r"^ *(layers[.\d]+) \w+", backward, re.M) == [name for name, _ in order[::-1]]
    assert "    layers.1.0 linear: out = x @ W + b" in forward and "      layers.1.2.0 dropout" in backward
    assert "      x (3, 4) is used twice: f = layers.1.0 .. layers.1.3 takes it, and the skip connection" in forward
    assert "      x (3, 4) + f(x) (3, 4) (the output of layers.1.3) -> out (3, 4)" in forward
    assert ("      the sum passes dout on unchanged to both terms: to f(x), back into layers.1.3, and to x along "
            "the skip connection") in backward
    assert "  layers.1 residual: x fed f and the skip connection, so its two gradients add" in backward
    assert "    fwd: out = x + f(x)  =>  dx = dout + df(dout)" in backward
    assert "      dout (3, 4) along the skip + df (3, 4) back through f (the dx of layers.1.0) -> dx (3, 4)" in backward

    exp = prepare(cfg)
    rows = np.sort(np.random.default_rng(0).choice(4, 3, replace=False))  # the rows mlp-explain --seed 0 picks
    t = trace(exp.model, exp.loss, exp.data.X_train[rows], exp.data.y_train[rows], check=False)
    forks = [s.block for s in t.steps if isinstance(s, BlockEnd) and s.end == "fork"]
    assert [b.name for b in forks] == ["layers.1", "layers.1.2"]
    for b in forks:  # the printed sum is the block's own backward, to the last bit
        assert np.array_equal(b.grads["dx"], b.dout + b.df)
        assert np.array_equal(b.out, b.x + b.fx)
    inner = {s.name: s for s in t.steps if not isinstance(s, BlockEnd)}
    assert np.array_equal(forks[0].df, inner["layers.1.0"].grads["dx"])
    assert np.array_equal(forks[0].dout, inner["layers.1.3"].dout)  # the join hands dout on to f unchanged
    block = forks[0]
    printed = re.search(r"layers\.1 residual: x fed f.*?\n      dx\[0\] = ([^\n]*)", backward, re.S).group(1)
    assert printed.split() == [f"{v + 0.0:.4g}" for v in block.grads["dx"][0]]


def test_scalar_refuses_a_residual_with_one_line():
    result = invoke_cli(main, "--config", str(CONFIGS / "xor.yaml"), "--scalar",
                        "--set", "model.layers=[{type: linear, units: 2}, {type: residual, layers: [tanh]}, {type: linear}]")
    assert result.exit_code == 1
    with_scalar = [t.name for t in LAYERS.values() if callable(t.scalar)]  # the table's, however it grows
    assert {"linear", "relu", "tanh", "sigmoid"} <= set(with_scalar) and "residual" not in with_scalar
    assert result.output == f"Error: --scalar supports the layers {', '.join(with_scalar)}; layers.1 is residual\n"


def test_model_alone_uses_the_config_beside_it(tmp_path):
    (tmp_path / "config.yaml").write_text((CONFIGS / "xor.yaml").read_text())
    save_model(prepare(load_config(CONFIGS / "xor.yaml")).model, tmp_path / "model.npz")
    output = explain("--model", str(tmp_path / "model.npz"), "--rows", "2")
    assert output.startswith("config: training rows") and "trained weights from" in output
    assert CLOSING.search(output)


def test_training_never_imports_the_teaching_views():
    code = ("import sys, mlp_manual, mlp_manual.cli.train, mlp_manual.training.trainer; "
            "print(sorted(m for m in sys.modules if m.startswith('mlp_manual.explain')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"

