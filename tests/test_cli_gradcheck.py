"""mlp-gradcheck through click's CliRunner: the built-in table, a config's model, a user's own
layer, exit codes, JSON, and a one-line error for every mistake in the input."""

import json
import re
import sys
import textwrap

import pytest
from conftest import invoke_cli

from mlp_manual.cli.gradcheck import main
from mlp_manual.gradcheck.suites import LAYER_SHAPES, builtin_cases
from mlp_manual.layers.registry import LAYERS
from mlp_manual.losses import LOSSES

SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) warnings, (\d+) with kinks")

USER_LAYERS = '''
import numpy as np


class Swish:
    """out = x * sigmoid(x); not a Layer subclass."""

    def __init__(self):
        self.params, self.grads, self.buffers = {}, {}, {}

    def forward(self, x):
        self.x, self.s = x, 1 / (1 + np.exp(-x))
        return x * self.s

    def backward(self, dout):
        return dout * (self.s + self.x * self.s * (1 - self.s))


class ScaledLinear:
    def __init__(self, d=5, h=3, transposed=False):
        rng = np.random.default_rng(0)
        self.params = {"W": rng.normal(size=(d, h)), "b": rng.normal(size=h)}
        self.grads, self.buffers, self.transposed = {}, {}, transposed

    def forward(self, x):
        self.x = x
        return 2 * (x @ self.params["W"]) + self.params["b"]

    def backward(self, dout):
        self.grads["W"] = self.x.T @ dout  # bug: the factor 2 is missing
        self.grads["b"] = dout.sum(axis=0)
        return 2 * dout @ self.params["W"].T


def make_buggy():
    return ScaledLinear()


def make_nothing():
    return None


class NeedsArguments(Swish):
    def __init__(self, width):
        super().__init__()


class Float32Out(Swish):
    def forward(self, x):
        return super().forward(x).astype(np.float32)


class Raises(Swish):
    def forward(self, x):
        raise RuntimeError("boom\\nsecond line")


class WrongDx(Swish):
    def backward(self, dout):
        return super().backward(dout)[:, :1]
'''


def run(*args):
    return invoke_cli(main, *args)


@pytest.fixture
def user_module(module_in_cwd):
    """USER_LAYERS as a module in the current directory."""
    return module_in_cwd(USER_LAYERS)


def test_no_arguments_checks_every_builtin_and_passes():
    result = run()
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("note: inputs are drawn at least 0.1 away from 0")
    assert any(line.split()[:6] == ["check", "tensor", "shape", "max", "abs", "err"] for line in lines)
    for label in ("linear x(1, 5)", "dropout x(6, 3) train", "dropout x(6, 3) eval", "batchnorm x(6, 3) train",
                  "residual x(6, 3)", "softmax_cross_entropy logits(7, 5)",
                  "softmax_cross_entropy label_smoothing 0.1 logits(7, 5)"):
        assert any(line.startswith(label + " ") for line in lines), label
    passed, failed, warnings, kinks = map(int, SUMMARY.match(lines[-1]).groups())
    cases = list(builtin_cases(LAYER_SHAPES, 0))  # every row of the table, in each of its modes
    losses = sum(len(s.check_shapes) + s.smooths for s in LOSSES.values())  # and the smoothed one on its last shape
    tensors = sum(1 + len(layer.params) for _, layer, _, _ in cases) + losses
    indices = sum(LAYERS[label.split()[0]].takes_indices for label, *_ in cases)  # dx of integer inputs: none
    assert (passed, failed, warnings, kinks) == (tensors - indices, 0, 0, 0)
    assert lines[-1].endswith(", 2 not differentiable (integer indices)")  # the embedding's input, twice


def test_json_report_parses_and_quiet_prints_one_line():
    result = run("--json")
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["passed"] is True and report["counts"]["failed"] == 0
    assert {t["verdict"] for c in report["checks"] for t in c["tensors"]} == {"PASS", "N/A"}
    assert report["counts"]["not_differentiable"] == 2
    quiet = run("-q", "--seed", "3")
    assert quiet.exit_code == 0 and SUMMARY.match(quiet.output) and len(quiet.output.splitlines()) == 1


