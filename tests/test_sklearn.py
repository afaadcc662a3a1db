"""mlp_manual.sklearn: scikit-learn's estimator checks, and fits that match mlp-train bit for bit."""

import dataclasses
import importlib
import inspect
import pickle
import sys

import numpy as np
import pytest
import yaml
from conftest import invoke_cli

sklearn = pytest.importorskip("sklearn")

from sklearn.datasets import load_iris, make_blobs, make_regression  # noqa: E402
from sklearn.metrics import r2_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from mlp_manual.cli.train import main as train_main  # noqa: E402
from mlp_manual.config import Config  # noqa: E402
from mlp_manual.optimizers import OPTIMIZERS  # noqa: E402
from mlp_manual.predict.model_file import load_model  # noqa: E402
from mlp_manual.sklearn import MLPClassifier, MLPRegressor  # noqa: E402
from mlp_manual.sklearn.params import CONFIG_KEYS, hidden_layers  # noqa: E402

# enough for the checks' accuracy and R^2 thresholds; a fixed seed (scikit-learn's default is none)
FAST = {"max_iter": 20, "learning_rate_init": 0.01, "hidden_layer_sizes": (16,), "batch_size": 32, "random_state": 0}


@parametrize_with_checks([
    MLPClassifier(**FAST),
    MLPRegressor(**FAST),
    MLPClassifier(**dict(FAST, hidden_layer_sizes=(8, 8)), normalization="batchnorm", dropout=0.1, n_iter_no_change=3,
                  early_stopping=True, validation_fraction=0.2),
    MLPRegressor(**FAST, normalization="layernorm", activation="tanh", dtype="float64", solver="sgd"),
])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def blobs(n=120, labels=None):
    X, y = make_blobs(n_samples=n, centers=3, random_state=0)
    return X, (y if labels is None else np.asarray(labels)[y])


def states_equal(a, b):
    sa, sb = a.state(), b.state()
    return sa.keys() == sb.keys() and all(np.array_equal(sa[k], sb[k]) for k in sa)


def test_importing_without_scikit_learn_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # makes `import sklearn` fail
    for name in [m for m in sys.modules if m.startswith("mlp_manual.sklearn")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r'pip install "mlp-manual\[sklearn\]"'):
        importlib.import_module("mlp_manual.sklearn")


def test_parameters_have_scikit_learns_names_and_defaults():
    from sklearn.neural_network import MLPClassifier as ScikitLearnMLP

    ours = {k: p.default for k, p in inspect.signature(MLPClassifier).parameters.items()}
    assert ours == {k: p.default for k, p in inspect.signature(MLPRegressor).parameters.items()}
    theirs = {k: p.default for k, p in inspect.signature(ScikitLearnMLP).parameters.items()}
    shared = set(ours) & set(theirs)
    assert set(theirs) - shared == {"power_t", "verbose", "warm_start", "max_fun"}  # the only ones left out
    assert {k: ours[k] for k in shared} == {k: theirs[k] for k in shared}
    cfg = Config()
    for param, key in CONFIG_KEYS.items():  # passed through as they are: each names a config key
        value = cfg
        for part in key.split("."):
            value = getattr(value, part)
        assert not dataclasses.is_dataclass(value), param


def test_scikit_learns_meanings_become_the_config():
    X, y = blobs(300)
    clf = MLPClassifier(max_iter=2, alpha=0.02, solver="sgd", momentum=0.5, random_state=0).fit(X, y)
    cfg = clf.config_
    assert cfg.training.batch_size == 200 and cfg.optimizer.weight_decay == pytest.approx(0.02 / 200)
    assert (cfg.optimizer.name, cfg.optimizer.options["momentum"], cfg.optimizer.options["nesterov"]) == ("sgd", 0.5, True)
    assert cfg.data.val_fraction == 0.0 and cfg.training.early_stopping.restore_best is False
    assert cfg.training.early_stopping.patience == 10 and cfg.training.early_stopping.min_delta == 1e-4
    assert [spec["type"] for spec in cfg.model.layers] == ["linear", "relu", "linear"]
    assert cfg.model.layers[0]["units"] == 100
    stopping = MLPClassifier(max_iter=2, early_stopping=True, activation="logistic", random_state=0).fit(X, y)
    assert stopping.config_.data.val_fraction == 0.1 and stopping.config_.training.early_stopping.restore_best
    assert stopping.config_.model.layers[1]["type"] == "sigmoid"
    assert MLPClassifier(max_iter=1, batch_size=16, random_state=0).fit(X[:10], y[:10]).config_.training.batch_size == 16


