"""Float64 finite-difference and closed-form checks of every loss."""

import numpy as np
import pytest

from mlp_manual.gradcheck.numgrad import numerical_gradient, relative_error
from mlp_manual.losses import LOSSES, bce_with_logits, mse, softmax_cross_entropy


def targets_for(name, rng, n, k):
    if name == "softmax_cross_entropy":
        return rng.integers(0, k, size=n)
    if name == "bce_with_logits":
        return rng.integers(0, 2, size=(n, 1)).astype(np.float64)
    return rng.normal(size=(n, k))


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("n", [1, 7])
def test_loss_gradient_matches_finite_differences(name, n, rng):
    k = 1 if name == "bce_with_logits" else 4
    logits = rng.normal(size=(n, k)) * 3
    y = targets_for(name, rng, n, k)
    fn = LOSSES[name].fn
    _, dlogits = fn(logits, y)
    numeric = numerical_gradient(lambda: fn(logits, y)[0], logits)
    assert relative_error(dlogits, numeric).max() < 1e-7


def test_cross_entropy_gradient_is_p_minus_onehot_over_n(rng):
    logits = rng.normal(size=(5, 3))
    y = np.array([0, 2, 1, 1, 0])
    loss, dlogits = softmax_cross_entropy(logits, y)
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert np.allclose(dlogits, (p - np.eye(3)[y]) / 5, atol=1e-15)
    assert np.isclose(loss, -np.mean(np.log(p[np.arange(5), y])))


def test_cross_entropy_of_uniform_logits_is_log_c():
    loss, _ = softmax_cross_entropy(np.zeros((4, 10)), np.arange(4))
    assert np.isclose(loss, np.log(10))


def test_bce_and_mse_closed_forms():
    loss, d = bce_with_logits(np.array([[0.0], [0.0]]), np.array([[1.0], [0.0]]))
    assert np.isclose(loss, np.log(2)) and np.allclose(d, [[-0.25], [0.25]])
    loss, d = mse(np.array([[1.0, 2.0]]), np.array([[0.0, 0.0]]))
    assert loss == 2.5 and np.array_equal(d, [[1.0, 2.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_losses_are_finite_for_huge_logits(dtype):
    z = np.array([[1e4, -1e4], [-1e4, 1e4]], dtype=dtype)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        loss, d = softmax_cross_entropy(z, np.array([1, 0]))
        assert np.isclose(loss, 2e4) and np.all(np.isfinite(d)) and d.dtype == dtype
        loss, d = bce_with_logits(z[:, :1], np.array([[0.0], [1.0]], dtype=dtype))
        assert np.isclose(loss, 1e4, rtol=1e-6) and np.all(np.isfinite(d)) and d.dtype == dtype
