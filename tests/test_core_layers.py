"""The core's layers (mlp_manual/core/): a float64 finite-difference check of every gradient of
every layer type in the table (layers/types.py), each built as the table's check case says, on a
random upstream gradient; then closed-form checks of single layers."""

import numpy as np
import pytest
from conftest import check_layer_gradients

from mlp_manual.core import (
    GELU,
    BatchNorm1d,
    Dropout,
    Embedding,
    LayerNorm,
    LeakyReLU,
    Linear,
    ReLU,
    Sigmoid,
    Softmax,
)
from mlp_manual.errors import LayerError
from mlp_manual.gradcheck.suites import builtin_layer, repeated_indices
from mlp_manual.layers.types import BUILTINS

F64 = np.float64
WIDTH = 4


def away_from_zero(x):
    """Push inputs at least 0.1 away from 0, where ReLU-family layers have a kink."""
    return np.where(np.abs(x) < 0.1, x + np.sign(x + 1e-12) * 0.1, x)


def table_layer(name: str, rng):
    """A float64 layer of the table's type ``name`` for WIDTH features, built as its row's check
    case says, its parameters and statistics moved off their initial values; ``linear_nobias``
    is linear without b."""
    if name == "linear_nobias":
        return Linear(WIDTH, 3, rng=rng, bias=False, dtype=F64)
    return builtin_layer(name, WIDTH, rng)


def table_input(name: str, rng, batch: int) -> np.ndarray:
    """(batch, WIDTH) inputs for the layer: indices for a type that takes them, else numbers away
    from the kinks at 0."""
    if name in BUILTINS and BUILTINS[name].takes_indices:
        return repeated_indices(rng, batch, WIDTH)
    return away_from_zero(rng.normal(size=(batch, WIDTH)) * 2)


CASES = sorted(BUILTINS) + ["linear_nobias"]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("batch", [1, 6])
@pytest.mark.parametrize("training", [True, False])
def test_layer_gradients_match_finite_differences(name, batch, training, rng):
    row = BUILTINS.get(name)
    if row is not None and training and batch < row.min_train_rows:
        pytest.skip(f"{name} needs {row.min_train_rows} rows in training mode")
    layer = table_layer(name, rng)
    layer.train(training)
    x = table_input(name, rng, batch)
    errors = check_layer_gradients(layer, x, rng, indices=row is not None and row.takes_indices)
    assert set(errors) == {*layer.params, *([] if row is not None and row.takes_indices else ["dx"])}


def test_every_type_of_the_table_is_checked():
    assert set(BUILTINS) <= set(CASES)


def test_batchnorm_batch_of_one_in_training_is_a_clear_error():
    with pytest.raises(LayerError, match="at least 2 rows"):
        BatchNorm1d(3).forward(np.ones((1, 3), dtype=np.float32))


@pytest.mark.parametrize("name", CASES)
def test_backward_before_forward_is_a_clear_error(name, rng):
    with pytest.raises(LayerError, match="backward called before forward"):
        table_layer(name, rng).backward(np.ones((2, WIDTH)))


def test_linear_gradients_on_a_hand_computed_2x2_case():
    layer = Linear(2, 2, rng=np.random.default_rng(0), dtype=F64)
    layer.params["W"] = np.array([[1.0, 2.0], [3.0, 4.0]])
    layer.params["b"] = np.array([0.5, -0.5])
    x = np.array([[1.0, -1.0], [2.0, 0.0]])
    assert np.array_equal(layer.forward(x), [[-1.5, -2.5], [2.5, 3.5]])
    dout = np.array([[1.0, 0.0], [0.0, 2.0]])
    dx = layer.backward(dout)
    # dW[i, j] = sum_n x[n, i] * dout[n, j]
    assert np.array_equal(layer.grads["W"], [[1.0, 4.0], [-1.0, 0.0]])
    assert np.array_equal(layer.grads["b"], [1.0, 2.0])
    # dx[n, i] = sum_j dout[n, j] * W[i, j]
    assert np.array_equal(dx, [[1.0, 3.0], [4.0, 8.0]])


