"""Layers of the user's own code in training: ``--import MODULE`` registers the Layer subclasses
a module defines as ``MODULE:Class``, their constructors declare options and widths, and runs,
model files and checkpoints that hold them work with the same --import, and say which module
they need without it."""

import os
import signal

import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli import evaluate, export, gradcheck, train
from mlp_manual.config import load_config
from mlp_manual.errors import ConfigError, TrainingInterrupted, UserCodeError
from mlp_manual.layers import Layer
from mlp_manual.layers.options import FEATURES, KEEP, UNITS
from mlp_manual.layers.registry import LAYERS
from mlp_manual.layers.user_modules import declared_type, imported_layers
from mlp_manual.options import BOOL, INTEGER, NUMBER, SCALAR, TEXT
from mlp_manual.predict.model_file import load_model
from mlp_manual.runs.run import train_run

MODULE = '''
import numpy as np
from mlp_manual import Layer, Linear  # imported, not defined here: not a type of this module


class Scale(Layer):
    """out = x * s"""

    def __init__(self, features, start=1.0, dtype=np.float32):
        super().__init__()
        self.features, self.start = features, start
        self.params["s"] = np.full(features, start, dtype=dtype)  # (D,)
        self.grads["s"] = np.zeros(features, dtype=dtype)
        self.x = None

    def forward(self, x):
        self.x = x
        return x * self.params["s"]

    def backward(self, dout):
        x = self.saved(self.x)
        self.grads["s"] = (dout * x).sum(axis=0)
        return dout * self.params["s"]

    def config(self):
        return {"features": self.features, "start": self.start}


class Dense(Layer):
    """out = x @ W, W drawn with the run's generator"""

    def __init__(self, in_features, out_features, rng=None, dtype=np.float32, spread=0.5):
        super().__init__()
        self.in_features, self.out_features, self.spread = in_features, out_features, spread
        self.params["W"] = (rng.normal(size=(in_features, out_features)) * spread).astype(dtype)
        self.grads["W"] = np.zeros_like(self.params["W"])
        self.x = None

    def forward(self, x):
        self.x = x
        return x @ self.params["W"]

    def backward(self, dout):
        x = self.saved(self.x)
        self.grads["W"] = x.T @ dout
        return dout @ self.params["W"].T

    def output_width(self, width):
        return self.out_features

    def config(self):
        return {"in_features": self.in_features, "out_features": self.out_features, "spread": self.spread}
'''

CONFIG = """data: {{name: moons, n_samples: 120}}
model:
  layers: [{{type: linear, units: 8}}, {{type: "{m}:Scale", start: 0.5}}, tanh, {{type: "{m}:Dense"}}]
training: {{epochs: 4, batch_size: 16}}
"""


@pytest.fixture
def user_module(module_in_cwd, tmp_path):
    """MODULE in the current folder, and c.yaml using two of its classes; returns its name."""
    name = module_in_cwd(MODULE)
    (tmp_path / "c.yaml").write_text(CONFIG.format(m=name))
    return name


class Shift:  # a constructor with an option of every kind
    def __init__(self, by=0.0, times=1, flag=True, label="x", extra=None):
        pass


def test_the_constructor_declares_widths_options_and_wants(user_module):
    with imported_layers([user_module]) as added:
        assert [t.name for t in added] == [f"{user_module}:Scale", f"{user_module}:Dense"]
        scale, dense = added
        assert (scale.widths, list(scale.options), scale.wants, scale.module) == (FEATURES, ["start"], ("dtype",),
                                                                                  user_module)
        assert (dense.widths, list(dense.options), dense.wants) == (UNITS, ["spread"], ("rng", "dtype"))
        assert list(dense.config_options) == ["units", "spread"]
    assert f"{user_module}:Scale" not in LAYERS
    shift = declared_type("m:Shift", type("Shift", (Layer,), {"__init__": Shift.__init__}), "m")
    assert shift.widths is KEEP and [o.kind for o in shift.options.values()] == [NUMBER, INTEGER, BOOL, TEXT, SCALAR]
    assert [o.default for o in shift.options.values()] == [0.0, 1, True, "x", None]


def test_a_run_with_user_layers_trains_saves_and_loads_with_the_same_import(user_module, tmp_path):
    result = invoke_cli(train.main, "c.yaml", "--import", user_module, "--out", "run", "-q")
    assert result.exit_code == 0, result.output
    with imported_layers([user_module]):
        model = load_model(tmp_path / "run" / "model.npz")
        assert model.spec()[1] == {"type": f"{user_module}:Scale", "features": 8, "start": 0.5}
        assert model.spec()[3] == {"type": f"{user_module}:Dense", "in_features": 8, "out_features": 2,
                                   "spread": 0.5}
    evaluated = invoke_cli(evaluate.main, "--model", "run/model.npz", "--split", "val", "--import", user_module)
    assert evaluated.exit_code == 0 and evaluated.output.startswith("moons val: 24 samples"), evaluated.output
    missing = invoke_cli(export.main, "--model", "run/model.npz")
    assert missing.exit_code == 1
    names_code = (f"names code, the Python module {user_module}: import it with --import {user_module} only if "
                  "that code is yours or you trust it (importing runs it)")  # a run someone sent runs it so
    assert missing.output == f"Error: run/model.npz: layer 1 has type '{user_module}:Scale', which {names_code}\n"
    config = invoke_cli(evaluate.main, "--model", "run/model.npz")
    assert config.output == (f"Error: run/config.yaml: model.layers[1]: layer type '{user_module}:Scale' "
                             f"{names_code}\n")


