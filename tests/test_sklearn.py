"""mlp_manual.sklearn: scikit-learn's own MLP tests and estimator checks, the hand-written
output losses against central differences, and what goes beyond scikit-learn."""

import importlib
import inspect
import pickle
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.datasets import load_iris, make_blobs, make_regression  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from mlp_manual.sklearn import MLPClassifier, MLPRegressor  # noqa: E402
from mlp_manual.sklearn.outputs import OUTPUTS, loss_and_seed  # noqa: E402
from mlp_manual.sklearn.params import OURS  # noqa: E402

OWN_TESTS = Path(sklearn.__file__).parent / "neural_network" / "tests" / "test_mlp.py"
THEIR_IMPORT = "from sklearn.neural_network import MLPClassifier, MLPRegressor"


@parametrize_with_checks([
    MLPClassifier(), MLPRegressor(), MLPRegressor(solver="lbfgs"), MLPClassifier(class_weight="balanced", solver="lbfgs", alpha=1.0),
    MLPClassifier(normalization="layernorm", activation="gelu", solver="adamw"),
])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_scikit_learns_own_mlp_tests_pass_against_ours(tmp_path):
    # the installed scikit-learn's test file, read now, with only its import of the estimators changed
    source = OWN_TESTS.read_text()
    assert source.count(THEIR_IMPORT) == 1
    (tmp_path / "test_mlp_against_mlp_manual.py").write_text(
        source.replace(THEIR_IMPORT, "from mlp_manual.sklearn import MLPClassifier, MLPRegressor"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "sklearn.conftest", "-p", "no:cacheprovider",
                          "-rfEs", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    summary = run.stdout.strip().splitlines()[-1]
    assert run.returncode == 0 and re.fullmatch(r"=* ?\d+ passed in .*", summary), run.stdout[-3000:]
    assert int(summary.split(" passed")[0].split()[-1]) >= 59  # scikit-learn 1.9.1 has 59 items


def test_the_docs_page_lists_every_parameter_with_its_declared_meaning():
    from mlp_manual.sklearn.params import CLASSIFIER, LOSS

    page = (Path(__file__).parents[1] / "docs" / "guides" / "scikit-learn.md").read_text()
    lines = [line for line in page.splitlines() if line.startswith("| `")]
    assert all(line.count("|") == 5 for line in lines)  # four cells: a "|" in a meaning would split one
    rows = [line.split(" | ") for line in lines]
    assert [(r[0].strip("|` "), r[1].strip("`"), r[3].rstrip(" |")) for r in rows] == [
        (p.name, repr(p.default), p.meaning) for p in (LOSS, *CLASSIFIER)]


def test_parameters_are_scikit_learns_then_ours():
    from sklearn.neural_network import MLPClassifier as TheirClassifier
    from sklearn.neural_network import MLPRegressor as TheirRegressor

    for ours, theirs, extra in ((MLPClassifier, TheirClassifier, ["class_weight"]), (MLPRegressor, TheirRegressor, [])):
        mine = {k: p.default for k, p in inspect.signature(ours).parameters.items()}
        their = {k: p.default for k, p in inspect.signature(theirs).parameters.items()}
        assert list(mine) == [*their, *extra, *(p.name for p in OURS)]
        assert {k: mine[k] for k in their} == their


@pytest.mark.parametrize("name", sorted(OUTPUTS))
@pytest.mark.parametrize("weighted", [False, True])
def test_each_output_loss_gradient_matches_central_differences(name, weighted):
    rng = np.random.default_rng(3)
    z = rng.normal(size=(6, 3))
    Y = {"softmax": np.eye(3)[rng.integers(0, 3, 6)], "logistic": rng.integers(0, 2, (6, 3)).astype(float),
         "identity": rng.normal(size=(6, 3)), "exp": rng.poisson(2.0, (6, 3)).astype(float)}[name]
    w = rng.uniform(0, 3, 6) if weighted else None
    output = OUTPUTS[name]
    _, dz, _ = loss_and_seed(output, z, Y, w)
    numeric, h = np.zeros_like(z), 1e-6
    for i in np.ndindex(z.shape):
        up, down = z.copy(), z.copy()
        up[i] += h
        down[i] -= h
        numeric[i] = (loss_and_seed(output, up, Y, w)[0] - loss_and_seed(output, down, Y, w)[0]) / (2 * h)
    np.testing.assert_allclose(dz, numeric, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("est", [MLPClassifier(hidden_layer_sizes=(5, 4), alpha=0.3, normalization="layernorm"),
                                 MLPRegressor(hidden_layer_sizes=(5,), alpha=0.1, loss="poisson", activation="tanh")])
def test_the_networks_loss_gradient_with_l2_and_weights_matches_central_differences(est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(9, 4))
    y = rng.integers(0, 3, 9) if isinstance(est, MLPClassifier) else rng.poisson(1.5, 9).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.set_params(max_iter=2, random_state=0).fit(X, y)
    Y = est._label_binarizer.transform(y) if isinstance(est, MLPClassifier) else y[:, None]
    from mlp_manual.sklearn.flat import slots

    theta = np.concatenate([layer.params[k].ravel() for layer, k in slots(est.model_)])
    w = rng.uniform(0.5, 2, 9)
    loss, grad = est._loss_grad_lbfgs(theta, X, Y, w)
    numeric, h = np.zeros_like(theta), 1e-6
    for i in range(theta.size):
        step = np.zeros_like(theta)
        step[i] = h
        numeric[i] = (est._loss_grad_lbfgs(theta + step, X, Y, w)[0] - est._loss_grad_lbfgs(theta - step, X, Y, w)[0]) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)
    assert np.isfinite(loss)


def test_coefs_are_the_networks_arrays_and_setting_them_changes_predictions():
    X, y = load_iris(return_X_y=True)
    clf = MLPClassifier(max_iter=30, random_state=0).fit(X, y)
    assert clf.coefs_[0] is clf.model_.layers[0].params["W"]
    before = clf.predict_proba(X)
    clf.coefs_[1] = np.zeros_like(clf.coefs_[1])  # every class equally likely but for the bias
    after = clf.predict_proba(X)
    assert not np.allclose(before, after) and np.allclose(after, after[0])
    clf.intercepts_[1] = [0.0, 0.0, 5.0]  # a list is taken too
    assert (clf.predict(X) == 2).all()


def test_a_pickle_holds_the_weights_and_settings_only():
    X, y = make_blobs(n_samples=400, n_features=20, centers=4, random_state=0)
    for clf in (MLPClassifier(max_iter=5, random_state=0), MLPClassifier(max_iter=5, early_stopping=True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        weights = sum(c.nbytes for c in clf.coefs_) + sum(b.nbytes for b in clf.intercepts_)
        data = pickle.dumps(clf)
        assert len(data) <= 2 * weights + 8000, (len(data), weights)
        back = pickle.loads(data)
        np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
        back.partial_fit(X, y) if not clf.early_stopping else None  # it trains on
    assert hasattr(clf, "_optimizer")  # pickling took nothing from the estimator itself


def test_a_row_of_weight_two_is_two_rows():
    X, y = make_regression(n_samples=30, n_features=3, random_state=0)
    counts = np.random.default_rng(0).integers(0, 3, 30)
    params = dict(solver="lbfgs", hidden_layer_sizes=(8,), random_state=0, max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        weighted = MLPRegressor(**params).fit(X, y / 100, sample_weight=counts)
        repeated = MLPRegressor(**params).fit(X.repeat(counts, axis=0), (y / 100).repeat(counts))
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-7)


def test_class_weight_is_a_sample_weight_per_class():
    X, y = make_blobs(n_samples=90, centers=3, random_state=1)
    params = dict(solver="lbfgs", hidden_layer_sizes=(6,), random_state=0, max_iter=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        by_class = MLPClassifier(class_weight={0: 1.0, 1: 3.0, 2: 0.5}, **params).fit(X, y)
        by_row = MLPClassifier(**params).fit(X, y, sample_weight=np.array([1.0, 3.0, 0.5])[y])
        balanced = MLPClassifier(class_weight="balanced", **params).fit(X[:50], y[:50])
        by_count = MLPClassifier(**params).fit(X[:50], y[:50], sample_weight=(50 / (3 * np.bincount(y[:50])))[y[:50]])
    np.testing.assert_allclose(by_class.predict_proba(X), by_row.predict_proba(X))
    np.testing.assert_allclose(balanced.predict_proba(X), by_count.predict_proba(X))


def test_verbose_prints_scikit_learns_lines_and_max_iter_warns(capsys):
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match=r"Maximum iterations \(3\) reached"):
        MLPClassifier(max_iter=3, verbose=True, early_stopping=True).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"Iteration 1, loss = \d+\.\d{8}", out[0]) and out[1].startswith("Validation score: ")


def test_a_callback_sees_every_epoch_and_can_stop_the_fit():
    from sklearn.callback import ProgressBar

    class StopAfter:
        def __init__(self, epochs):
            self.epochs, self.seen = epochs, []

        def setup(self, estimator, context):
            pass

        def on_fit_task_begin(self, estimator, context):
            pass

        def on_fit_task_end(self, estimator, context, **kwargs):
            if context.task_name == "epoch":
                fitted = kwargs.get("fitted_estimator")
                self.seen.append(None if fitted is None else fitted.score(X, y))
                return len(self.seen) >= self.epochs
            return False

        def teardown(self, estimator, context):
            pass

    X, y = load_iris(return_X_y=True)
    stop = StopAfter(4)
    clf = MLPClassifier(max_iter=50, random_state=0).set_callbacks(stop).fit(X, y)
    assert clf.n_iter_ == 4 and len(stop.seen) == 4
    MLPClassifier(max_iter=3, solver="lbfgs").set_callbacks(ProgressBar()).fit(X, y)


def test_sparse_input_trains_as_dense():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    X, y = load_iris(return_X_y=True)
    X[X < 2] = 0
    dense = MLPClassifier(solver="lbfgs", max_iter=20, random_state=0).fit(X, y)
    sparse = MLPClassifier(solver="lbfgs", max_iter=20, random_state=0).fit(scipy_sparse.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.predict_proba(X), dense.predict_proba(X), rtol=1e-9)


@pytest.mark.parametrize("params, message", [
    ({"alpha": -1}, "The 'alpha' parameter of MLPClassifier must be a float in the range [0.0, inf)"),
    ({"solver": "adamm"}, "The 'solver' parameter of MLPClassifier must be a str among"),
    ({"normalization": "groupnorm"}, "The 'normalization' parameter of MLPClassifier must be a str among"),
    ({"hidden_layer_sizes": (4, 0)}, "hidden_layer_sizes must be > 0, got [4, 0]."),
    ({"verbose": "loud"}, "The 'verbose' parameter of MLPClassifier must be"),
    ({"dropout": 0.5, "solver": "lbfgs"}, "dropout > 0 needs a stochastic solver"),
])
def test_bad_parameters_are_value_errors_that_name_them(params, message):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError) as info:
        MLPClassifier(**params).fit(X, y)
    assert message in str(info.value)


def test_importing_without_scikit_learn_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # makes `import sklearn` fail
    for name in [m for m in sys.modules if m.startswith("mlp_manual.sklearn")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r'pip install "mlp-manual\[sklearn\]"'):
        importlib.import_module("mlp_manual.sklearn")


def test_readme_pipeline_with_grid_search():
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), MLPClassifier(max_iter=300, random_state=0))
    grid = GridSearchCV(pipe, {"mlpclassifier__learning_rate_init": [0.001, 0.01],
                               "mlpclassifier__hidden_layer_sizes": [(16,), (32, 16)]}, cv=3)
    grid.fit(X, y)
    assert grid.best_score_ > 0.9


