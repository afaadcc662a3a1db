"""The core on any array-API namespace (devices.py, core/namespace.py): every layer type, loss,
optimizer and schedule, clipping, accumulation, early stopping, and a checkpoint resumed on
another device, run with array-api-strict arrays (a namespace that refuses anything outside the
standard) and compared with numpy's numbers in float64; read-only inputs never written into; and
the one-line errors of a device that cannot be used. The GPU's own checks are in test_gpu.py."""

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import interrupted_run, invoke_cli

from mlp_manual import core
from mlp_manual.cli.train import main
from mlp_manual.config import load_config
from mlp_manual.devices import DEVICES, device, move_model, to_numpy
from mlp_manual.errors import DeviceError
from mlp_manual.gradcheck.suites import VOCAB, builtin_layer
from mlp_manual.layers.types import BUILTINS
from mlp_manual.losses import LOSSES
from mlp_manual.optimizers import OPTIMIZERS
from mlp_manual.runs.run import resume_run, train_run
from mlp_manual.schedules import SCHEDULES
from mlp_manual.training.fast_paths import fast_optimizer

xps = pytest.importorskip("array_api_strict", reason="array-api-strict is in the test extras: pip install -e '.[test]'")
STRICT = DEVICES["array-api-strict"]
pytestmark = pytest.mark.filterwarnings("ignore::mlp_manual.errors.TrainingWarning")  # runs of 4 epochs learn little
WIDTH, BATCH = 4, 6


def assert_close(strict_value, numpy_value, what: str) -> None:
    """Within 1e-12 of the tensor's scale (its largest magnitude, at least 1)."""
    got, want = to_numpy(strict_value), np.asarray(numpy_value)
    assert type(strict_value) is not np.ndarray, f"{what}: the strict run computed in numpy"
    assert got.shape == want.shape and got.dtype == want.dtype, f"{what}: {got.shape} {got.dtype} vs {want.shape} {want.dtype}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    assert np.max(np.abs(got - want), initial=0.0) <= 1e-12 * scale, f"{what}: differs from numpy"


def on(dev, layer):
    """``layer`` with its arrays moved to ``dev``."""
    move_model(SimpleNamespace(layers=[layer]), dev)
    return layer


def layer_input(name: str, rng) -> np.ndarray:
    if BUILTINS[name].takes_indices:
        return rng.integers(0, VOCAB, size=(BATCH, WIDTH))
    return rng.normal(size=(BATCH, WIDTH))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_every_layer_type_computes_numpys_numbers_in_the_strict_namespace(name, training):
    rng = np.random.default_rng(7)
    x, seed = layer_input(name, rng), 11
    plain = builtin_layer(name, WIDTH, np.random.default_rng(seed)).train(training)
    strict = on(STRICT, builtin_layer(name, WIDTH, np.random.default_rng(seed)).train(training))
    out = plain.forward(x)
    out_strict = strict.forward(STRICT.put(x))
    assert_close(out_strict, out, f"{name} forward")
    dout = rng.normal(size=out.shape)
    dx, dx_strict = plain.backward(dout), strict.backward(STRICT.put(dout))
    if dx is None:
        assert dx_strict is None
    else:
        assert_close(dx_strict, dx, f"{name} dx")
    for key in plain.grads:
        assert_close(strict.grads[key], plain.grads[key], f"{name} d{key}")
    for key in plain.buffers:
        assert_close(strict.buffers[key], plain.buffers[key], f"{name} {key}")


LOSS_CASES = [(name, weighted, smoothed) for name, spec in sorted(LOSSES.items()) for weighted in (False, True)
              for smoothed in (False, True) if (spec.weighs or not weighted) and (spec.smooths or not smoothed)]


@pytest.mark.parametrize(("name", "weighted", "smoothed"), LOSS_CASES)
def test_every_loss_computes_numpys_numbers_in_the_strict_namespace(name, weighted, smoothed):
    rng = np.random.default_rng(3)
    spec = LOSSES[name]
    k = 3 if spec.target != "binary 0/1" else 2
    out = rng.normal(size=(BATCH, k))
    y = spec.targets(spec.random_targets(rng, BATCH, k), np.float64)
    if smoothed:
        spec = spec.with_label_smoothing(0.1)
    if weighted:
        spec = spec.with_class_weights(rng.uniform(0.5, 2.0, size=k if spec.target == "class index" else 2))
    value, dout = spec.fn(out, y)
    value_strict, dout_strict = spec.fn(STRICT.put(out), STRICT.put(y))
    assert abs(value_strict - value) <= 1e-12 * max(1.0, abs(value))
    assert_close(dout_strict, dout, f"{name} dout")
    if spec.classification:
        assert np.array_equal(to_numpy(spec.predict(STRICT.put(out))), spec.predict(out))


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_moves_strict_parameters_as_numpys(name):
    rng = np.random.default_rng(5)
    params = {"W": rng.normal(size=(4, 3)), "b": rng.normal(size=3)}
    plain = fast_optimizer(name, {}, 0.01)
    strict = fast_optimizer(name, {}, 0.01, numpy=False)
    ours = {k: STRICT.put(v) for k, v in params.items()}
    for step in range(4):
        grads = {k: rng.normal(size=v.shape) for k, v in params.items()}
        plain.step([(k, params[k], grads[k]) for k in params], 0.05)
        strict.step([(k, ours[k], STRICT.put(grads[k])) for k in params], 0.05)
    for k in params:
        assert_close(ours[k], params[k], f"{name} {k} after 4 steps")