def test_relu_follows_dtype_and_width_changes_and_keeps_special_values():
    relu = ReLU()
    x = np.array([[-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan]])
    for dtype in (np.float32, np.float64, np.float32):
        out = relu.forward(x.astype(dtype))
        assert out.dtype == dtype
        assert np.array_equal(out, np.maximum(x, 0).astype(dtype), equal_nan=True)
    out = relu.forward(np.array([[-3.0, 4.0]]))  # another width
    assert np.array_equal(out, [[0.0, 4.0]])


def test_sigmoid_derivative_at_zero_is_a_quarter():
    layer = Sigmoid()
    assert layer.forward(np.zeros((1, 1)))[0, 0] == 0.5
    assert layer.backward(np.ones((1, 1)))[0, 0] == 0.25


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_is_finite_and_saturates_for_huge_inputs(dtype):
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        out = Sigmoid().forward(np.array([[-1e4, -50.0, 0.0, 50.0, 1e4]], dtype=dtype))
    assert np.all(np.isfinite(out))
    assert out[0, 0] == 0.0 and out[0, -1] == 1.0 and out.dtype == dtype


def test_softmax_backward_uses_the_full_jacobian(rng):
    x = rng.normal(size=(1, 3))
    s = Softmax().forward(x)[0]
    jacobian = np.diag(s) - np.outer(s, s)
    g = rng.normal(size=(1, 3))
    layer = Softmax()
    layer.forward(x)
    assert np.allclose(layer.backward(g)[0], jacobian.T @ g[0], atol=1e-15)


def test_gelu_matches_its_closed_form_at_known_points():
    out = GELU().forward(np.array([[0.0, 1.0, -1.0]]))
    assert out[0, 0] == 0.0
    assert np.isclose(out[0, 1], 0.8411919906082768) and np.isclose(out[0, 2], -0.15880800939172324)


def test_dropout_is_inverted_seeded_and_identity_in_eval():
    x = np.ones((2000, 50), dtype=np.float32)
    a = Dropout(0.25, rng=np.random.default_rng(3)).forward(x)
    b = Dropout(0.25, rng=np.random.default_rng(3)).forward(x)
    assert np.array_equal(a, b)
    assert set(np.unique(a)) == {0.0, np.float32(1 / 0.75)}
    assert abs(a.mean() - 1.0) < 0.01  # inverted scaling keeps the expectation
    layer = Dropout(0.25, rng=np.random.default_rng(3)).eval()
    assert layer.forward(x) is x


def test_layernorm_normalises_rows_and_is_finite_on_a_constant_row():
    layer = LayerNorm(5, dtype=F64)
    out = layer.forward(np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [7.0] * 5]))
    assert np.allclose(out[0].mean(), 0) and np.allclose(out[0].std(), 1, atol=1e-4)
    assert np.array_equal(out[1], np.zeros(5))
    assert np.all(np.isfinite(layer.backward(np.ones((2, 5)))))


def test_batchnorm_running_statistics_and_eval_mode():
    layer = BatchNorm1d(2, momentum=0.5, dtype=F64)
    x = np.array([[1.0, 10.0], [3.0, 30.0]])
    out = layer.forward(x)
    assert np.allclose(out, [[-1, -1], [1, 1]], atol=1e-4)
    assert np.allclose(layer.buffers["running_mean"], [1.0, 10.0])  # 0.5 * 0 + 0.5 * mean
    assert np.allclose(layer.buffers["running_var"], [0.5 + 0.5 * 2.0, 0.5 + 0.5 * 200.0])  # unbiased
    layer.eval()
    expected = (x - [1.0, 10.0]) / np.sqrt(np.array([1.5, 100.5]) + 1e-5)
    assert np.allclose(layer.forward(x), expected)


