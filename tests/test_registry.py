"""The layer registry: every entry builds and rebuilds, options are checked with the messages
configs have always given, and a type registered at run time works in configs, build_model,
save/load and the gradient checker like a built-in."""

import json
import math

import numpy as np
import pytest
from conftest import check_layer_gradients

from mlp_manual.config import config_from_dict
from mlp_manual.errors import ConfigError, LayerError, ModelFileError
from mlp_manual.gradcheck.suites import check_builtins
from mlp_manual.layers import Layer, ReLU
from mlp_manual.layers.options import FEATURES, LAYER_LIST
from mlp_manual.layers.registry import (
    LAYER_TYPES,
    LAYERS,
    Build,
    LayerType,
    build_layer,
    make_layer,
    output_width,
    register,
    unregister,
)
from mlp_manual.layers.types import Units
from mlp_manual.model import Model, build_model
from mlp_manual.options import NUMBER, Option
from mlp_manual.predict.model_file import (
    load_model,
    model_arrays,
    model_from_arrays,
    save_model,
)
from mlp_manual.training.diagnostics import unit_fraction

BUILTIN_NAMES = ["linear", "relu", "leaky_relu", "sigmoid", "tanh", "gelu", "identity", "softmax", "dropout",
                 "layernorm", "rmsnorm", "batchnorm"]


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_every_builtin_entry_builds_and_its_spec_rebuilds_it(name, rng):
    layer_type = LAYERS[name]
    layer = build_layer(layer_type, {"type": name}, 5, Build(rng, np.float64), output=3)
    assert type(layer) is layer_type.cls is LAYER_TYPES[name]
    out = layer.forward(rng.normal(size=(4, 5)))
    assert out.shape == (4, output_width(layer, 5)) == (4, 3 if name == "linear" else 5)
    spec = Model([layer]).spec()[0]
    assert spec["type"] == name
    twin = make_layer(layer_type, {k: v for k, v in spec.items() if k != "type"}, rng, np.float64)
    assert twin.config() == layer.config()
    assert Model([layer]).input_width() == (5 if layer_type.widths.input else None)


def test_the_registry_holds_the_tables_rows_listed_by_name():
    from mlp_manual.layers.types import BUILTINS

    builtins = [t for t in LAYERS.values() if t.module is None]
    assert builtins == list(BUILTINS.values()) and {*BUILTIN_NAMES, "residual", "embedding"} <= set(LAYERS)
    assert [t.name for t in builtins] == sorted(t.name for t in builtins)


@pytest.mark.parametrize("spec, message", [
    (7, "model.layers[0] must be a layer name or a mapping with a 'type' key, got 7"),
    ({"units": 3}, "model.layers[0] must be a layer name or a mapping with a 'type' key, got {'units': 3}"),
    ({"type": 5}, "model.layers[0]: unknown layer type 5; valid types: " + ", ".join(LAYERS)),
    ({"type": "relu", "slope": 0.1}, "model.layers[0]: unknown option 'slope' for relu; relu takes: no options"),
    ({"type": "batchnorm", "moment": 0.1},
     "model.layers[0]: unknown option 'moment' for batchnorm (did you mean 'momentum'?); batchnorm takes: momentum, eps"),
    ({"type": "linear", "units": 0}, "model.layers[0].units must be a positive integer, got 0"),
    ({"type": "linear", "units": True}, "model.layers[0].units must be a positive integer, got True"),
    ({"type": "linear", "units": 2.0}, "model.layers[0].units must be a positive integer, got 2.0"),
    ({"type": "linear", "init": "he"}, "model.layers[0].init must be one of glorot_normal, glorot_uniform, "
                                       "he_normal, he_uniform, kaiming_normal, kaiming_uniform, lecun_normal, "
                                       "lecun_uniform, xavier_normal, xavier_uniform; got 'he'"),
    ({"type": "linear", "bias": "yes"}, "model.layers[0].bias must be true or false, got 'yes'"),
    ({"type": "dropout", "p": "half"}, "model.layers[0].p must be a number, got 'half'"),
    ({"type": "dropout", "p": True}, "model.layers[0].p must be a number, got True"),
    ({"type": "dropout", "p": 1}, "model.layers[0].p must be in [0, 1), got 1"),
    ({"type": "dropout", "p": math.nan}, "model.layers[0].p must be in [0, 1), got nan"),
    ({"type": "layernorm", "eps": 0}, "model.layers[0].eps must be > 0, got 0"),
    ({"type": "rmsnorm", "eps": math.inf}, "model.layers[0].eps must be > 0, got inf"),
    ({"type": "batchnorm", "momentum": 1.5}, "model.layers[0].momentum must be in [0, 1], got 1.5"),
    ({"type": "batchnorm", "momentum": -0.1}, "model.layers[0].momentum must be in [0, 1], got -0.1"),
    ({"type": "leaky_relu", "slope": -math.inf}, "model.layers[0].slope must be a finite number, got -inf"),
    ({"type": "leaky_relu", "slope": None}, "model.layers[0].slope must be a number, got None"),
])
def test_options_are_checked_with_the_messages_configs_give(spec, message):
    with pytest.raises(ConfigError) as e:
        config_from_dict({"model": {"layers": [spec]}}, "x.yaml")
    assert str(e.value).startswith("x.yaml: " + message)


