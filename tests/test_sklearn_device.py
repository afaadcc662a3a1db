"""The estimators' ``device=`` (mlp_manual/sklearn/stochastic.py, Placement): every stochastic
solver, output and option trained on array-api-strict arrays gives numpy's weights (float64,
within 1e-12 of their scale), the training really runs on the device's arrays, the fitted
estimator holds numpy arrays, and what cannot run on a device says so."""

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_regression

from mlp_manual.devices import DEVICES
from mlp_manual.errors import DeviceError
from mlp_manual.sklearn import MLPClassifier, MLPRegressor
from mlp_manual.sklearn import flat as flat_module

pytest.importorskip("array_api_strict", reason="array-api-strict is in the test extras: pip install -e '.[test]'")
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
STRICT = "array-api-strict"


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:600] / 16, y[:600]


def assert_same_fit(a, b) -> None:
    assert len(a.coefs_) == len(b.coefs_)
    for ours, theirs in zip((*a.coefs_, *a.intercepts_), (*b.coefs_, *b.intercepts_)):
        assert type(theirs) is np.ndarray and theirs.dtype == ours.dtype
        scale = max(1.0, float(np.abs(ours).max()))
        assert np.abs(ours - theirs).max() <= 1e-12 * scale
    assert np.allclose(a.loss_curve_, b.loss_curve_, rtol=1e-12, atol=0)


@pytest.mark.parametrize("early_stopping", [False, True])
@pytest.mark.parametrize("solver", ["sgd", "adam", "adamw", "rmsprop"])
def test_every_stochastic_solver_trains_on_array_api_strict_as_on_the_cpu(digits, solver, early_stopping, monkeypatch):
    X, y = digits
    kw = dict(hidden_layer_sizes=(16,), solver=solver, max_iter=4, random_state=0, early_stopping=early_stopping,
              dropout=0.1, normalization="batchnorm")
    cpu = MLPClassifier(**kw).fit(X, y)
    seen = []
    real = flat_module.loss_and_seed

    def spy(output, z, Y, weights):
        seen.append(type(z))
        return real(output, z, Y, weights)

    monkeypatch.setattr(flat_module, "loss_and_seed", spy)
    strict = MLPClassifier(device=STRICT, **kw).fit(X, y)
    assert seen and all(t.__module__.startswith("array_api_strict") for t in seen)
    assert_same_fit(cpu, strict)
    assert strict.score(X, y) == cpu.score(X, y)
    if early_stopping:
        assert strict.validation_scores_ == cpu.validation_scores_


@pytest.mark.parametrize("loss", ["squared_error", "poisson"])
def test_the_regressors_losses_train_on_array_api_strict_as_on_the_cpu(loss):
    X, y = make_regression(200, 5, n_targets=2, random_state=0)
    y = y if loss == "squared_error" else np.abs(y) / 50
    kw = dict(hidden_layer_sizes=(8,), max_iter=5, random_state=0, loss=loss, solver="sgd", learning_rate_init=0.01)
    assert_same_fit(MLPRegressor(**kw).fit(X, y), MLPRegressor(device=STRICT, **kw).fit(X, y))


def test_sample_weights_the_logistic_output_and_partial_fit_on_array_api_strict(digits):
    X, y = digits
    w = np.random.default_rng(0).uniform(0.5, 2, len(y))
    kw = dict(hidden_layer_sizes=(10,), max_iter=3, random_state=0)
    cpu, strict = MLPClassifier(**kw).fit(X, y % 2, sample_weight=w), MLPClassifier(device=STRICT, **kw).fit(X, y % 2, sample_weight=w)
    assert_same_fit(cpu, strict)
    cpu.partial_fit(X, y % 2)
    strict.partial_fit(X, y % 2)
    assert_same_fit(cpu, strict)


def test_lbfgs_and_sparse_input_say_they_run_on_the_cpu(digits):
    from scipy.sparse import csr_matrix

    X, y = digits
    with pytest.raises(ValueError, match="solver='lbfgs' runs SciPy's L-BFGS-B, on the CPU: use device='cpu'"):
        MLPClassifier(device=STRICT, solver="lbfgs", max_iter=2).fit(X, y)
    with pytest.raises(ValueError, match="device='array-api-strict' trains on dense X: pass X.toarray()"):
        MLPClassifier(device=STRICT, max_iter=2).fit(csr_matrix(X), y)


def test_a_device_that_cannot_be_used_is_one_error_naming_what_is_missing(digits):
    X, y = digits
    try:
        DEVICES["cuda"].namespace()
        pytest.skip("a GPU is usable here: test_gpu.py runs it")
    except DeviceError:
        pass
    est = MLPClassifier(device="cuda", max_iter=2)
    with pytest.raises(DeviceError, match=r"device cuda .*pip install 'mlp-manual\[gpu\]'|CuPy found no"):
        est.fit(X, y)
    assert not hasattr(est, "coefs_")  # refused before anything was built
    with pytest.raises(ValueError, match="The 'device' parameter of MLPClassifier must be a str among"):
        MLPClassifier(device="gpu").fit(X, y)


@pytest.mark.parametrize("solver", ["sgd", "adam", "rmsprop"])
def test_ragged_batches_no_shuffle_class_weights_and_warm_start_on_array_api_strict(digits, solver):
    X, y = digits
    kw = dict(hidden_layer_sizes=(12,), solver=solver, max_iter=3, random_state=1, batch_size=70, shuffle=False,
              class_weight="balanced", warm_start=True)
    cpu, strict = MLPClassifier(**kw), MLPClassifier(device=STRICT, **kw)
    for _ in range(2):  # the second fit goes on from the first's weights and solver state
        cpu.fit(X, y)
        strict.fit(X, y)
        assert_same_fit(cpu, strict)


@pytest.mark.parametrize("solver", ["sgd", "adam", "adamw"])
def test_a_fitted_estimator_holds_no_array_of_the_device_and_goes_on_on_another(digits, solver):
    X, y = digits
    kw = dict(hidden_layer_sizes=(12,), solver=solver, random_state=0)
    cpu, moved = MLPClassifier(**kw), MLPClassifier(device=STRICT, **kw)
    for est in (cpu, moved):
        est.partial_fit(X, y, classes=np.unique(y))
    solver_ = moved._optimizer.optimizer
    held = [v for v in vars(solver_).values() if hasattr(v, "__array_namespace__")]
    if hasattr(solver_, "optimizer"):  # one of the trainer's optimizers: its state's slots
        held += [v for slot in solver_.optimizer.slots for v in solver_.optimizer.state[slot].values()]
    assert held and all(type(v) is np.ndarray for v in held)
    for layer in moved.model_.layers:
        assert all(type(v) is np.ndarray for v in vars(layer).values() if hasattr(v, "__array_namespace__"))
    moved.set_params(device="cpu")
    for est in (cpu, moved):
        est.partial_fit(X, y)
    assert_same_fit(cpu, moved)


def test_ctrl_c_in_an_epoch_on_a_device_leaves_numpy_weights(digits, monkeypatch):
    X, y = digits
    real, calls = flat_module.loss_and_seed, []

    def interrupted(output, z, Y, weights):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(output, z, Y, weights)

    monkeypatch.setattr(flat_module, "loss_and_seed", interrupted)
    with pytest.warns(UserWarning, match="Training interrupted by user"):
        est = MLPClassifier(hidden_layer_sizes=(8,), max_iter=5, random_state=0, device=STRICT).fit(X, y)
    assert all(type(a) is np.ndarray for a in (*est.coefs_, *est.intercepts_))
    assert est.predict(X).shape == y.shape