@pytest.mark.parametrize("init", ["glorot_uniform", "glorot_normal", "he_uniform", "he_normal",
                                  "lecun_uniform", "lecun_normal", "xavier_uniform", "kaiming_normal"])
def test_linear_inits_have_the_right_scale_and_zero_bias(init):
    layer = Linear(400, 300, rng=np.random.default_rng(0), init=init, dtype=F64)
    fan_in, fan_out = 400, 300
    expected_var = {"glorot": 2 / (fan_in + fan_out), "xavier": 2 / (fan_in + fan_out),
                    "he": 2 / fan_in, "kaiming": 2 / fan_in, "lecun": 1 / fan_in}[init.split("_")[0]]
    assert abs(layer.params["W"].var() / expected_var - 1) < 0.02
    assert np.array_equal(layer.params["b"], np.zeros(300))


def test_unknown_init_lists_the_valid_ones():
    with pytest.raises(LayerError, match="unknown init 'gaussian'; choose one of: glorot_normal"):
        Linear(2, 2, rng=np.random.default_rng(0), init="gaussian")


def test_linear_rejects_input_of_the_wrong_width():
    with pytest.raises(LayerError, match=r"expects input of shape \(N, 3\), got \(2, 4\)"):
        Linear(3, 2, rng=np.random.default_rng(0)).forward(np.ones((2, 4), dtype=np.float32))


def test_repr_shows_the_configuration():
    assert repr(LeakyReLU(0.2)) == "LeakyReLU(slope=0.2)"
    assert repr(Linear(3, 2, rng=np.random.default_rng(0), init="he_normal")) == \
        "Linear(in_features=3, out_features=2, init='he_normal', bias=True)"


def as_float32(layer):
    for d in (layer.params, layer.grads, layer.buffers):
        for k in d:
            d[k] = d[k].astype(np.float32)
    return layer


@pytest.mark.parametrize("name", CASES)
def test_float32_stays_float32(name, rng):
    layer = as_float32(table_layer(name, rng))
    x = table_input(name, rng, 6).astype(np.float32)
    out = layer.forward(x)
    dx = layer.backward(np.ones_like(out))
    assert out.dtype == np.float32 and (dx is None or dx.dtype == np.float32)
    assert all(g.dtype == np.float32 for g in layer.grads.values())


@pytest.mark.parametrize("name", CASES)
def test_outputs_stay_valid_after_the_next_forward_and_backward(name, rng):
    """Layers return new arrays: a caller may keep two outputs (a gradient checker's f(x + h) and
    f(x - h)) and two input gradients, and neither x nor dout is written into."""
    layer = table_layer(name, rng)
    x1, x2 = table_input(name, rng, 6), table_input(name, rng, 6)
    out1 = layer.forward(x1)
    g1, g2 = rng.normal(size=out1.shape), rng.normal(size=out1.shape)
    inputs = [a.copy() for a in (x1, x2, g1, g2)]
    dx1 = layer.backward(g1)
    kept = out1.copy(), None if dx1 is None else dx1.copy()
    out2 = layer.forward(x2)
    dx2 = layer.backward(g2)
    assert np.array_equal(out1, kept[0]) and (dx1 is None or np.array_equal(dx1, kept[1]))
    assert not np.shares_memory(out1, out2) and (dx1 is None or not np.shares_memory(dx1, dx2))
    assert all(np.array_equal(a, b) for a, b in zip((x1, x2, g1, g2), inputs))


def test_the_embedding_adds_the_gradient_of_a_row_picked_twice():
    layer = Embedding(3, 2, 1, rng=np.random.default_rng(0), dtype=F64)
    layer.forward(np.array([[1, 1], [2, 1]]))
    layer.backward(np.array([[1.0, 10.0], [100.0, 1000.0]]))
    assert np.array_equal(layer.grads["W"].ravel(), [0.0, 1011.0, 100.0])  # row 1 at three positions
