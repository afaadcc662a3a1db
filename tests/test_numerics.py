"""Numerical robustness at the extremes: huge logits, dead ReLUs, constant features and rows.
Every check runs with floating-point warnings raised as errors, in float32 and float64."""

import numpy as np
import pytest

from mlp_manual.config import DataConfig
from mlp_manual.datasets import load_dataset
from mlp_manual.layers import (
    GELU,
    BatchNorm1d,
    LayerNorm,
    Linear,
    ReLU,
    RMSNorm,
    Sigmoid,
    Softmax,
    Tanh,
)
from mlp_manual.losses import bce_with_logits, softmax_cross_entropy
from mlp_manual.model import Model

DTYPES = [np.float32, np.float64]


def strict():
    """Overflow, invalid operations and division by zero raise instead of warning."""
    return np.errstate(over="raise", invalid="raise", divide="raise", under="ignore")


def huge_logits(rng, dtype, n=6, c=4):
    """Logits with |z| up to 1e4, both signs, ties and one row of equal extremes."""
    z = rng.choice([-1e4, -5e3, -30.0, 0.0, 30.0, 5e3, 1e4], size=(n, c)).astype(dtype)  # (N, C)
    z[0] = 1e4
    return z


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_cross_entropy_is_finite_for_huge_logits(dtype, rng):
    z = huge_logits(rng, dtype)
    y = rng.integers(0, z.shape[1], size=len(z))
    with strict():
        loss, dz = softmax_cross_entropy(z, y)
    assert np.isfinite(loss) and np.all(np.isfinite(dz)) and dz.dtype == dtype
    assert np.allclose(dz.sum(axis=1), 0, atol=1e-6)  # each row: p - onehot sums to 0
    assert np.all(np.abs(dz) <= 1 / len(z) + 1e-6)
    assert np.isclose(softmax_cross_entropy(z[:1], np.array([2]))[0], np.log(4), rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bce_with_logits_is_finite_and_exact_for_huge_logits(dtype):
    z = np.array([[1e4], [-1e4], [1e4], [-1e4], [0.0]], dtype=dtype)
    y = np.array([[1.0], [0.0], [0.0], [1.0], [1.0]], dtype=dtype)
    with strict():
        loss, dz = bce_with_logits(z, y)
    assert np.isclose(loss, (0 + 0 + 1e4 + 1e4 + np.log(2)) / 5, rtol=1e-6)
    assert np.allclose(dz[:, 0], np.array([0, 0, 1, -1, -0.5]) / 5) and dz.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layer", [Sigmoid, Tanh, GELU, Softmax], ids=lambda c: c.__name__)
def test_activations_and_their_gradients_are_finite_for_huge_inputs(layer, dtype, rng):
    x = huge_logits(rng, dtype)
    g = rng.normal(size=x.shape).astype(dtype)
    layer = layer()
    with strict():
        out = layer.forward(x)
        dx = layer.backward(g)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(dx)) and out.dtype == dtype and dx.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_batch_of_dead_relus_gives_zero_but_finite_gradients(dtype, rng):
    first = Linear(3, 5, rng=rng, dtype=dtype)
    first.params["b"][:] = -100  # every unit dead for these inputs
    model = Model([first, ReLU(), BatchNorm1d(5, dtype=dtype), Linear(5, 2, rng=rng, dtype=dtype)])
    x = rng.uniform(-1, 1, size=(8, 3)).astype(dtype)
    with strict():
        out = model.forward(x)
        loss, dout = softmax_cross_entropy(out, rng.integers(0, 2, size=8))
        model.backward(dout)
    assert np.isfinite(loss)
    assert np.all(first.grads["W"] == 0) and np.all(first.grads["b"] == 0)
    assert all(np.all(np.isfinite(g)) for _, _, g in model.parameters())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", [LayerNorm, RMSNorm, BatchNorm1d], ids=lambda c: c.__name__)
def test_normalisation_of_constant_or_zero_input_is_finite(norm, dtype, rng):
    layer = norm(4, dtype=dtype)
    for x in (np.full((3, 4), 7.0, dtype=dtype), np.zeros((3, 4), dtype=dtype)):
        with strict():
            out = layer.forward(x)
            dx = layer.backward(rng.normal(size=x.shape).astype(dtype))
        assert np.all(np.isfinite(out)) and np.all(np.isfinite(dx))


def test_standardising_a_constant_feature_centres_it_and_stays_finite(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,const,label\n" + "".join(f"{i},5,{i % 2}\n" for i in range(10)))
    with strict():
        ds = load_dataset(DataConfig(name="csv", path=str(path), preprocess="standardize", val_fraction=0.2),
                          np.random.default_rng(0), np.float64)
    assert np.all(np.isfinite(ds.X_train)) and np.all(np.isfinite(ds.X_val))
    assert np.all(ds.X_train[:, 1] == 0) and np.allclose(ds.X_train[:, 0].std(), 1)
    scaled = load_dataset(DataConfig(name="csv", path=str(path), preprocess="scale", val_fraction=0),
                          np.random.default_rng(0), np.float64)
    assert np.all(np.isfinite(scaled.X_train))