def test_an_interrupted_run_with_user_layers_resumes_bit_for_bit(user_module, tmp_path):
    with imported_layers([user_module]):
        cfg = load_config("c.yaml")
        train_run(cfg, "straight", echo=lambda line: None)

        def echo(line):  # Ctrl-C after epoch 2
            if line.startswith("epoch 2/"):
                os.kill(os.getpid(), signal.SIGINT)

        with pytest.raises(TrainingInterrupted):
            train_run(cfg, "cut", echo=echo)
    refused = invoke_cli(train.main, "--resume", "cut")
    assert refused.exit_code == 1 and f"import it with --import {user_module} only if" in refused.output
    result = invoke_cli(train.main, "--resume", "cut", "--import", user_module, "-q")
    assert result.exit_code == 0, result.output
    with np.load(tmp_path / "straight" / "model.npz") as a, np.load(tmp_path / "cut" / "model.npz") as b:
        assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files if k != "__spec__")
    with imported_layers([user_module]):
        assert load_model("cut/model.npz").spec() == load_model("straight/model.npz").spec()


def test_a_module_is_imported_by_path_too(user_module, tmp_path):
    (tmp_path / "lib").mkdir()
    os.replace(tmp_path / f"{user_module}.py", tmp_path / "lib" / f"{user_module}.py")
    with imported_layers([f"lib/{user_module}.py"]) as added:
        assert [t.name for t in added] == [f"{user_module}:Scale", f"{user_module}:Dense"]


BAD_MODULES = {
    "no_default": ("from mlp_manual import Layer\n\nclass Pick(Layer):\n    def __init__(self, k):\n"
                   "        super().__init__()\n",
                   ":Pick: the constructor argument 'k' has no default; every argument but the widths (features, or "
                   "in_features and out_features), rng and dtype is an option a config may leave out, so give it a "
                   "default"),
    "list_default": ("from mlp_manual import Layer\n\nclass Pick(Layer):\n    def __init__(self, ks=(1, 2)):\n"
                     "        super().__init__()\n",
                     ":Pick: the constructor argument 'ks' has the default (1, 2); an option's default must be a "
                     "number, a string, true or false, or None"),
    "no_layers": ("class Swish:\n    pass\n", " defines no layer class (a subclass of mlp_manual.Layer)"),
}


@pytest.mark.parametrize("case", list(BAD_MODULES))
def test_a_module_a_config_cannot_use_is_refused_by_name(module_in_cwd, case):
    text, message = BAD_MODULES[case]
    name = module_in_cwd(text)
    before = dict(LAYERS)
    with pytest.raises(UserCodeError) as e, imported_layers([name]):
        pass
    assert str(e.value) == f"--import {name}: {name}{message}"
    assert dict(LAYERS) == before


def test_a_class_whose_config_does_not_rebuild_it_or_whose_constructor_raises_is_refused(module_in_cwd, tmp_path):
    name = module_in_cwd("from mlp_manual import Layer\n\n"
                         "class Forgetful(Layer):\n    def __init__(self, features, gain=1.0):\n"
                         "        super().__init__()\n"
                         "        if gain < 0:\n            raise ValueError('negative gain')\n")
    (tmp_path / "c.yaml").write_text(f"data: {{name: moons}}\n"
                                     f"model: {{layers: [{{type: '{name}:Forgetful'}}, {{type: linear}}]}}\n")
    result = invoke_cli(train.main, "c.yaml", "--import", name, "--out", "run")
    assert result.output.splitlines()[-1] == (
        f"Error: model.layers[0] ({name}:Forgetful): Forgetful.config() returns {{}}; it must return the constructor "
        "arguments the layer was built with, {'features': 2}, from which a saved model rebuilds it")
    result = invoke_cli(train.main, "c.yaml", "--import", name, "--set", "model.layers.0.gain=-1", "--out", "run")
    assert result.output.splitlines()[-1] == (f"Error: model.layers[0] ({name}:Forgetful): Forgetful(features=2, "
                                              "gain=-1) raised ValueError: negative gain")


def test_config_errors_name_the_module_to_import_or_its_types(user_module):
    with pytest.raises(ConfigError) as e:
        load_config("c.yaml")
    assert str(e.value) == (f"c.yaml: model.layers[1]: layer type '{user_module}:Scale' names code, the Python "
                            f"module {user_module}: import it with --import {user_module} only if that code is "
                            "yours or you trust it (importing runs it)")
    with imported_layers([user_module]), pytest.raises(ConfigError) as e:
        load_config("c.yaml", [f"model.layers.1.type={user_module}:Scal"])
    assert f"unknown layer type '{user_module}:Scal' (did you mean '{user_module}:Scale'?)" in str(e.value)


def test_gradcheck_checks_the_imported_types_with_the_built_ins(user_module):
    result = invoke_cli(gradcheck.main, "--import", user_module, "--json")
    assert result.exit_code == 0, result.output
    assert f'"{user_module}:Scale x(1, 5)"' in result.output and f'"{user_module}:Dense x(6, 3)"' in result.output


def test_gradcheck_layer_takes_a_py_file_and_import_errors_name_the_option(user_module, tmp_path):
    (tmp_path / "plain.py").write_text("from mlp_manual import Tanh\n\ndef make():\n    return Tanh()\n")
    assert invoke_cli(gradcheck.main, "--layer", "plain.py:make", "--input-shape", "3,2").exit_code == 0
    missing = invoke_cli(gradcheck.main, "--layer", "nope.py:make", "--input-shape", "3,2")
    assert missing.output == ("Error: --layer nope.py:make: no file nope.py; name a .py file, or a module to import "
                              "from the current folder without .py\n")
    result = invoke_cli(train.main, "c.yaml", "--import", "no_such_module_anywhere")
    assert result.output == ("Error: --import no_such_module_anywhere: cannot import 'no_such_module_anywhere': "
                             "ModuleNotFoundError: No module named 'no_such_module_anywhere'\n")