def test_a_config_model_gets_one_row_per_parameter():
    result = run("--config", "configs/xor.yaml")
    assert result.exit_code == 0, result.output
    assert re.search(r"^xor \(softmax_cross_entropy\) X\(4, 2\)\s+dlogits\s+\(4, 2\)", result.output, re.M)
    report = json.loads(run("--config", "configs/xor.yaml", "--json").output)
    assert [t["name"] for t in report["checks"][0]["tensors"]] == \
        ["dlogits", "dx", "layers.0.W", "layers.0.b", "layers.2.W", "layers.2.b"]


def test_a_config_with_dropout_and_batchnorm_is_checked_in_both_modes_and_sampled(tmp_path):
    cfg = tmp_path / "drop.yaml"
    cfg.write_text(textwrap.dedent("""
        data: {name: moons, n_samples: 60}
        model:
          layers: [{type: linear, units: 40}, batchnorm, relu, {type: dropout, p: 0.2}, {type: linear}]
        training: {batch_size: 16}
    """))
    result = run("--config", str(cfg), "--max-elements", "30")
    assert result.exit_code == 0, result.output
    assert " train " in result.output and " eval " in result.output
    assert "sampled 30/80, directional" in result.output


def test_a_residual_config_is_checked_through_every_inner_tensor_in_both_modes():
    result = run("--config", "configs/mnist1d_residual.yaml", "--json", "--max-elements", "10")
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["passed"] is True
    assert [c["label"].split()[-1] for c in report["checks"]] == ["train", "eval"]  # dropout inside the blocks
    names = [t["name"] for t in report["checks"][0]["tensors"]]
    assert names[:4] == ["dlogits", "dx", "layers.0.W", "layers.0.b"]
    assert names[4:10] == ["layers.1.0.gamma", "layers.1.0.beta", "layers.1.1.W", "layers.1.1.b", "layers.1.4.W",
                           "layers.1.4.b"]
    assert names[-4:] == ["layers.4.gamma", "layers.4.beta", "layers.6.W", "layers.6.b"] and len(names) == 26


def test_users_own_layer_class_passes(user_module):
    result = run("--layer", f"{user_module}:Swish", "--input-shape", "4,3")
    assert result.exit_code == 0, result.output
    assert f"{user_module}:Swish x(4, 3)" in result.output and SUMMARY.match(result.output.splitlines()[-1])


def test_users_buggy_layer_exits_1_and_names_the_tensor(user_module):
    result = run("--layer", f"{user_module}:make_buggy", "--input-shape", "6,5")
    assert result.exit_code == 1
    assert re.search(r"^\s+W\s+\(5, 3\)\s+\S+\s+\S+\s+\(\d, \d\)\s+FAIL", result.output, re.M), result.output
    assert result.output.splitlines()[-1] == "2 passed, 1 failed, 0 warnings, 0 with kinks"
    report = json.loads(run("--layer", f"{user_module}:make_buggy", "--input-shape", "6,5", "--json").output)
    assert {t["name"]: t["verdict"] for t in report["checks"][0]["tensors"]} == {"dx": "PASS", "W": "FAIL", "b": "PASS"}
    quiet = run("--layer", f"{user_module}:make_buggy", "--input-shape", "6,5", "-q")
    assert quiet.exit_code == 1 and len(quiet.output.splitlines()) == 4  # header, rule, the W row, summary


@pytest.mark.parametrize("attr, message", [
    ("make_nothing", "gave None, which is not a layer: it has no forward, backward, params, grads"),
    ("NeedsArguments", "NeedsArguments() raised TypeError"),
    ("Float32Out", "returned float32 for a float64 input"),
    ("Raises", "forward raised RuntimeError: boom"),
    ("WrongDx", r"must return dx shaped like its input (2, 3), got shape (2, 1)"),
    ("Missing", "has no attribute 'Missing'"),
])
def test_a_layer_that_cannot_be_checked_is_a_one_line_error(user_module, attr, message):
    result = run("--layer", f"{user_module}:{attr}", "--input-shape", "2,3")
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_an_unimportable_module_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "syntax_slip.py").write_text("def f(:\n")
    for spec, message in (("no_such_module:f", "cannot import 'no_such_module': ModuleNotFoundError"),
                          ("syntax_slip:f", "cannot import 'syntax_slip': SyntaxError")):
        result = run("--layer", spec, "--input-shape", "2,3")
        assert result.exit_code == 1 and result.output.startswith(f"Error: --layer {spec}: {message}")
    sys.modules.pop("syntax_slip", None)


