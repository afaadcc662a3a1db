"""The residual block out = x + f(x): its gradients, its place in the model's dicts, model files,
checkpoints and optimizers, and its error messages."""

import json
import re

import numpy as np
import pytest
from conftest import check_layer_gradients, interrupted_run

from mlp_manual import Model, Residual, build_model, check_layer, load_model, save_model
from mlp_manual.config import config_from_dict, load_config
from mlp_manual.core import Adam, clip_grad_norm, grad_norm
from mlp_manual.errors import (
    ConfigError,
    LayerError,
    ModelFileError,
)
from mlp_manual.layers import BatchNorm1d, Dropout, LayerNorm, Linear, Tanh
from mlp_manual.optimizers import state_arrays
from mlp_manual.predict.model_file import model_arrays, model_from_arrays
from mlp_manual.runs.checkpoint import load_checkpoint
from mlp_manual.runs.run import resume_run, train_run

F64 = np.float64


def moved(layer, rng):
    """``layer`` with every parameter moved off its initial value (through the block's view)."""
    for k, p in layer.params.items():
        layer.params[k] = p + rng.normal(size=p.shape) * 0.5
    return layer


def block(rng, width=4, hidden=3):
    """x + linear(tanh(layernorm(linear(x)))): every inner kind of tensor, widths D -> H -> D."""
    return moved(Residual([Linear(width, hidden, rng=rng, dtype=F64), Tanh(), LayerNorm(hidden, dtype=F64),
                           Linear(hidden, width, rng=rng, dtype=F64)]), rng)


@pytest.mark.parametrize("batch", [1, 5])
def test_dx_and_every_inner_parameter_match_finite_differences(batch, rng):
    layer = block(rng)
    errors = check_layer_gradients(layer, rng.normal(size=(batch, 4)), rng)
    assert set(errors) == {"dx", "0.W", "0.b", "2.gamma", "2.beta", "3.W", "3.b"}


def test_a_residual_inside_a_residual_with_dropout_and_batchnorm(rng):
    inner = Residual([BatchNorm1d(4, dtype=F64), Linear(4, 4, rng=rng, dtype=F64), Tanh()])
    layer = moved(Residual([Linear(4, 6, rng=rng, dtype=F64), Tanh(), Dropout(0.3, rng=rng),
                            Linear(6, 4, rng=rng, dtype=F64), inner]), rng)
    layer.rng = layer.layers[2].rng  # check_layer_gradients pins a layer's own generator
    for training in (True, False):
        layer.train(training)
        assert inner.layers[0].training is training and layer.layers[2].training is training
        errors = check_layer_gradients(layer, rng.normal(size=(6, 4)), rng)
        assert {"4.0.gamma", "4.1.W", "3.W"} <= set(errors)


def test_the_gradient_is_the_sum_of_the_two_paths(rng):
    """dx = dout (the skip) + what f's backward returns (the branch), exactly."""
    layer = block(rng)
    x, dout = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    dx = layer.forward(x) is not None and layer.backward(dout)
    branch = dout
    for inner in reversed(layer.layers):
        branch = inner.backward(branch)
    assert np.array_equal(dx, dout + branch)
    assert np.array_equal(layer.forward(x), x + layer.layers[3].forward(layer.layers[2].forward(
        layer.layers[1].forward(layer.layers[0].forward(x)))))


def test_params_grads_and_buffers_are_views_of_the_inner_dicts(rng):
    norm = BatchNorm1d(4)
    layer = Residual([Linear(4, 4, rng=rng), norm])
    assert list(layer.params) == ["0.W", "0.b", "1.gamma", "1.beta"] and list(layer.grads) == list(layer.params)
    assert list(layer.buffers) == ["1.running_mean", "1.running_var"]
    layer.forward(rng.normal(size=(5, 4)).astype(np.float32))  # batch norm replaces its running arrays
    assert layer.buffers["1.running_mean"] is norm.buffers["running_mean"]
    Model([layer]).astype(np.float64)  # writes through the views
    assert norm.params["gamma"].dtype == norm.buffers["running_var"].dtype == layer.layers[0].grads["W"].dtype == F64
    layer.params["1.beta"] = np.full(4, 2.0)
    assert np.array_equal(norm.params["beta"], [2.0] * 4)
    with pytest.raises(KeyError):
        layer.params["2.W"]