def test_hidden_layers_put_normalization_before_and_dropout_after_the_activation():
    assert hidden_layers((4, 3), "tanh", "layernorm", 0.25) == [
        {"type": "linear", "units": 4}, {"type": "layernorm"}, {"type": "tanh"}, {"type": "dropout", "p": 0.25},
        {"type": "linear", "units": 3}, {"type": "layernorm"}, {"type": "tanh"}, {"type": "dropout", "p": 0.25},
        {"type": "linear"}]
    assert hidden_layers(np.int64(5), "relu", None, 0) == [{"type": "linear", "units": 5}, {"type": "relu"},
                                                           {"type": "linear"}]


# the config's defaults, which mlp-train runs with: 16 units, batches of 32, no weight decay, no early stopping
AS_CONFIG = {"hidden_layer_sizes": (16,), "batch_size": 32, "alpha": 0.0, "n_iter_no_change": 0}


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_fit_trains_exactly_as_mlp_train_on_the_same_csv(tmp_path, task):
    if task == "classification":
        X, y = blobs(90)
        est = MLPClassifier(**AS_CONFIG, max_iter=3, random_state=5)
    else:
        X, y = make_regression(n_samples=90, n_features=3, random_state=0)
        y = y / y.std()
        est = MLPRegressor(**AS_CONFIG, max_iter=3, random_state=5)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",", fmt="%.17g",
               header="a,b,c,target" if X.shape[1] == 3 else "a,b,target", comments="")
    config = {"seed": 5, "data": {"name": "csv", "path": str(tmp_path / "d.csv"), "task": task, "val_fraction": 0.0},
              "loss": "softmax_cross_entropy" if task == "classification" else "mse",
              "training": {"epochs": 3}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    result = invoke_cli(train_main, "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "run"), "-q")
    assert result.exit_code == 0, result.output
    X_csv = np.loadtxt(tmp_path / "d.csv", delimiter=",", skiprows=1)
    est.fit(X_csv[:, :-1], X_csv[:, -1].astype(np.int64) if task == "classification" else X_csv[:, -1])
    assert states_equal(est.model_, load_model(tmp_path / "run" / "model.npz"))


def test_random_state_reproduces_a_fit_bit_for_bit_and_another_changes_it():
    X, y = blobs()
    a, b = (MLPClassifier(max_iter=4, dropout=0.2, random_state=7).fit(X, y) for _ in range(2))
    assert states_equal(a.model_, b.model_) and a.loss_curve_ == b.loss_curve_
    c = MLPClassifier(max_iter=4, dropout=0.2, random_state=8).fit(X, y)
    assert not states_equal(a.model_, c.model_)


def test_string_and_integer_labels():
    X, y = blobs(labels=["cat", "dog", "eel"])
    clf = MLPClassifier(**FAST).fit(X, y)
    assert clf.classes_.tolist() == ["cat", "dog", "eel"]
    assert set(clf.predict(X)) <= {"cat", "dog", "eel"} and clf.score(X, y) > 0.9
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 3) and np.allclose(proba.sum(axis=1), 1)
    assert (clf.classes_[proba.argmax(axis=1)] == clf.predict(X)).all()
    X, y = blobs(labels=[30, -2, 7])
    assert MLPClassifier(**FAST).fit(X, y).classes_.tolist() == [-2, 7, 30]


def test_fitted_attributes_follow_scikit_learn():
    X, y = blobs()
    clf = MLPClassifier(max_iter=5, early_stopping=True, validation_fraction=0.2).fit(X, y)
    assert clf.n_features_in_ == 2 and clf.n_iter_ == 5 and len(clf.loss_curve_) == 5
    assert clf.best_loss_ == min(clf.loss_curve_)
    assert len(clf.validation_scores_) == 5 and all(0 <= s <= 1 for s in clf.validation_scores_)
    assert clf.best_validation_score_ == max(clf.validation_scores_)
    assert clf.config_.training.epochs == 5 and clf.config_.loss.name == "softmax_cross_entropy"
    assert not hasattr(clf, "feature_names_in_")
    no_val = MLPRegressor(max_iter=2).fit(X, y.astype(float))
    assert no_val.validation_scores_ is None and no_val.best_validation_score_ is None


def test_regressor_validation_scores_are_r2_and_outputs_keep_the_shape_of_y():
    X, y = make_regression(n_samples=100, n_features=4, n_targets=2, random_state=1)
    y = y / y.std(axis=0)
    reg = MLPRegressor(**FAST).fit(X, y)
    assert reg.predict(X).shape == (100, 2) and reg.predict(X).dtype == np.float64 and reg.n_outputs_ == 2
    assert reg.score(X, y) == pytest.approx(r2_score(y, reg.predict(X)))
    reg = MLPRegressor(**FAST, early_stopping=True, n_iter_no_change=0).fit(X, y[:, 0])
    assert reg.predict(X).shape == (100,) and -1 < reg.validation_scores_[-1] <= 1
    assert reg.validation_scores_[-1] > reg.validation_scores_[0]


def test_early_stopping_stops_and_keeps_the_best_weights():
    X, y = blobs()
    clf = MLPClassifier(max_iter=500, learning_rate_init=0.05, n_iter_no_change=3, early_stopping=True).fit(X, y)
    assert clf.n_iter_ < 500 and len(clf.validation_scores_) == clf.n_iter_


def test_partial_fit_is_one_epoch_and_keeps_the_optimizer_state():
    X, y = blobs()
    step = MLPClassifier(random_state=2)
    step.partial_fit(X, y, classes=[0, 1, 2]).partial_fit(X, y)
    whole = MLPClassifier(random_state=2, max_iter=2).fit(X, y)
    assert step.n_iter_ == 2 and step.loss_curve_ == whole.loss_curve_
    assert states_equal(step.model_, whole.model_)
    again = pickle.loads(pickle.dumps(step)).partial_fit(X, y)
    assert states_equal(again.model_, whole.set_params(max_iter=3).fit(X, y).model_)


def test_partial_fit_after_a_fit_that_stopped_early_is_one_more_epoch():
    X, y = blobs()
    clf = MLPClassifier(max_iter=500, learning_rate_init=0.05, n_iter_no_change=2, early_stopping=True).fit(X, y)
    assert clf.n_iter_ < 500 and clf.partial_fit(X, y).n_iter_ == len(clf.validation_scores_) + 1


def test_partial_fit_mistakes_are_value_errors():
    X, y = blobs()
    with pytest.raises(ValueError, match="first call to partial_fit needs classes="):
        MLPClassifier().partial_fit(X, y)
    clf = MLPClassifier().partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"labels \[5\] that are not among the classes"):
        clf.partial_fit(X, np.full(len(X), 5))
    with pytest.raises(ValueError, match="X has 3 features, but MLPClassifier is expecting 2"):
        clf.partial_fit(np.ones((4, 3)), [0, 1, 0, 1])
    reg = MLPRegressor().partial_fit(X, y.astype(float))
    with pytest.raises(ValueError, match="y has 2 target columns, the model was fitted with 1"):
        reg.partial_fit(X, np.ones((len(X), 2)))