@pytest.mark.parametrize("args, message", [
    (["--layer", "no_colon", "--input-shape", "2,3"], "expected MODULE:ATTR"),
    (["--layer", "m:f"], "--layer needs --input-shape"),
    (["--layer", "m:f", "--input-shape", "8,x"], "expected comma-separated positive integers"),
    (["--layer", "m:f", "--input-shape", "0,3"], "expected comma-separated positive integers"),
    (["--input-shape", "2,3"], "--input-shape only applies to --layer"),
    (["--config", "configs/xor.yaml", "--layer", "m:f", "--input-shape", "2,3"], "use either --config or --layer"),
    (["--set", "seed=1"], "--set only applies to --config"),
    (["--tol", "0"], "Invalid value for '--tol'"),
])
def test_usage_errors_exit_2(args, message):
    result = run(*args)
    assert result.exit_code == 2 and message in result.output


@pytest.mark.parametrize("args, message", [
    (["--config", "nope.yaml"], "Error: nope.yaml: no such config file"),
    (["--config", "configs/xor.yaml", "--set", "model.init=gauss"], "Error: configs/xor.yaml with --set"),
])
def test_config_mistakes_are_one_line_errors(args, message):
    result = run(*args)
    assert result.exit_code == 1 and result.output.startswith(message)


LAYERS_OF_A_USER = textwrap.dedent('''
    import numpy as np
    from mlp_manual import Layer

    class Square(Layer):
        def forward(self, x):
            self.x = x
            return x * x
        def backward(self, dout):
            return 2 * self.x * dout

    class Crashes(Layer):
        def forward(self, x):
            return 3 * x
        def backward(self, dout):
            raise TypeError("unsupported operand")

    class ForgetsDout(Layer):
        def forward(self, x):
            self.x = x
            return np.sin(x)
        def backward(self, dout):
            return np.cos(self.x)

    class Gain(Layer):
        def __init__(self, features):
            super().__init__()
            self.params["g"] = np.linspace(0.5, 1.5, features)
            self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}
        def forward(self, x):
            self.x = x
            return x * self.params["g"]
        def backward(self, dout):
            self.grads["g"] = (dout * self.x).sum(0)
            return dout * self.params["g"]
        def config(self):
            return {"features": len(self.params["g"])}
''')


def test_import_checks_every_class_of_the_module_and_marks_each(tmp_path, monkeypatch):
    (tmp_path / "their_layers.py").write_text(LAYERS_OF_A_USER)
    monkeypatch.chdir(tmp_path)
    result = invoke_cli(main, "--import", "their_layers")
    assert result.exit_code == 1
    notes = [line for line in result.output.splitlines() if line.startswith("note: your layer")]
    assert notes == [
        "note: your layer their_layers:Square: PASS (2 checks)",
        "note: your layer their_layers:Crashes: FAIL in 2 of 2 checks (their_layers:Crashes x(1, 5): can be checked: "
        "Crashes().backward raised TypeError: unsupported operand)",
        "note: your layer their_layers:ForgetsDout: FAIL in 2 of 2 checks (their_layers:ForgetsDout x(1, 5): dx "
        "disagrees with finite differences)",
        "note: your layer their_layers:Gain: PASS (2 checks)"]
    assert "FAIL  their_layers:Crashes x(6, 3): can be checked: Crashes().backward raised TypeError" in result.output
    assert re.search(r"^their_layers:Gain x\(6, 3\) +dx .* PASS$", result.output, re.MULTILINE)
    assert re.search(r"^linear x\(6, 3\) +dx .* PASS$", result.output, re.MULTILINE)  # the built-ins still checked


def test_layer_builds_a_class_that_takes_its_width_from_the_input_shape(tmp_path, monkeypatch):
    (tmp_path / "their_layers.py").write_text(LAYERS_OF_A_USER)
    monkeypatch.chdir(tmp_path)
    result = invoke_cli(main, "--layer", "their_layers:Gain", "--input-shape", "4,3")
    assert result.exit_code == 0, result.output
    assert re.search(r"^ +g +\(3,\) .* PASS$", result.output, re.MULTILINE)
    result = invoke_cli(main, "--layer", "their_layers:Gain", "--input-shape", "4,3", "--precision")
    assert result.exit_code == 0, result.output
