"""Float64 finite-difference and closed-form checks of every loss."""

import math

import numpy as np
import pytest

from mlp_manual.core import sigmoid
from mlp_manual.errors import DataError
from mlp_manual.gradcheck.numgrad import numerical_gradient, relative_error
from mlp_manual.losses import (
    BINARY,
    CLASS_INDEX,
    LOSSES,
    REAL,
    bce_with_logits,
    mse,
    softmax_cross_entropy,
)

CE, BCE, MSE = LOSSES["softmax_cross_entropy"], LOSSES["bce_with_logits"], LOSSES["mse"]


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("n", [1, 7])
def test_loss_gradient_matches_finite_differences(name, n, rng):
    k = 1 if name == "bce_with_logits" else 4
    logits = rng.normal(size=(n, k)) * 3
    y = LOSSES[name].random_targets(rng, n, k)
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


def test_bce_gradient_is_the_layers_sigmoid_minus_y_over_nk_bit_for_bit(rng):
    for dtype in (np.float32, np.float64):
        z = (rng.normal(size=(6, 3)) * 20).astype(dtype)  # (N, K), saturated entries included
        y = rng.integers(0, 2, size=(6, 3)).astype(dtype)
        _, d = bce_with_logits(z, y)
        assert d.dtype == dtype and np.array_equal(d, (sigmoid(z) - y) / dtype(18))


# --- the rules on the spec ---------------------------------------------------------------------


def test_each_spec_is_registered_under_its_name_with_its_function_and_target_kind():
    assert all(spec.name == name and spec.target in (CLASS_INDEX, BINARY, REAL) for name, spec in LOSSES.items())
    known = {"softmax_cross_entropy": (softmax_cross_entropy, CLASS_INDEX), "bce_with_logits": (bce_with_logits, BINARY),
             "mse": (mse, REAL)}
    assert {name: (LOSSES[name].fn, LOSSES[name].target) for name in known} == known
    assert [CE.classification, BCE.classification, MSE.classification] == [True, True, False]


def test_output_width_is_one_unit_per_class_one_logit_or_one_per_target_column():
    assert CE.output_width(10, 1) == 10
    assert BCE.output_width(2, 1) == 1
    assert MSE.output_width(None, 3) == 3 and MSE.output_width(2, 1) == 1


def test_targets_are_int64_labels_for_class_indices_and_float_columns_otherwise():
    y = np.array([0, 1, 1])
    assert CE.targets(y, np.float32).dtype == np.int64 and CE.targets(y, np.float32).shape == (3,)
    for spec in (BCE, MSE):
        t = spec.targets(y, np.float32)
        assert t.dtype == np.float32 and t.tolist() == [[0.0], [1.0], [1.0]]
    assert MSE.targets(np.ones((3, 2)), np.float64).shape == (3, 2)


def test_predictions_are_the_argmax_or_the_sign_of_the_logit():
    out = np.array([[0.1, 2.0, -1.0], [3.0, 0.0, 0.5]])
    assert CE.predict(out).tolist() == [1, 0]
    assert BCE.predict(np.array([[-0.5], [0.0], [1e-9]])).tolist() == [0, 0, 1]
    with pytest.raises(ValueError, match="mse targets are real values, not classes"):
        MSE.predict(out)


def test_probabilities_sum_to_one_agree_with_the_predictions_and_survive_huge_logits():
    out = np.array([[0.1, 2.0, -1.0], [3.0, 0.0, 0.5], [1e4, -1e4, 0.0]], dtype=np.float32)
    p = CE.probabilities(out)
    assert p.dtype == np.float64 and np.allclose(p.sum(axis=1), 1) and p.argmax(1).tolist() == CE.predict(out).tolist()
    assert np.allclose(p[0], np.exp(out[0]) / np.exp(out[0]).sum()) and p[2].tolist() == [1.0, 0.0, 0.0]
    z = np.array([[-0.5], [0.0], [2.0]])
    q = BCE.probabilities(z)
    assert np.allclose(q[:, 1], 1 / (1 + np.exp(-z[:, 0]))) and np.allclose(q.sum(axis=1), 1)
    assert q.argmax(1).tolist()[::2] == BCE.predict(z).tolist()[::2]  # a logit of 0 is a tie
    with pytest.raises(ValueError, match="mse targets are real values, not classes: it gives no class probabilities"):
        MSE.probabilities(out)