@pytest.mark.parametrize("labels", [["no", "yes"], ["a", "b", "c"]])
def test_a_saved_estimator_is_a_model_file_mlp_predict_reads(tmp_path, labels):
    from click.testing import CliRunner

    from mlp_manual.cli.predict import main as predict_main

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = np.asarray(labels)[np.digitize(X[:, 0], [-0.4, 0.4]) % len(labels)]
    clf = MLPClassifier(solver="lbfgs", max_iter=200, random_state=0).fit(X, y)
    clf.save(tmp_path / "clf.npz")
    (tmp_path / "new.csv").write_text("a,b\n1.5,0\n-1.5,0\n0.1,0\n")
    result = CliRunner().invoke(predict_main, ["--model", str(tmp_path / "clf.npz"), "--input",
                                               str(tmp_path / "new.csv")])
    assert result.exit_code == 0, result.output
    assert "note:" not in result.output
    assert result.output.splitlines()[1:] == list(clf.predict(np.array([[1.5, 0.0], [-1.5, 0.0], [0.1, 0.0]])))
    with pytest.raises(ValueError, match="a model file has no loss for out_activation_='exp'"):
        MLPRegressor(loss="poisson", max_iter=2).fit(X, np.abs(X[:, 0])).save(tmp_path / "p.npz")