@pytest.mark.parametrize("params, message", [
    ({"learning_rate_init": -1.0}, "MLPClassifier: learning_rate_init must be > 0, got -1.0"),
    ({"n_iter_no_change": -2}, "MLPClassifier: n_iter_no_change must be >= 0, got -2"),
    ({"solver": "adamm"}, f"MLPClassifier: solver must be one of {', '.join(OPTIMIZERS)}; got 'adamm' "
                          "(did you mean 'adam'?)"),
    ({"solver": "lbfgs"}, "MLPClassifier: solver 'lbfgs' is not available"),
    ({"learning_rate": "invscaling"}, "MLPClassifier: learning_rate 'invscaling' is not available; use 'constant'"),
    ({"alpha": -1}, "MLPClassifier: alpha must be a number >= 0, got -1"),
    ({"batch_size": 0}, "MLPClassifier: batch_size must be > 0, got 0"),
    ({"validation_fraction": 1.5, "early_stopping": True}, "MLPClassifier: validation_fraction must be in [0, 1)"),
    ({"activation": "relux"}, "unknown layer type 'relux' (did you mean 'relu'?)"),
    ({"hidden_layer_sizes": (4, 0)}, "units must be a positive integer, got 0"),
    ({"random_state": -1}, "MLPClassifier: random_state must be >= 0, got -1"),
])
def test_bad_parameters_raise_value_errors_that_name_them(params, message):
    X, y = blobs(20)
    with pytest.raises(ValueError) as info:
        MLPClassifier(**params).fit(X, y)
    assert message in str(info.value)