@pytest.mark.parametrize("c", [2, 3, 10])
def test_the_untrained_loss_of_cross_entropy_is_ln_c_the_loss_of_equal_logits(c):
    expected, formula = CE.untrained_loss(c)
    assert expected == math.log(c) and formula == f"ln({c})"
    loss, _ = softmax_cross_entropy(np.full((5, c), 0.3), np.arange(5) % c)
    assert np.isclose(loss, expected, rtol=1e-15)
    assert BCE.untrained_loss is None and MSE.untrained_loss is None


def test_random_targets_are_valid_and_drawn_from_the_generator():
    labels = CE.random_targets(np.random.default_rng(0), 500, 4)
    assert labels.shape == (500,) and set(labels.tolist()) == {0, 1, 2, 3}
    bits = BCE.random_targets(np.random.default_rng(0), 50, 3)
    assert bits.shape == (50, 3) and bits.dtype == np.float64 and set(bits.ravel().tolist()) == {0.0, 1.0}
    reals = MSE.random_targets(np.random.default_rng(0), 50, 3)
    assert reals.shape == (50, 3) and len(np.unique(reals)) == 150
    again = MSE.random_targets(np.random.default_rng(0), 50, 3)
    assert np.array_equal(reals, again)


@pytest.mark.parametrize("spec, args", [
    (CE, ("blobs", 3, 1)), (CE, ("blobs", 3, 1, 3)), (BCE, ("moons", 2, 1, 1)), (MSE, ("sine", None, 2, 2)),
])
def test_check_fit_accepts_data_and_models_that_fit(spec, args):
    spec.check_fit(*args)


@pytest.mark.parametrize("spec, args, kwargs, message", [
    (CE, ("sine", None, 1), {}, "softmax_cross_entropy needs class labels, but sine is a regression dataset; use mse"),
    (BCE, ("sine", None, 1, 1), {}, "bce_with_logits needs class labels, but sine is a regression dataset; use mse"),
    (BCE, ("blobs", 3, 1), {}, "bce_with_logits needs 2 classes, blobs has 3; use softmax_cross_entropy"),
    (CE, ("moons", 2, 1, 1), {},
     "softmax_cross_entropy needs at least 2 output units, the model has 1; use bce_with_logits for a single output"),
    (BCE, ("moons", 2, 1, 2), {},
     "bce_with_logits needs exactly 1 output unit, the model has 2; use softmax_cross_entropy for several classes"),
    (CE, ("blobs", 3, 1, 4), {}, "the model has 4 outputs but blobs has 3 classes"),
    (MSE, ("moons", 2, 1), {}, "mse needs real-valued targets, but moons has 2 classes; use softmax_cross_entropy "
                               "or bce_with_logits"),
    (MSE, ("blobs", 3, 1, 1), {}, "mse needs real-valued targets, but blobs has 3 classes; use softmax_cross_entropy"),
    (MSE, ("csv", 3, 1), {"task_key": "data.task"},
     "mse needs real-valued targets, but csv has class labels (data.task is classification); set data.task: "
     "regression to read the target as numbers, or use softmax_cross_entropy"),
    (CE, ("csv", None, 1), {"task_key": "data.task"},
     "softmax_cross_entropy needs class labels, but csv is a regression dataset; use mse, or set data.task: "
     "classification"),
    (MSE, ("sine", None, 2, 1), {}, "the model has 1 outputs but sine has 2 target columns"),
    (CE, ("csv", 3, 1, 2), {"model": "run/model.npz"}, "run/model.npz has 2 outputs, csv with softmax_cross_entropy needs 3"),
    (CE, ("csv", 3, 1, 1), {"model": "m.npz"}, "m.npz has 1 outputs, csv with softmax_cross_entropy needs 3"),
    (MSE, ("sine", None, 2, 1), {"model": "m.npz"}, "m.npz has 1 outputs, sine with mse needs 2"),
])
def test_check_fit_names_what_does_not_fit(spec, args, kwargs, message):
    with pytest.raises(DataError) as e:
        spec.check_fit(*args, **kwargs)
    assert str(e.value) == message


@pytest.mark.parametrize("name", ["softmax_cross_entropy", "bce_with_logits"])
def test_class_weighted_loss_gradient_matches_finite_differences(name, rng):
    spec = LOSSES[name]
    k = 1 if spec.target == BINARY else 4
    logits = rng.normal(size=(9, k)) * 3
    y = spec.random_targets(rng, 9, k)
    weights = rng.uniform(0.2, 5.0, size=2 if spec.target == BINARY else k)
    fn = spec.with_class_weights(weights).fn
    loss, dlogits = fn(logits, y)
    numeric = numerical_gradient(lambda: fn(logits, y)[0], logits)
    assert relative_error(dlogits, numeric).max() < 1e-7
    rows = np.array([spec.fn(logits[i:i + 1], y[i:i + 1])[0] for i in range(9)])  # (N,) unweighted, row by row
    w = weights[y.astype(np.int64)].reshape(9)  # (N,) each row's weight (k = 1 for the binary loss)
    assert loss == pytest.approx(np.mean(w * rows), rel=1e-12)