def test_backward_before_forward_and_an_empty_block_are_clear_errors(rng):
    with pytest.raises(LayerError, match="Residual.backward called before forward"):
        Residual([Tanh()]).backward(np.ones((2, 3)))
    with pytest.raises(LayerError, match="residual needs a non-empty 'layers' list"):
        Residual([])


def test_inner_layers_that_change_the_width_are_named_with_both_widths(rng):
    with pytest.raises(ConfigError) as e:
        build_model([{"type": "linear", "units": 8}, {"type": "residual", "layers": [{"type": "linear", "units": 5}]},
                      {"type": "linear"}], 3, 2, rng)
    assert str(e.value) == ("model.layers[1] (residual): the inner layers map 8 features to 5; out = x + f(x) "
                            "needs f(x) as wide as x: give the last inner layer 8 units (or leave its units out)")
    nested = {"type": "residual", "layers": [{"type": "residual", "layers": [{"type": "linear", "units": 2}]}]}
    with pytest.raises(ConfigError, match=r"^model.layers\[0\].layers\[0\] \(residual\): the inner layers map 3 "):
        build_model([nested, {"type": "linear"}], 3, 2, rng)
    with pytest.raises(LayerError, match=r"turned input \(2, 3\) into \(2, 5\)"):  # built by hand, run
        Residual([Linear(3, 5, rng=rng)]).forward(np.ones((2, 3), dtype=np.float32))


SPECS = [{"type": "linear", "units": 6},
         {"type": "residual", "layers": [{"type": "linear", "units": 9}, {"type": "relu"}, {"type": "dropout", "p": 0.2},
                                         {"type": "linear"}]},
         {"type": "residual", "layers": [{"type": "batchnorm"},
                                         {"type": "residual", "layers": [{"type": "linear"}, {"type": "tanh"}]}]},
         {"type": "linear"}]


def test_the_model_names_inner_arrays_layers_i_j_key_everywhere(rng):
    model = build_model(SPECS, 4, 3, rng)
    names = [name for name, *_ in model.parameters()]
    assert names == ["layers.0.W", "layers.0.b", "layers.1.0.W", "layers.1.0.b", "layers.1.3.W", "layers.1.3.b",
                     "layers.2.0.gamma", "layers.2.0.beta", "layers.2.1.0.W", "layers.2.1.0.b", "layers.3.W", "layers.3.b"]
    assert set(model.state()) == {*names, "layers.2.0.running_mean", "layers.2.0.running_var"}
    assert [n for n, _ in model.named_layers()][4:7] == ["layers.1.2", "layers.1.3", "layers.2"]
    assert model.n_params == sum(p.size for _, p, _ in model.parameters()) == (4 + 1) * 6 + (6 + 1) * 9 + (9 + 1) * 6 + 12 + 42 + 21
    X = rng.normal(size=(8, 4)).astype(np.float32)
    model.forward(X)
    model.backward(rng.normal(size=(8, 3)).astype(np.float32))
    assert np.all(model.layers[2].layers[1].layers[0].grads["W"] != 0)
    assert model.eval() is model and not model.layers[1].layers[2].training
    assert "  2.1.0: Linear(in_features=6, out_features=6" in model.summary(4)


def test_optimizers_and_clipping_reach_the_inner_parameters(rng):
    model = build_model(SPECS, 4, 3, rng)
    model.forward(rng.normal(size=(8, 4)).astype(np.float32))
    model.backward(rng.normal(size=(8, 3)).astype(np.float32))
    inner_w = model.layers[2].layers[1].layers[0].params["W"]
    before = inner_w.copy()
    grads = [g for _, _, g in model.parameters()]
    total = grad_norm(grads)
    assert clip_grad_norm(grads, total / 2) == pytest.approx(total)
    assert grad_norm(grads) == pytest.approx(total / 2, rel=1e-5)
    optimizer = Adam()
    optimizer.step(model.parameters(), 0.01)
    assert not np.array_equal(model.layers[2].layers[1].layers[0].params["W"], before)
    assert {"m/layers.2.1.0.W", "v/layers.2.1.0.W"} <= set(state_arrays(optimizer))


