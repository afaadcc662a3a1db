"""A user's layer that breaks the layer contract ends every command that runs it in one line naming
the layer's type (``MODULE:Class``) and what to change: a constructor without
``super().__init__()``, a ``units`` layer without ``output_width``, a forward or backward that
returns the wrong kind, shape or dtype, or raises."""

import copy
import sys

import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli import evaluate, explain, gradcheck, predict, train
from mlp_manual.layers.user_modules import check_user_layers, imported_layers
from mlp_manual.model import build_model

HEADER = "import numpy as np\nfrom mlp_manual import Layer\n\n\n"

# class name -> (its code, the spec's extra options, the message after "Error: <where> (<module>:<class>): ")
MISTAKES = {
    "NoSuper": ('''class NoSuper(Layer):
    def __init__(self, features, dtype=np.float32):
        self.features, self.s = features, np.ones(features, dtype=dtype)

    def forward(self, x):
        return x * self.s

    def backward(self, dout):
        return dout * self.s

    def config(self):
        return {"features": self.features}
''', "", "model.layers[1]", "NoSuper.__init__ does not call super().__init__(), so the layer has no params, grads, "
                            "buffers, training; call it first in __init__"),
    "NoWidth": ('''class NoWidth(Layer):
    def __init__(self, in_features, out_features, rng=None, dtype=np.float32):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.params["W"] = rng.normal(size=(in_features, out_features)).astype(dtype)
        self.grads["W"] = np.zeros_like(self.params["W"])

    def forward(self, x):
        self.x = x
        return x @ self.params["W"]

    def backward(self, dout):
        self.grads["W"] = self.x.T @ dout
        return dout @ self.params["W"].T

    def config(self):
        return {"in_features": self.in_features, "out_features": self.out_features}
''', ", units: 4", "model.layers[1]",
        "NoWidth takes in_features and out_features but defines no output_width(width), so the layers after it "
        "would get 8 features instead of 4; define output_width(self, width) to return self.out_features (or what "
        "your forward gives)"),
    "FirstColumn": ('''class FirstColumn(Layer):
    def forward(self, x):
        return x[:, :1]

    def backward(self, dout):
        return dout
''', "", "layers.1", "forward returned shape (8, 1) for its input of shape (8, 8), expected (8, 8) "
                     "(output_width(8) says 8 features)"),
    "Widened": ('''class Widened(Layer):
    def forward(self, x):
        return x.astype(np.float64)

    def backward(self, dout):
        return dout
''', "", "layers.1", "forward returned float64, not float32 as its input of shape (8, 8); a layer computes in the "
                     "run's dtype (make every array in the dtype its constructor is given, or its input's)"),
    "AsList": ('''class AsList(Layer):
    def forward(self, x):
        return x.tolist()

    def backward(self, dout):
        return dout
''', "", "layers.1", "forward returned list, not a numpy array"),
    "OneRowBack": ('''class OneRowBack(Layer):
    def forward(self, x):
        return x * 2

    def backward(self, dout):
        return dout[:1] * 2
''', "", "layers.1", "backward returned shape (1, 8) for its input of shape (8, 8), expected (8, 8) (dx has the "
                     "input's shape)"),
    "LostGrad": ('''class LostGrad(Layer):
    def __init__(self, features, dtype=np.float32):
        super().__init__()
        self.features = features
        self.params["s"] = np.ones(features, dtype=dtype)

    def forward(self, x):
        return x * self.params["s"]

    def backward(self, dout):
        return dout * self.params["s"]

    def config(self):
        return {"features": self.features}
''', "", "layers.1", "after backward its grads have the keys [], its params ['s']; every parameter needs its "
                     "gradient, under the same key"),
    "Raises": ('''class Raises(Layer):
    def forward(self, x):
        return np.log(x, where=x > 0, out=None, dtype="no such dtype")

    def backward(self, dout):
        return dout
''', "", "layers.1", "forward raised TypeError: data type 'no such dtype' not understood"),
}
COMMANDS = {"mlp-train": (train.main, ["--out", "run"]), "mlp-explain": (explain.main, []),
            "mlp-gradcheck": (gradcheck.main, [])}


def config_with(name: str, cls: str, extra: str) -> str:
    return (f"data: {{name: moons, n_samples: 100}}\n"
            f"model: {{layers: [{{type: linear, units: 8}}, {{type: '{name}:{cls}'{extra}}}, relu, {{type: linear}}]}}\n"
            "training: {epochs: 2, batch_size: 16}\n")


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("cls", list(MISTAKES))
def test_a_broken_user_layer_is_one_line_naming_its_type_in_every_command(module_in_cwd, tmp_path, cls, command):
    code, extra, where, message = MISTAKES[cls]
    name = module_in_cwd(HEADER + code)
    (tmp_path / "c.yaml").write_text(config_with(name, cls, extra))
    main, options = COMMANDS[command]
    result = invoke_cli(main, "c.yaml", "--import", name, *options)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1] == f"Error: {where} ({name}:{cls}): {message}"
    assert not (tmp_path / "run" / "model.npz").exists()