def test_weights_of_one_give_the_unweighted_loss_exactly(rng):
    logits, y = rng.normal(size=(6, 3)), rng.integers(0, 3, 6)
    loss, d = CE.with_class_weights(np.ones(3)).fn(logits, y)
    plain, d_plain = CE.fn(logits, y)
    assert loss == pytest.approx(plain, rel=1e-15) and np.allclose(d, d_plain, rtol=1e-15, atol=0)


def test_balanced_weights_are_scikit_learns():
    utils = pytest.importorskip("sklearn.utils")
    from mlp_manual.losses import class_weights

    y = np.array([0] * 90 + [1] * 8 + [2] * 2)
    expected = utils.compute_class_weight("balanced", classes=np.arange(3), y=y)
    np.testing.assert_allclose(class_weights("balanced", y, 3, ("a", "b", "c")), expected, rtol=1e-15)
    assert class_weights({"c": 4.0}, y, 3, ("a", "b", "c")).tolist() == [1.0, 1.0, 4.0]
    assert class_weights({2: 4.0}, y, 3, (0, 1, 2)).tolist() == [1.0, 1.0, 4.0]
    with pytest.raises(DataError, match=r"names the class 'd', which the data lacks \(classes: a, b, c\)"):
        class_weights({"d": 2.0}, y, 3, ("a", "b", "c"))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.1, 0.6])
def test_label_smoothed_loss_gradient_matches_finite_differences(weighted, smoothing, rng):
    logits, y = rng.normal(size=(9, 5)) * 3, rng.integers(0, 5, 9)
    spec = CE.with_label_smoothing(smoothing)
    if weighted:
        spec = spec.with_class_weights(rng.uniform(0.2, 5.0, size=5))
    loss, dlogits = spec.fn(logits, y)
    numeric = numerical_gradient(lambda: spec.fn(logits, y)[0], logits)
    assert relative_error(dlogits, numeric).max() < 1e-7
    q = (1 - smoothing) * np.eye(5)[y] + smoothing / 5  # (N, C), the smoothed targets
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    w = spec.class_weights[y] if weighted else np.ones(9)
    assert loss == pytest.approx(np.mean(w * -(q * log_p).sum(axis=1)), rel=1e-12)


def test_label_smoothing_names_its_targets_in_the_formulas_and_only_cross_entropy_smooths():
    spec = CE.with_label_smoothing(0.1)
    assert spec.formula == "loss = mean(log(sum(exp(logits))) - sum(q * logits))"
    assert spec.seed_formula == "dlogits = (softmax(logits) - q) / N, q = 0.9 onehot(y) + 0.1 / C"
    assert not spec.plain and CE.plain and not CE.with_class_weights(np.ones(3)).plain
    for other in (BCE, MSE):
        with pytest.raises(DataError) as e:
            other.with_label_smoothing(0.1)
        assert str(e.value) == f"{other.name} has no label smoothing: loss.label_smoothing is for softmax_cross_entropy"


@pytest.mark.parametrize("weights", [None, np.array([1.0, 2.0, 0.5])])
def test_a_smoothed_loss_keeps_float32_gradients_and_either_order_of_settings(weights):
    logits, y = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -2.0]], dtype=np.float32), np.array([2, 0])
    spec = CE.with_label_smoothing(np.float64(0.2))
    if weights is not None:
        spec = spec.with_class_weights(weights.astype(np.float32))
        other = CE.with_class_weights(weights.astype(np.float32)).with_label_smoothing(0.2)
        assert other.fn(logits, y)[0] == spec.fn(logits, y)[0]
    assert spec.fn(logits, y)[1].dtype == np.float32


def test_a_minus_infinite_logit_makes_the_smoothed_loss_infinite_and_its_gradient_finite():
    logits, y = np.array([[0.0, -np.inf, 1.0]]), np.array([2])
    with np.errstate(invalid="raise"):
        plain, _ = softmax_cross_entropy(logits, y)
        loss, d = softmax_cross_entropy(logits, y, smoothing=0.1)
    assert math.isfinite(plain) and loss == math.inf  # q puts 0.1 / 3 on the class of probability 0
    assert np.all(np.isfinite(d)) and d[0, 1] == pytest.approx(-0.1 / 3)