def test_valid_specs_are_kept_as_written():
    layers = ["relu", {"units": 8, "type": "linear", "bias": False}, {"type": "leaky_relu", "slope": -2},
              {"type": "batchnorm", "eps": 1, "momentum": 0}]
    cfg = config_from_dict({"model": {"layers": layers}})
    assert cfg.model.layers == ({"type": "relu"}, *layers[1:])


def test_only_the_last_linear_may_omit_units(rng):
    with pytest.raises(ConfigError, match=r"^model.layers\[0\]: linear needs 'units' \(only the last linear may "):
        build_model([{"type": "linear"}, {"type": "linear", "units": 2}], 3, 4, rng)
    model = build_model([{"type": "linear", "units": 5}, {"type": "relu"}, {"type": "linear"}, {"type": "tanh"}],
                        3, 4, rng, init="glorot_normal")
    assert [layer.config().get("out_features") for layer in model.layers] == [5, None, 4, None]
    assert model.layers[0].init == "glorot_normal"


class Scale(Layer):
    """out = x * gamma, per feature: a user's layer, registered at run time.

    Params: gamma (D,) = start."""

    def __init__(self, features: int, start: float = 1.0, dtype=np.float32):
        super().__init__()
        self.features, self.start = int(features), float(start)
        self.params["gamma"] = np.full(self.features, self.start, dtype=dtype)  # (D,)
        self.grads = {"gamma": np.zeros_like(self.params["gamma"])}
        self.x = None

    def forward(self, x):
        self.x = x  # (N, D)
        return x * self.params["gamma"]

    def backward(self, dout):
        x = self.saved(self.x)
        # fwd: out = x * gamma  =>  dgamma = sum_N(dout * x), dx = dout * gamma
        self.grads["gamma"] = (dout * x).sum(axis=0)
        return dout * self.params["gamma"]

    def config(self):
        return {"features": self.features, "start": self.start}


@pytest.fixture
def scale_type():
    layer_type = register(LayerType("scale", Scale, {"start": Option(NUMBER, 1.0, math.isfinite, "be a finite number")},
                                    FEATURES, ("dtype",), units=Units("dead", lambda layer, out: out == 0)))
    yield layer_type
    unregister("scale")


SCALED = [{"type": "linear", "units": 4}, {"type": "scale", "start": 0.5}, "relu", {"type": "linear"}]


def test_a_type_registered_at_run_time_is_checked_built_saved_and_loaded(scale_type, rng, tmp_path):
    cfg = config_from_dict({"model": {"layers": SCALED}}, "x.yaml")
    with pytest.raises(ConfigError, match=r"x.yaml: model.layers\[0\].start must be a finite number, got nan"):
        config_from_dict({"model": {"layers": [{"type": "scale", "start": math.nan}]}}, "x.yaml")
    with pytest.raises(ConfigError, match=r"unknown option 'features' for scale; scale takes: start$"):
        config_from_dict({"model": {"layers": [{"type": "scale", "features": 3}]}}, "x.yaml")
    model = build_model(list(cfg.model.layers), 3, 2, rng, np.float64)
    assert isinstance(model.layers[1], Scale) and model.layers[1].params["gamma"].tolist() == [0.5] * 4
    assert model.spec()[1] == {"type": "scale", "features": 4, "start": 0.5}
    check_layer_gradients(model.layers[1], rng.normal(size=(5, 4)), rng)
    x = rng.normal(size=(6, 3))
    save_model(model, tmp_path / "model.npz")
    loaded = load_model(tmp_path / "model.npz")
    assert isinstance(loaded.layers[1], Scale) and np.array_equal(loaded.forward(x), model.forward(x))
    unregister("scale")
    try:
        with pytest.raises(ModelFileError, match=r"layer 1 has unknown type 'scale'"):
            load_model(tmp_path / "model.npz")
        with pytest.raises(ConfigError, match=r"unknown layer type 'scale'"):
            config_from_dict({"model": {"layers": SCALED}})
    finally:
        register(scale_type)


