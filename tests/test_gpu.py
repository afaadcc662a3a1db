"""The same hand-written backward on a GPU (device: cuda, CuPy): a float64 finite-difference check
of every layer type's gradients computed on the device, MNIST in 5 epochs to 98.4%, and a run
resumed across devices. Each test skips, saying why, where CuPy or a GPU is missing; run them
with the benchmark as one command (docs/guides/training.md, "GPU"):

    python -m pytest tests/test_gpu.py -p no:xdist -m "slow or not slow" && python benchmarks/gpu.py
"""

import json
import os

import numpy as np
import pytest
from conftest import interrupted_run

from mlp_manual.config import load_config
from mlp_manual.devices import DEVICES, is_device_array, to_numpy
from mlp_manual.errors import DeviceError
from mlp_manual.gradcheck.suites import VOCAB, builtin_layer
from mlp_manual.layers.types import BUILTINS
from mlp_manual.runs.run import resume_run, train_run
from test_devices import assert_same_weights, on

CUDA = DEVICES["cuda"]
try:
    CUDA.namespace()
    WHY_NOT = None
except DeviceError as e:
    WHY_NOT = str(e)
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"no GPU to test on: {WHY_NOT}")
WIDTH, BATCH, H = 4, 5, 1e-6


def device_loss(layer, x, upstream) -> float:
    """sum(layer(x) * upstream), computed on the device."""
    out = layer.forward(x)
    return float(CUDA.namespace().sum(out * upstream))


def finite_difference(layer, x, upstream, array, index) -> float:
    """(f(a + h) - f(a - h)) / 2h for one entry of a device array (in place, then put back)."""
    saved = float(array[index])
    array[index] = saved + H
    plus = device_loss(layer, x, upstream)
    array[index] = saved - H
    minus = device_loss(layer, x, upstream)
    array[index] = saved
    return (plus - minus) / (2 * H)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_every_layer_types_gradients_on_the_gpu_match_finite_differences(name, training):
    rng = np.random.default_rng(0)
    row = BUILTINS[name]
    if training and name == "dropout":
        pytest.skip("dropout draws a new mask on each forward: checked in evaluation mode")
    x = rng.integers(0, VOCAB, size=(BATCH, WIDTH)) if row.takes_indices else rng.normal(size=(BATCH, WIDTH))
    layer = on(CUDA, builtin_layer(name, WIDTH, rng).train(training))
    xd = CUDA.put(x)
    upstream = CUDA.put(rng.normal(size=to_numpy(layer.forward(xd)).shape))
    layer.forward(xd)
    dx = layer.backward(upstream)
    arrays = {f"d{k}": (layer.params[k], layer.grads[k]) for k in layer.params}
    if dx is not None:
        arrays["dx"] = (xd, dx)
    for what, (array, grad) in arrays.items():
        grad = to_numpy(grad)
        for flat in rng.choice(grad.size, size=min(grad.size, 6), replace=False):
            index = np.unravel_index(flat, grad.shape)
            numeric = finite_difference(layer, xd, upstream, array, index)
            assert abs(numeric - grad[index]) <= 1e-6 * max(1.0, abs(numeric)), f"{name} {what}{index}"


@pytest.mark.slow
def test_mnist_fast_on_the_gpu_reaches_98_4_percent(tmp_path):
    if not os.environ.get("MLP_MANUAL_DATA"):
        pytest.skip("MNIST is read from the data directory: set MLP_MANUAL_DATA (mlp-data fetch mnist)")
    summary = train_run(load_config("configs/mnist_fast.yaml", ["device=cuda"]), str(tmp_path / "run"),
                        echo=lambda line: None)
    assert summary["test"]["acc"] >= 0.984, json.dumps(summary["test"])


RUN = ["dtype=float64", "training.epochs=4", "training.batch_size=16", "data.n_samples=120",
       "optimizer.name=adam", "optimizer.lr=0.01",
       "model.layers=[{type: linear, units: 8}, relu, dropout, {type: linear, units: 8}, batchnorm, {type: linear}]"]


@pytest.mark.parametrize(("first", "then"), [("cuda", "cpu"), ("cpu", "cuda")])
def test_a_run_interrupted_on_one_device_resumes_on_the_other(tmp_path, first, then):
    train_run(load_config("configs/moons.yaml", RUN), str(tmp_path / "straight"), echo=lambda line: None)
    interrupted_run(load_config("configs/moons.yaml", RUN + [f"device={first}"]), tmp_path / "cut")
    config = tmp_path / "cut" / "config.yaml"
    config.write_text(config.read_text().replace(f"device: {first}", f"device: {then}"))
    resume_run(str(tmp_path / "cut"), echo=lambda line: None)
    assert_same_weights(tmp_path / "straight", tmp_path / "cut", tolerance=1e-9)


def test_after_a_fit_on_the_gpu_no_layer_or_optimizer_holds_a_gpu_array():
    from mlp_manual.training.experiment import prepare, training_plan
    from mlp_manual.training.trainer import Trainer

    exp = prepare(load_config("configs/moons.yaml", RUN + ["device=cuda", "training.epochs=1"]))
    trainer = Trainer(exp.model, exp.loss, training_plan(exp.cfg), exp.train_rng)
    trainer.fit(exp.data.X_train, exp.data.y_train)
    for layer in exp.model.layers:
        assert not any(is_device_array(v) for v in (*vars(layer).values(), *layer.params.values(),
                                                     *layer.grads.values(), *layer.buffers.values())), layer
    assert not any(is_device_array(a) for slot in trainer.optimizer.slots for a in trainer.optimizer.state[slot].values())  # cuBLAS sums in another order than the CPU's BLAS


def test_an_estimator_trains_on_the_gpu_to_the_cpus_weights():
    from sklearn.datasets import load_digits

    from mlp_manual.sklearn import MLPClassifier

    X, y = load_digits(return_X_y=True)
    kw = dict(hidden_layer_sizes=(32,), max_iter=5, random_state=0, solver="adam")
    cpu, gpu = MLPClassifier(**kw).fit(X / 16, y), MLPClassifier(device="cuda", **kw).fit(X / 16, y)
    for a, b in zip((*cpu.coefs_, *cpu.intercepts_), (*gpu.coefs_, *gpu.intercepts_)):
        assert type(b) is np.ndarray and np.abs(a - b).max() <= 1e-9 * max(1.0, float(np.abs(a).max()))
    for layer in gpu.model_.layers:
        assert not any(is_device_array(v) for v in vars(layer).values()), layer
    assert abs(cpu.score(X / 16, y) - gpu.score(X / 16, y)) <= 1 / len(y)