def test_the_flat_backward_gives_the_core_backwards_gradients_bit_for_bit():
    import copy

    from mlp_manual.model import build_model
    from mlp_manual.sklearn.flat import Flat, backward, slots

    rng = np.random.default_rng(0)
    specs = [{"type": "linear", "units": 7}, {"type": "layernorm"}, {"type": "relu"}, {"type": "linear", "units": 5},
             {"type": "tanh"}, {"type": "linear"}]
    model = build_model(specs, 4, 3, rng, np.float64)
    X, dout = rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
    plain = copy.deepcopy(model)
    plain.forward(X)
    plain.backward(dout)
    Flat(model)
    model.forward(X)
    backward(model, dout.copy())
    for (layer, k), (twin, _) in zip(slots(model), slots(plain)):
        assert np.array_equal(layer.grads[k], twin.grads[k]), k


@pytest.mark.parametrize("solver", ["sgd", "nesterov", "adam"])
def test_the_solvers_step_as_scikit_learns(solver):
    from sklearn.neural_network._stochastic_optimizers import AdamOptimizer, SGDOptimizer

    from mlp_manual.sklearn.solvers import SGD, Adam

    rng = np.random.default_rng(1)
    theta = rng.normal(size=12)
    theirs = [theta.copy()]
    if solver == "adam":
        ours, reference = Adam(0.9, 0.999, 1e-8), AdamOptimizer(theirs, 0.01)
    else:
        ours, reference = SGD(0.9, solver == "nesterov"), SGDOptimizer(theirs, 0.01, nesterov=solver == "nesterov")
    for _ in range(5):
        grad = rng.normal(size=12)
        ours.step(theta, grad, 0.01)
        reference.update_params(theirs, [grad])
    np.testing.assert_allclose(theta, theirs[0], rtol=1e-13, atol=1e-15)