def test_the_gradient_checker_and_diagnostics_take_a_registered_type(scale_type):
    suite = check_builtins(layer_shapes=((2, 3),))
    assert "scale x(2, 3)" in [rep.label for rep in suite.reports] and suite.passed
    assert unit_fraction(Scale(2, 0.0), np.array([[0.0, 1.0], [0.0, 0.0]])) == ("dead_fraction", 0.5)
    assert unit_fraction(Scale(2), np.zeros((2, 2))) == ("dead_fraction", 1.0)
    assert unit_fraction(ReLU(), np.array([[0.0, 1.0], [0.0, 0.0]])) == ("dead_fraction", 0.5)


def test_register_refuses_a_taken_name_a_registered_class_and_a_non_layer(scale_type):
    with pytest.raises(LayerError, match=r"cannot register layer type 'relu': ReLU is already registered as 'relu'"):
        register(LayerType("relu", Scale))
    with pytest.raises(LayerError, match=r"Scale is already registered as 'scale'"):
        register(LayerType("scale2", Scale))
    with pytest.raises(LayerError, match=r"is not a subclass of mlp_manual.Layer"):
        register(LayerType("thing", dict))


class Block(Layer):
    """A layer with nested layer specs (only its config is exercised here)."""

    def __init__(self, layers):
        super().__init__()
        self.layers = layers


def test_a_nested_spec_option_checks_every_inner_spec():
    register(LayerType("block", Block, {"layers": Option(LAYER_LIST)}))
    try:
        cfg = config_from_dict({"model": {"layers": [{"type": "block", "layers": ["relu", {"type": "tanh"}]}]}})
        assert cfg.model.layers[0]["layers"] == [{"type": "relu"}, {"type": "tanh"}]
        for inner, message in [
            (5, "model.layers[0].layers must be a list of layers, got 5"),
            (["rleu"], "model.layers[0].layers[0]: unknown layer type 'rleu' (did you mean 'relu'?)"),
            ([{"type": "dropout", "p": 2}], "model.layers[0].layers[0].p must be in [0, 1), got 2"),
            ([{"type": "block", "layers": [{"type": "linear", "units": 0}]}],
             "model.layers[0].layers[0].layers[0].units must be a positive integer, got 0"),
        ]:
            with pytest.raises(ConfigError) as e:
                config_from_dict({"model": {"layers": [{"type": "block", "layers": inner}]}}, "x.yaml")
            assert str(e.value).startswith(f"x.yaml: {message}")
    finally:
        unregister("block")


def _with_layer_spec(arrays, i, **changes):
    spec = json.loads(str(arrays["__spec__"]))
    spec["layers"][i].update(changes)
    return {**arrays, "__spec__": np.array(json.dumps(spec))}


@pytest.mark.parametrize("i, changes, message", [
    (1, {"eps": "small"}, "layer 1 (layernorm) has eps 'small', expected a value like 1e-05"),
    (1, {"eps": math.inf}, "layer 1 (layernorm) has eps inf, expected a value like 1e-05"),
    (1, {"eps": -1.0}, "layer 1 (layernorm) cannot be rebuilt: layernorm eps must be > 0, got -1.0"),
    (2, {"p": 1.5}, "layer 2 (dropout) cannot be rebuilt: dropout p must be in [0, 1), got 1.5"),
    (0, {"init": "he"}, "layer 0 (linear) has init 'he', expected a value like 'he_uniform'"),
    (0, {"units": 3}, "layer 0 (linear) has unknown option 'units'"),
    (0, {"in_features": 7}, "layer 0 (linear) has in_features 7, which its stored arrays (dimensions [3, 4]) "
                            "do not have"),
])
def test_the_model_file_loader_checks_stored_options_against_the_registry(rng, i, changes, message):
    model = build_model([{"type": "linear", "units": 4}, {"type": "layernorm"}, {"type": "dropout"}], 3, 2, rng)
    model_from_arrays(model_arrays(model), "m.npz")
    with pytest.raises(ModelFileError) as e:
        model_from_arrays(_with_layer_spec(model_arrays(model), i, **changes), "m.npz")
    assert str(e.value) == f"m.npz: {message}"