SCALE = '''class Scale(Layer):
    def __init__(self, features, dtype=np.float32):
        super().__init__()
        self.features = features
        self.params["s"] = np.full(features, 0.5, dtype=dtype)
        self.grads["s"] = np.zeros(features, dtype=dtype)

    def forward(self, x):
        self.x = x
        return x * self.params["s"]

    def backward(self, dout):
        self.grads["s"] = (dout * self.x).sum(axis=0)
        return dout * self.params["s"]

    def config(self):
        return {"features": self.features}
'''


def test_a_trained_models_layer_broken_later_is_named_by_predict_and_eval(module_in_cwd, tmp_path):
    name = module_in_cwd(HEADER + SCALE)
    (tmp_path / "c.yaml").write_text(config_with(name, "Scale", ""))
    assert invoke_cli(train.main, "c.yaml", "--import", name, "--out", "run", "-q").exit_code == 0
    (tmp_path / "new.csv").write_text("x0,x1\n0.5,0.25\n-1,2\n")
    assert invoke_cli(predict.main, "--model", "run/model.npz", "--input", "new.csv", "--import", name).exit_code == 0
    (tmp_path / f"{name}.py").write_text(HEADER + SCALE.replace('return x * self.params["s"]',
                                                                'return (x * self.params["s"]).astype(np.float64)'))
    sys.modules.pop(name)
    message = ("forward returned float64, not float32 as its input of shape ({n}, 8); a layer computes in the run's "
               "dtype (make every array in the dtype its constructor is given, or its input's)")
    result = invoke_cli(predict.main, "--model", "run/model.npz", "--input", "new.csv", "--import", name)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.output.splitlines()[-1] == f"Error: layers.1 ({name}:Scale): {message.format(n=2)}"
    result = invoke_cli(evaluate.main, "--model", "run/model.npz", "--import", name, "--out", "eval")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == f"Error: layers.1 ({name}:Scale): {message.format(n=8)}"


def test_trying_the_user_layers_leaves_the_model_and_its_generators_as_they_were(module_in_cwd, rng):
    name = module_in_cwd(HEADER + SCALE)
    with imported_layers([name]):
        specs = [{"type": "linear", "units": 6}, {"type": "batchnorm"}, {"type": f"{name}:Scale"},
                 {"type": "dropout", "p": 0.3}, {"type": "linear"}]
        model = build_model(specs, 3, 2, rng)
        x = rng.normal(size=(20, 3)).astype(np.float32)  # drawn now: the dropout layer shares this generator
        before = copy.deepcopy(model)
        check_user_layers(model, x)
    assert model.state().keys() == before.state().keys()
    assert all(np.array_equal(v, before.state()[k]) for k, v in model.state().items())
    assert model.layers[3].rng.bit_generator.state == before.layers[3].rng.bit_generator.state
    assert [layer.training for layer in model.layers] == [layer.training for layer in before.layers]
    assert model.layers[2].forward.__func__ is type(model.layers[2]).forward  # the model's own methods


LATE = '''class Late(Layer):
    """Fails on its 21st forward, long after the first rows were tried."""

    def __init__(self, features, dtype=np.float32):
        super().__init__()
        self.features, self.calls = features, 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 20:
            raise ValueError(f"call {self.calls} went wrong")
        return x

    def backward(self, dout):
        return dout

    def config(self):
        return {"features": self.features}
'''


def test_a_user_layer_that_raises_mid_run_is_one_line_naming_its_type_method_and_line(module_in_cwd, tmp_path):
    name = module_in_cwd(HEADER + LATE)
    (tmp_path / "c.yaml").write_text(config_with(name, "Late", ""))
    result = invoke_cli(train.main, "c.yaml", "--import", name, "--out", "run", "--set", "training.epochs=20")
    assert result.exit_code == 1
    line = HEADER.count("\n") + LATE.splitlines().index("            raise ValueError(f\"call {self.calls} went wrong\")") + 1
    assert result.output.splitlines()[-1] == (f"Error: {name}:Late.forward raised ValueError: call 21 went wrong "
                                              f"({name}.py, line {line})")


def test_an_exception_outside_a_users_layer_is_not_blamed_on_one(module_in_cwd):
    from mlp_manual.layers.user_modules import blame_user_layer

    name = module_in_cwd(HEADER + LATE)
    with imported_layers([name]) as (late,):
        layer = late.cls(4)
        layer.calls = 20
        try:
            layer.forward(np.zeros((1, 4)))
        except ValueError as e:
            assert str(blame_user_layer(e)) == (f"{name}:Late.forward raised ValueError: call 21 went wrong "
                                                f"({name}.py, line {HEADER.count(chr(10)) + 11})")
        try:
            np.zeros(2) @ np.zeros(3)
        except ValueError as e:
            assert blame_user_layer(e) is None