def test_scikit_learns_scoring_monitor_scores_every_epoch():
    pytest.importorskip("pandas")
    from sklearn.callback import ScoringMonitor

    X, y = load_iris(return_X_y=True)
    monitor = ScoringMonitor(scoring="accuracy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MLPClassifier(max_iter=6, learning_rate_init=0.05, random_state=0).set_callbacks(monitor).fit(X, y)
    logs = monitor.get_logs().data_as_pandas
    epochs = logs[logs.task_name == "epoch"]
    assert epochs.task_id.tolist() == list(range(6))
    assert epochs.accuracy.iloc[-1] == logs[logs.task_name == "fit"].accuracy.iloc[0] == clf.score(X, y)


def test_explain_walks_the_fitted_network_and_writes_its_page(tmp_path):
    X, y = load_iris(return_X_y=True)
    clf = MLPClassifier(hidden_layer_sizes=(4,), solver="lbfgs", max_iter=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    text = clf.explain(X, y, rows=2)
    assert text.splitlines()[0].startswith("MLPClassifier: rows ") and "loss softmax_cross_entropy" in text
    assert re.search(r"^(\d+) of \1 gradient steps agree", text, re.MULTILINE)
    assert clf.explain(X, y, html=tmp_path / "pass.html") == str(tmp_path / "pass.html")
    assert "fitted weights" in (tmp_path / "pass.html").read_text()
    with pytest.raises(ValueError, match="a model file has no loss"):
        MLPRegressor(loss="poisson", max_iter=2).fit(X, y).explain(X, y)


def test_a_large_x_gathered_a_batch_at_a_time_trains_as_a_small_one(monkeypatch):
    from mlp_manual.sklearn import stochastic

    X, y = load_iris(return_X_y=True)
    params = dict(max_iter=4, batch_size=32, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        whole = MLPClassifier(**params).fit(X, y).predict_proba(X)
        monkeypatch.setattr(stochastic, "WHOLE_GATHER", 0)
        batches = MLPClassifier(**params).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(whole, batches)


def test_ctrl_c_mid_fit_keeps_the_weights_reached_and_wrong_coefs_are_named():
    class InterruptAtThirdEpoch:
        def setup(self, estimator, context):
            self.fired = False

        def on_fit_task_begin(self, estimator, context):
            pass

        def on_fit_task_end(self, estimator, context, **kwargs):
            if context.task_name == "epoch" and context.task_id == 2 and not self.fired:
                self.fired = True
                raise KeyboardInterrupt

        def teardown(self, estimator, context):
            pass

    X, y = load_iris(return_X_y=True)
    with pytest.warns(UserWarning, match="Training interrupted by user"):
        clf = MLPClassifier(max_iter=10, random_state=0).set_callbacks(InterruptAtThirdEpoch()).fit(X, y)
    assert clf.n_iter_ == 3 and len(clf.loss_curve_) == 3 and clf.predict(X).shape == (150,)
    clf.coefs_[0] = np.ones((2, 100))
    with pytest.raises(ValueError, match=r"coefs_ and intercepts_ must have the shapes \[\(4, 100\), \(100, 3\)\]"):
        clf.predict(X)


def test_one_class_probabilities_are_the_class_s_as_in_scikit_learn():
    from sklearn.neural_network import MLPClassifier as TheirClassifier

    X = np.random.default_rng(0).normal(size=(60, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = MLPClassifier((5,), max_iter=50, random_state=0).fit(X, ["a"] * 60)
        theirs = TheirClassifier((5,), max_iter=50, random_state=0).fit(X, ["a"] * 60)
    np.testing.assert_allclose(ours.predict_proba(X)[:, 0], theirs.predict_proba(X)[:, 0], rtol=1e-6)
    with pytest.raises(ValueError, match="a model file has no loss .* one class"):
        ours.model_info()


def test_a_changed_network_setting_is_named_not_ignored():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MLPClassifier((5,), max_iter=3, warm_start=True, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="activation='tanh', but the fitted network was built with activation='relu'"):
        clf.set_params(activation="tanh").fit(X, y)
    with pytest.raises(ValueError, match="dropout=0.5, but the fitted network was built with dropout=0.0"):
        clf.set_params(activation="relu", dropout=0.5).predict(X)


def test_predict_keeps_no_rows_and_a_batch_of_zero_weight_is_named():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MLPClassifier((8,), max_iter=3, normalization="layernorm", random_state=0).fit(X, y)
    clf.predict(X)
    held = [name for layer in clf.model_.layers for name, v in vars(layer).items()
            if name not in ("params", "grads", "buffers") and isinstance(v, np.ndarray)]
    assert held == []
    with pytest.raises(ValueError, match="the sample weights of a batch of 10 rows sum to 0"):
        MLPClassifier(max_iter=2, batch_size=10, shuffle=False).fit(X, y, sample_weight=np.r_[np.zeros(10), np.ones(140)])


def test_a_callback_stopping_lbfgs_is_no_failure_to_converge():
    class StopAtTwo:
        def setup(self, estimator, context):
            pass

        def on_fit_task_begin(self, estimator, context):
            pass

        def on_fit_task_end(self, estimator, context, **kwargs):
            return context.task_name == "epoch" and context.task_id == 1

        def teardown(self, estimator, context):
            pass

    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = MLPClassifier(solver="lbfgs", max_iter=50, random_state=0).set_callbacks(StopAtTwo()).fit(X, y)
    assert clf.n_iter_ == 2 and clf.loss_ == clf.loss_curve_[-1]


def test_threads_predict_at_once_without_touching_the_fitted_network():
    from concurrent.futures import ThreadPoolExecutor

    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MLPClassifier((16,), max_iter=5, normalization="batchnorm", random_state=0).fit(X, y)
    before = {k: v.copy() for k, v in clf.model_.state().items()}
    expected = clf.predict_proba(X[:7])
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: clf.predict_proba(X[:7]), range(400)))
    assert all(np.array_equal(r, expected) for r in results)
    assert all(np.array_equal(v, before[k]) for k, v in clf.model_.state().items())  # running statistics too
    assert all(layer.training for layer in clf.model_.layers)


def test_partial_fit_refuses_balanced_class_weight_and_inspection_takes_any_rows():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="class_weight='balanced' is not supported by partial_fit"):
        MLPClassifier(class_weight="balanced").partial_fit(X, y, classes=[0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MLPClassifier((5,), max_iter=3, warm_start=True, random_state=0).fit(X, y)
    assert clf.gradcheck(X[:10], y[:10]).passed  # rows of one class: no warm-start class check
    assert "rows" in clf.explain(X[:10], y[:10], rows=2)


def test_lbfgs_keeps_no_best_loss_and_tuples_of_coefs_are_taken():
    X, y = make_regression(n_samples=40, n_features=3, random_state=0)
    reg = MLPRegressor(hidden_layer_sizes=(4,), solver="lbfgs", max_iter=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg.fit(X, y)
    assert not hasattr(reg, "best_loss_")  # as scikit-learn's
    expected = reg.predict(X)
    reg.coefs_, reg.intercepts_ = tuple(c * 2 for c in reg.coefs_), tuple(reg.intercepts_)
    assert not np.allclose(reg.predict(X), expected)
    assert isinstance(reg.coefs_, list) and reg.coefs_[0] is reg.model_.layers[0].params["W"]


def test_adamw_decays_the_weights_apart_from_the_gradient():
    from mlp_manual.sklearn.network import glorot

    X, y = make_regression(n_samples=30, n_features=3, random_state=0)
    one_step = {alpha: MLPRegressor(hidden_layer_sizes=(4,), solver="adamw", alpha=alpha, batch_size=30,
                                    learning_rate_init=0.1, random_state=0).partial_fit(X, y)
                for alpha in (0.0, 0.5)}
    W0, _ = glorot(np.random.RandomState(0), 3, 4, "relu", np.float64)  # the first layer's start
    # from the same start: W' = W (1 - lr alpha) - adam(g), the gradient g without an L2 term
    np.testing.assert_allclose(one_step[0.5].coefs_[0], one_step[0.0].coefs_[0] - 0.1 * 0.5 * W0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(one_step[0.5].intercepts_[0], one_step[0.0].intercepts_[0])
    assert one_step[0.5].loss_ == one_step[0.0].loss_  # the loss holds no L2 term