def test_clipping_and_the_norm_of_strict_gradients_are_numpys():
    rng = np.random.default_rng(9)
    grads = [rng.normal(size=(5, 4)), rng.normal(size=4)]
    ours = [STRICT.put(g) for g in grads]
    assert abs(core.clip_grad_norm(ours, 0.5) - core.clip_grad_norm(grads, 0.5)) <= 1e-12
    for g, mine in zip(grads, ours):
        assert_close(mine, g, "clipped gradient")


RUN = ["dtype=float64", "training.epochs=4", "training.batch_size=16", "data.n_samples=120",
       "model.layers=[{type: linear, units: 8}, relu, dropout, {type: linear, units: 8}, batchnorm, tanh, "
       "{type: residual, layers: [{type: linear}, layernorm, gelu]}, {type: linear}]"]


def weights(run_dir) -> dict:
    with np.load(run_dir / "model.npz") as f:
        return {k: f[k] for k in f.files if f[k].dtype.kind == "f"}


def assert_same_weights(a, b, tolerance: float = 1e-12) -> None:
    """The float weights of run folders ``a`` and ``b`` agree within ``tolerance`` of each tensor's scale."""
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys()
    for k in wa:
        scale = max(1.0, float(np.abs(wa[k]).max()))
        assert np.abs(wa[k] - wb[k]).max() <= tolerance * scale, k


def straight_and_strict(tmp_path, overrides) -> tuple:
    """The same run on the CPU and on array-api-strict: their folders."""
    for dev in ("cpu", "array-api-strict"):
        cfg = load_config("configs/moons.yaml", RUN + overrides + [f"device={dev}"])
        train_run(cfg, str(tmp_path / dev), echo=lambda line: None)
    return tmp_path / "cpu", tmp_path / "array-api-strict"


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_a_run_on_array_api_strict_ends_with_the_cpus_weights(tmp_path, optimizer):
    cpu, strict = straight_and_strict(tmp_path, [f"optimizer.name={optimizer}", "optimizer.lr=0.01",
                                                 "optimizer.weight_decay=0.001", "optimizer.clip_norm=0.5",
                                                 "optimizer.accumulate=2"])
    assert_same_weights(cpu, strict)
    assert (cpu / "metrics.csv").read_text().count("\n") == (strict / "metrics.csv").read_text().count("\n") == 5


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
def test_every_schedule_trains_on_array_api_strict_as_on_the_cpu(tmp_path, schedule):
    cpu, strict = straight_and_strict(tmp_path, [f"schedule.name={schedule}", "optimizer.name=sgd",
                                                 "optimizer.lr=0.05"])
    assert_same_weights(cpu, strict)


def test_early_stopping_on_array_api_strict_restores_the_cpus_best_epoch(tmp_path):
    cpu, strict = straight_and_strict(tmp_path, ["data.val_fraction=0.25", "optimizer.lr=0.3",
                                                 "training.epochs=12", "training.early_stopping.patience=2",
                                                 "training.early_stopping.restore_best=true"])
    assert_same_weights(cpu, strict)
    assert (cpu / "metrics.csv").read_text().count("\n") == (strict / "metrics.csv").read_text().count("\n")


@pytest.mark.parametrize(("first", "then"), [("array-api-strict", "cpu"), ("cpu", "array-api-strict")])
def test_a_run_interrupted_on_one_device_resumes_on_the_other(tmp_path, first, then):
    overrides = RUN + ["optimizer.name=adam", "optimizer.lr=0.01"]
    train_run(load_config("configs/moons.yaml", overrides), str(tmp_path / "straight"), echo=lambda line: None)
    interrupted_run(load_config("configs/moons.yaml", overrides + [f"device={first}"]), tmp_path / "cut")
    config = tmp_path / "cut" / "config.yaml"
    config.write_text(config.read_text().replace(f"device: {first}", f"device: {then}"))
    resume_run(str(tmp_path / "cut"), echo=lambda line: None)
    assert_same_weights(tmp_path / "straight", tmp_path / "cut")