def test_a_model_file_round_trip_keeps_every_inner_array_and_the_outputs(tmp_path, rng):
    model = build_model(SPECS, 4, 3, rng)
    model.forward(rng.normal(size=(8, 4)).astype(np.float32))  # batch norm's running statistics move
    save_model(model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.spec() == model.spec() and loaded.spec()[2]["layers"][1]["type"] == "residual"
    assert all(np.array_equal(v, loaded.state()[k]) for k, v in model.state().items())
    X = rng.normal(size=(5, 4)).astype(np.float32)
    assert np.array_equal(model.eval().forward(X), loaded.eval().forward(X))


def _with_spec(arrays, change):
    spec = json.loads(str(arrays["__spec__"]))
    change(spec["layers"])
    return {**arrays, "__spec__": np.array(json.dumps(spec))}


def _nest(depth):
    spec = {"type": "tanh"}
    for _ in range(depth):
        spec = {"type": "residual", "layers": [spec]}
    return spec


@pytest.mark.parametrize("change, message", [
    (lambda layers: layers[1]["layers"][0].update(in_features=7),
     "layer 1.0 (linear) has in_features 7, which its stored arrays (dimensions [6, 9]) do not have"),
    (lambda layers: layers[1]["layers"][0].update(out_features=10 ** 9),
     "layer 1.0 (linear) has out_features 1000000000, which its stored arrays (dimensions [6, 9]) do not have"),
    (lambda layers: layers[2]["layers"][1]["layers"][1].update(type="conv"), "layer 2.1.1 has unknown type 'conv'"),
    (lambda layers: layers[1]["layers"][2].update(p=1.5),
     "layer 1.2 (dropout) cannot be rebuilt: dropout p must be in [0, 1), got 1.5"),
    (lambda layers: layers[1].update(layers="relu"), "layer 1 (residual) has layers 'relu', expected a value like []"),
    (lambda layers: layers[1].update(layers=[3]), "layer 1.0 is 3, not a layer description"),
    (lambda layers: layers[1].update(layers=[]),
     "layer 1 (residual) cannot be rebuilt: residual needs a non-empty 'layers' list: the inner layers f of "
     "out = x + f(x)"),
    (lambda layers: layers[1]["layers"][3].update(bias=False),
     "arrays do not match the layer spec (missing [], unexpected ['layers.1.3.b'])"),
    (lambda layers: layers.insert(3, _nest(40)), "layer 3.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0 (residual) nests layers "
                                                 "more than 16 deep"),
])
def test_the_loader_checks_nested_specs_as_it_checks_top_level_ones(rng, change, message):
    arrays = model_arrays(build_model(SPECS, 4, 3, rng))
    with pytest.raises(ModelFileError) as e:
        model_from_arrays(_with_spec(arrays, change), "m.npz")
    assert str(e.value) == f"m.npz: {message}"


def test_the_loader_refuses_inner_layers_that_do_not_give_the_width_back(rng):
    model = build_model([{"type": "residual", "layers": [{"type": "linear", "units": 5}, {"type": "linear"}]}], 3, 3, rng)
    arrays = model_arrays(model)
    arrays["layers.0.1.W"] = np.zeros((5, 4), dtype=np.float32)
    arrays["layers.0.1.b"] = np.zeros(4, dtype=np.float32)
    with pytest.raises(ModelFileError) as e:
        model_from_arrays(_with_spec(arrays, lambda layers: layers[0]["layers"][1].update(out_features=4)), "m.npz")
    assert str(e.value) == ("m.npz: layer 0 (residual) cannot be rebuilt: the inner layers map 3 features to 4; "
                            "out = x + f(x) needs f(x) as wide as x: give the last inner layer 3 units "
                            "(or leave its units out)")


def test_a_config_may_leave_the_last_inner_linear_to_the_block_width_and_checks_inner_specs():
    cfg = config_from_dict({"model": {"layers": [{"type": "linear", "units": 8},
                                                 {"type": "residual", "layers": ["relu", {"type": "linear"}]},
                                                 {"type": "linear"}]}})
    model = build_model(list(cfg.model.layers), 2, 2, np.random.default_rng(0))
    assert model.layers[1].layers[1].params["W"].shape == (8, 8)
    with pytest.raises(ConfigError, match=r"^x.yaml: model.layers\[0\].layers\[0\]: unknown option 'unit' for linear"):
        config_from_dict({"model": {"layers": [{"type": "residual", "layers": [{"type": "linear", "unit": 3}]}]}},
                         "x.yaml")


RESIDUAL_MOONS = ["training.epochs=5", "training.batch_size=16", "data.n_samples=200", "optimizer.name=adam",
                  "optimizer.lr=0.01",
                  "model.layers=[{type: linear, units: 12}, {type: residual, layers: [{type: layernorm}, "
                  "{type: linear, units: 16}, relu, {type: dropout, p: 0.3}, {type: linear}]}, "
                  "{type: residual, layers: [{type: residual, layers: [batchnorm, {type: dropout, p: 0.2}]}]}, "
                  "{type: linear}]"]


@pytest.mark.filterwarnings("ignore::mlp_manual.errors.TrainingWarning")  # the initial loss of a fresh model
def test_an_interrupted_residual_run_resumes_bit_for_bit(tmp_path):
    """Adam's state of every inner tensor, batch norm's running statistics and the generator of
    the dropout layers inside the blocks all come back from the checkpoint."""
    cfg = load_config("configs/moons.yaml", RESIDUAL_MOONS)
    train_run(cfg, str(tmp_path / "straight"), echo=lambda line: None)
    interrupted_run(cfg, tmp_path / "cut")
    ckpt = load_checkpoint(tmp_path / "cut" / "checkpoint.npz")
    assert {"layers.1.3", "layers.2.0.1"} <= set(ckpt["meta"]["rng"])
    assert {"optim/m/layers.1.1.W", "model/layers.2.0.0.running_var"} <= set(ckpt["arrays"])
    resume_run(str(tmp_path / "cut"), echo=lambda line: None)
    with np.load(tmp_path / "straight" / "model.npz") as a, np.load(tmp_path / "cut" / "model.npz") as b:
        assert a.files == b.files and "layers.1.4.W" in a.files
        assert all(np.array_equal(a[k], b[k]) for k in a.files)


class ForgetsTheSkip(Residual):
    """dx = df(dout) only: the gradient along the skip connection is lost."""

    def backward(self, dout):
        return super().backward(dout) - dout


class ForgetsTheBranch(Residual):
    """dx = dout only: the inner layers fill their grads, but what they give back is dropped."""

    def backward(self, dout):
        super().backward(dout)
        return dout


@pytest.mark.parametrize("broken", [ForgetsTheSkip, ForgetsTheBranch])
def test_the_gradient_checker_catches_a_block_that_drops_either_path(broken, rng):
    layer = broken([Linear(4, 3, rng=rng, dtype=F64), Tanh(), Linear(3, 4, rng=rng, dtype=F64)])
    report = check_layer(layer, rng.normal(size=(5, 4)))
    assert {row.name: row.verdict for row in report.rows} == {"dx": "FAIL", "0.W": "PASS", "0.b": "PASS",
                                                              "2.W": "PASS", "2.b": "PASS"}


def test_set_reaches_into_a_block_and_names_what_it_cannot_reach(tmp_path):
    cfg = load_config("configs/mnist1d_residual.yaml", ["model.layers.1.layers.1.units=128",
                                                        "model.layers.2.layers.0=rmsnorm"])
    assert cfg.model.layers[1]["layers"][1] == {"type": "linear", "units": 128}
    assert cfg.model.layers[2]["layers"][0] == {"type": "rmsnorm"}
    for override, message in [("model.layers.1.layers.9.units=3", "model.layers.1.layers.9 is not an index into a "
                                                                  "list of 5"),
                              ("model.layers.1.layers.1.units.x=3", "model.layers.1.layers.1.units is not a section"),
                              ("model.layers.1.layers.0.eps=-1", "model.layers[1].layers[0].eps must be > 0, got -1")]:
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_config("configs/mnist1d_residual.yaml", [override])


def test_blocks_nest_at_most_max_nesting_deep_in_a_config():
    from mlp_manual.layers.options import MAX_NESTING

    def model(depth):
        spec = "relu"
        for _ in range(depth):
            spec = {"type": "residual", "layers": [spec]}
        return {"model": {"layers": [spec, {"type": "linear"}]}}

    assert config_from_dict(model(MAX_NESTING)).model.layers[0]["type"] == "residual"
    with pytest.raises(ConfigError) as e:
        config_from_dict(model(MAX_NESTING + 1), "x.yaml")
    assert str(e.value) == f"x.yaml: model.layers[0]{'.layers[0]' * MAX_NESTING}.layers: blocks nest more than 16 deep"