def test_one_class_and_one_row_batchnorm_are_explained():
    with pytest.raises(ValueError, match="needs at least 2 classes, y holds 1 class"):
        MLPClassifier().fit(np.ones((5, 2)), np.zeros(5))
    with pytest.raises(ValueError, match="training on 1 sample: BatchNorm1d needs at least 2 rows"):
        MLPRegressor(normalization="batchnorm").fit(np.ones((1, 2)), [1.0])


def test_predictions_do_not_depend_on_the_rows_predicted_together():
    X, y = make_regression(n_samples=50, n_features=6, random_state=3)
    reg = MLPRegressor(**dict(FAST, hidden_layer_sizes=(32, 32))).fit(X, y / y.std())
    full = reg.predict(X)
    parts = np.concatenate([reg.predict(X[i:i + 7]) for i in range(0, 50, 7)])
    np.testing.assert_allclose(parts, full, rtol=1e-12, atol=1e-12)  # float32 would differ by ~1e-7
    assert reg.model_.dtype == np.float32  # trained in float32, predicted in float64


def test_feature_names_are_kept_and_checked():
    pd = pytest.importorskip("pandas")
    X, y = blobs()
    frame = pd.DataFrame(X, columns=["height", "width"])
    clf = MLPClassifier(max_iter=2).fit(frame, y)
    assert clf.feature_names_in_.tolist() == ["height", "width"]
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(frame.rename(columns={"width": "depth"}))


def test_readme_pipeline_with_grid_search():
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), MLPClassifier(max_iter=50, random_state=0))
    grid = GridSearchCV(pipe, {"mlpclassifier__learning_rate_init": [0.001, 0.01],
                               "mlpclassifier__hidden_layer_sizes": [(16,), (32, 16)]}, cv=3)
    grid.fit(X, y)
    assert grid.best_params_["mlpclassifier__learning_rate_init"] == 0.01 and grid.best_score_ > 0.9


def test_a_saved_estimator_is_a_model_file_mlp_predict_reads_without_a_note(tmp_path):
    from click.testing import CliRunner

    from mlp_manual.cli.predict import main as predict_main
    from mlp_manual.sklearn import MLPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] > 0, "yes", "no")
    clf = MLPClassifier(max_iter=3).fit(X, y)
    clf.save(tmp_path / "clf.npz")
    (tmp_path / "new.csv").write_text("a,b\n1.5,0\n-1.5,0\n")
    result = CliRunner().invoke(predict_main, ["--model", str(tmp_path / "clf.npz"), "--input",
                                               str(tmp_path / "new.csv")])
    assert result.exit_code == 0, result.output
    assert "note:" not in result.output
    assert result.output.splitlines()[0] == "prediction"
    assert result.output.splitlines()[1:] == list(clf.predict(np.array([[1.5, 0.0], [-1.5, 0.0]])))