def read_only(*arrays):
    for a in arrays:
        a.flags.writeable = False
    return arrays


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_no_layer_writes_into_its_input_or_its_upstream_gradient(name):
    rng = np.random.default_rng(1)
    layer = builtin_layer(name, WIDTH, rng)
    (x,) = read_only(layer_input(name, rng))
    out = layer.forward(x)
    (dout,) = read_only(rng.normal(size=out.shape))
    layer.backward(dout)  # a write into x or dout raises ValueError: assignment destination is read-only


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_no_loss_writes_into_the_outputs_or_the_targets(name):
    rng = np.random.default_rng(2)
    spec = LOSSES[name]
    out, y = read_only(rng.normal(size=(BATCH, 2)), spec.targets(spec.random_targets(rng, BATCH, 2), np.float64))
    spec.fn(out, y)


def test_training_never_writes_into_the_data(tmp_path, monkeypatch):
    from mlp_manual.training import experiment

    prepare = experiment.prepare

    def frozen(cfg):
        exp = prepare(cfg)
        read_only(*(a for a in vars(exp.data).values() if isinstance(a, np.ndarray)))
        return exp

    monkeypatch.setattr("mlp_manual.runs.run.prepare", frozen)
    train_run(load_config("configs/moons.yaml", RUN + ["optimizer.accumulate=2", "data.val_fraction=0.2"]),
              str(tmp_path / "run"), echo=lambda line: None)


def test_an_unknown_device_names_the_choices():
    with pytest.raises(DeviceError, match="unknown device 'tpu'; choose one of: cpu, cuda, array-api-strict"):
        device("tpu")


def test_device_cuda_without_cupy_is_one_line_saying_how_to_install_it(tmp_path):
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here: test_gpu.py runs the GPU")
    except ImportError:
        pass
    result = invoke_cli(main, "configs/xor.yaml", "--set", "device=cuda", "--out", str(tmp_path / "run"))
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "device cuda needs cupy, which could not be imported" in lines[0]
    assert "pip install 'mlp-manual[gpu]'" in lines[0]


@pytest.mark.parametrize("labels", [[0, 4, 1], [0, -1, 1], [0.0, 1.5, 1.0]])
def test_softmax_cross_entropy_refuses_labels_that_name_no_class(labels):
    with pytest.raises(core.MLPManualError, match=r"labels y that are integers in 0\.\.3"):
        core.softmax_cross_entropy(np.zeros((3, 4)), np.array(labels))


def test_softmax_cross_entropy_takes_labels_in_one_column_as_integers_or_whole_floats():
    with pytest.raises(core.MLPManualError, match=r"labels y of shape \(N,\), got \(3, 1\)"):
        core.softmax_cross_entropy(np.zeros((3, 4)), np.array([[0], [1], [1]]))
    logits, weights = np.random.default_rng(0).normal(size=(3, 4)), np.array([1.0, 2.0, 0.5, 3.0])
    for w in (None, weights):
        as_ints = core.softmax_cross_entropy(logits, np.array([0, 3, 1]), w)
        as_floats = core.softmax_cross_entropy(logits, np.array([0.0, 3.0, 1.0]), w)
        assert as_ints[0] == as_floats[0] and np.array_equal(as_ints[1], as_floats[1])


def test_a_minus_infinite_logit_of_another_class_leaves_the_loss_finite():
    loss, dlogits = core.softmax_cross_entropy(np.array([[0.0, -np.inf, 1.0]]), np.array([0]))
    assert loss == pytest.approx(np.log(1 + np.e)) and np.isfinite(dlogits).all()


def test_numbers_and_0_d_arrays_keep_their_shape_on_a_device_and_back():
    assert to_numpy(np.float64(2.0)).shape == () and to_numpy(3.0).shape == ()
    assert tuple(STRICT.put(np.float64(2.0)).shape) == () and to_numpy(STRICT.put(np.ones(()))).shape == ()


def test_fractional_embedding_indices_on_the_strict_namespace_are_the_layers_error():
    from mlp_manual.errors import LayerError

    layer = on(STRICT, core.Embedding(5, 2, 3, rng=np.random.default_rng(0)))
    with pytest.raises(LayerError, match="got numbers with a fractional part"):
        layer.forward(STRICT.put(np.array([[0.5, 1.0]])))


def test_after_a_fit_on_a_device_no_layer_holds_an_array_of_it():
    from mlp_manual.training.experiment import prepare, training_plan
    from mlp_manual.training.trainer import Trainer

    exp = prepare(load_config("configs/moons.yaml", RUN + ["device=array-api-strict", "training.epochs=1", "optimizer.name=adam"]))
    trainer = Trainer(exp.model, exp.loss, training_plan(exp.cfg), exp.train_rng)
    trainer.fit(exp.data.X_train, exp.data.y_train)

    def arrays(layer):
        yield from vars(layer).values()
        for d in (layer.params, layer.grads, layer.buffers):
            yield from d.values()
        for inner in layer.sublayers():
            yield from arrays(inner)

    held = [type(a) for layer in exp.model.layers for a in arrays(layer) if hasattr(a, "__array_namespace__")]
    assert held and all(t is np.ndarray for t in held)
    assert all(type(a) is np.ndarray for slot in trainer.optimizer.slots for a in trainer.optimizer.state[slot].values())
