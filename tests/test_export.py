"""ONNX export: every built-in layer gives in onnxruntime what it gives in mlp-manual, and mlp-export's errors."""

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import invoke_cli

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from mlp_manual import Layer, Model, ReLU, Residual, build_model, load_model, save_model  # noqa: E402
from mlp_manual.cli.export import main  # noqa: E402
from mlp_manual.cli.train import main as train_main  # noqa: E402
from mlp_manual.datasets.preprocessing import Preprocessing  # noqa: E402
from mlp_manual.errors import ExportError  # noqa: E402
from mlp_manual.export.graph import exportable_types  # noqa: E402
from mlp_manual.export.onnx import export_file, export_model  # noqa: E402
from mlp_manual.layers import LAYER_TYPES, Softmax, sigmoid  # noqa: E402
from mlp_manual.predict.model_info import ModelInfo  # noqa: E402
from mlp_manual.training.evaluation import model_outputs  # noqa: E402

TOL = 1e-5


def run_onnx(proto, X):
    """Every output of the exported graph on float32 X, by name."""
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, {"input": X})))


# a residual with every kind of inner layer a block can hold, and a residual inside it
RESIDUAL = {"type": "residual", "layers": [
    {"type": "layernorm"}, {"type": "linear", "units": 5}, {"type": "relu"}, {"type": "dropout"},
    {"type": "residual", "layers": [{"type": "batchnorm"}, {"type": "linear"}, {"type": "tanh"}]},
    {"type": "linear"}]}


VOCAB = 7  # an embedding's rows


def model_with(layer_type, out_width, rng, dtype=np.float32):
    """linear 8 -> layer_type -> linear 6 (no bias) -> linear, every parameter and buffer moved
    away from its initial value (variances stay positive), so that a normalisation layer's
    scale, shift and running statistics all matter. An embedding, which takes indices, comes
    first instead: embedding 3 -> linear 6 (no bias) -> linear."""
    middle = [] if layer_type == "linear" else [RESIDUAL if layer_type == "residual" else {"type": layer_type}]
    first = [{"type": "embedding", "dim": 3}] if layer_type == "embedding" else [{"type": "linear", "units": 8}, *middle]
    model = build_model([*first, {"type": "linear", "units": 6, "bias": False},
                         {"type": "linear"}], 5, out_width, rng, dtype, vocab=VOCAB)
    for layer in model.layers:
        for k, v in layer.params.items():
            layer.params[k] = (v + 0.3 * rng.normal(size=v.shape)).astype(dtype)
        for k, v in layer.buffers.items():
            layer.buffers[k] = (v * rng.uniform(0.5, 2.0, size=v.shape) + rng.uniform(0, 0.5, size=v.shape)).astype(dtype)
    return model


def raw_inputs(rng, n=64, layer_type=None):
    """(n, 5) float32 features, or for an embedding int64 indices in 0..VOCAB-1."""
    if layer_type == "embedding":
        return rng.integers(0, VOCAB, size=(n, 5))
    return (2 * rng.normal(size=(n, 5))).astype(np.float32)


def trained_with(loss: str, preprocessing=None, feature_names=None) -> ModelInfo:
    """The description a model file gives of a model trained with ``loss``."""
    return ModelInfo(None, loss, None, preprocessing, feature_names=feature_names)


def test_every_built_in_layer_has_an_onnx_translation():
    assert set(exportable_types()) == set(LAYER_TYPES)


@pytest.mark.parametrize("layer_type", sorted(LAYER_TYPES))
def test_classifier_logits_and_probabilities_match_mlp_manual(layer_type, rng):
    model = model_with(layer_type, 4, rng)
    proto = export_model(model, trained_with("softmax_cross_entropy"))
    for X in (raw_inputs(rng, 64, layer_type), raw_inputs(rng, 1, layer_type)):  # any batch size
        got = run_onnx(proto, X)
        logits = model_outputs(model, X)  # (N, 4)
        np.testing.assert_allclose(got["logits"], logits, rtol=0, atol=TOL)
        np.testing.assert_allclose(got["probabilities"], Softmax().forward(logits), rtol=0, atol=TOL)


@pytest.mark.parametrize("layer_type", sorted(LAYER_TYPES))
def test_regression_outputs_match_mlp_manual(layer_type, rng):
    model = model_with(layer_type, 2, rng)
    X = raw_inputs(rng, 64, layer_type)
    got = run_onnx(export_model(model, trained_with("mse")), X)
    assert list(got) == ["output"]
    np.testing.assert_allclose(got["output"], model_outputs(model, X), rtol=0, atol=TOL)


def test_binary_logit_gives_two_probability_columns(rng):
    model = model_with("tanh", 1, rng)
    X = raw_inputs(rng)
    got = run_onnx(export_model(model, trained_with("bce_with_logits")), X)
    p = sigmoid(model_outputs(model, X))  # (N, 1)
    assert got["probabilities"].shape == (64, 2)
    np.testing.assert_allclose(got["probabilities"], np.hstack([1 - p, p]), rtol=0, atol=TOL)


def test_float64_model_computes_in_float64(rng):
    model = model_with("gelu", 3, rng, np.float64)
    X = raw_inputs(rng)
    got = run_onnx(export_model(model, trained_with("softmax_cross_entropy")), X)
    assert got["logits"].dtype == np.float64
    np.testing.assert_allclose(got["logits"], model_outputs(model, X.astype(np.float64)), rtol=0, atol=1e-12)


def test_preprocessing_and_feature_names_from_the_model_file(tmp_path, rng):
    model = model_with("relu", 3, rng)
    shift, scale = rng.normal(size=5), rng.uniform(0.5, 3.0, size=5)
    names = ("a", "b", "c", "d", "e")
    info = ModelInfo("classification", "softmax_cross_entropy", 5, Preprocessing("standardize", shift, scale),
                     classes=(0, 1, 2), feature_names=names, version="0.1.0")
    save_model(model, tmp_path / "m.npz", info=info)
    proto = export_file(tmp_path / "m.npz", tmp_path / "m.onnx")
    assert onnx.load(tmp_path / "m.onnx") == proto
    metadata = {p.key: p.value for p in proto.metadata_props}
    assert json.loads(metadata["feature_names"]) == list(names) and metadata["loss"] == "softmax_cross_entropy"
    assert [n.op_type for n in proto.graph.node[:2]] == ["Sub", "Div"]
    X = raw_inputs(rng)
    got = run_onnx(proto, X)
    logits = model_outputs(model, ((X - shift) / scale).astype(np.float32))
    np.testing.assert_allclose(got["probabilities"], Softmax().forward(logits), rtol=0, atol=TOL)


def test_no_preprocessing_means_no_preprocessing_nodes(rng):
    proto = export_model(model_with("relu", 3, rng), trained_with("softmax_cross_entropy", Preprocessing()))
    assert [n.op_type for n in proto.graph.node][:1] == ["Gemm"]


class Doubler(Layer):
    def forward(self, x):
        return 2 * x


class MyReLU(ReLU):
    pass


@pytest.mark.parametrize("custom", [Doubler, MyReLU])
def test_a_custom_layer_is_refused_by_name(custom, rng):
    model = Model([*build_model([{"type": "linear", "units": 3}], 2, 3, rng).layers, custom()])
    with pytest.raises(ExportError, match=rf"layer 1 \({custom.__name__}\) cannot be exported to ONNX"):
        export_model(model)


def test_a_custom_layer_inside_a_residual_is_refused_by_its_nested_name(rng):
    first = build_model([{"type": "linear", "units": 3}], 2, 3, rng).layers[0]
    model = Model([first, Residual([ReLU(), Doubler()])])
    with pytest.raises(ExportError, match=r"layer 1\.1 \(Doubler\) cannot be exported to ONNX"):
        export_model(model)


def test_a_residual_is_its_inner_nodes_then_an_add_of_its_input(rng):
    model = model_with("residual", 3, rng)
    proto = export_model(model)
    names = {n.name: n for n in proto.graph.node}
    assert names["layers.1"].op_type == "Add" and names["layers.1.4"].op_type == "Add"
    assert list(names["layers.1"].input) == [names["layers.0"].output[0], names["layers.1.5"].output[0]]
    assert names["layers.1.0"].op_type == "LayerNormalization" and names["layers.1.4.0"].op_type == "BatchNormalization"


def test_mlp_export_a_trained_run(tmp_path):
    run = tmp_path / "run"
    result = invoke_cli(train_main, "--config", "configs/moons.yaml", "--out", str(run), "--set", "training.epochs=2", "-q")
    assert result.exit_code == 0, result.output
    result = invoke_cli(main, "--model", str(run / "model.npz"))
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (f"wrote {run / 'model.onnx'}: opset 17, input input (N, 2) float32, "
                                     "outputs logits (N, 2), probabilities (N, 2), label (N)")
    model = load_model(run / "model.npz")
    X = np.random.default_rng(0).normal(size=(10, 2)).astype(np.float32)
    got = run_onnx(onnx.load(run / "model.onnx"), X)
    np.testing.assert_allclose(got["probabilities"], Softmax().forward(model_outputs(model, X)), rtol=0, atol=TOL)


def test_mlp_export_errors_are_one_line(tmp_path, rng, monkeypatch):
    model = build_model([{"type": "linear", "units": 3}], 2, 3, rng)
    save_model(Model([*model.layers, Doubler()]), tmp_path / "custom.npz")
    result = invoke_cli(main, "--model", str(tmp_path / "custom.npz"), "--output", str(tmp_path / "x.onnx"))
    assert result.exit_code == 1 and result.output == f"Error: {tmp_path / 'custom.npz'}: layer 1 has unknown type 'Doubler'\n"

    damaged = Path(__file__).parent / "bad_inputs" / "files" / "bad-preprocess-model.npz"  # checked as mlp-predict checks it
    result = invoke_cli(main, "--model", str(damaged), "--output", str(tmp_path / "x.onnx"))
    assert result.exit_code == 1 and result.output.startswith(f"Error: {damaged}: damaged model spec (preprocess")

    save_model(model, tmp_path / "m.npz")
    result = invoke_cli(main, "--model", str(tmp_path / "m.npz"), "--output", str(tmp_path / "no" / "m.onnx"))
    assert result.exit_code == 2 and result.output.splitlines()[-1] == (
        f"Error: Invalid value for '--output': folder {tmp_path / 'no'} does not exist")  # checked before exporting
    assert not (tmp_path / "no").exists()

    monkeypatch.setitem(sys.modules, "onnx", None)  # as if onnx were not installed
    for name in [m for m in sys.modules if m.startswith("mlp_manual.export")]:
        monkeypatch.delitem(sys.modules, name)
    result = invoke_cli(main, "--model", str(tmp_path / "m.npz"))
    assert result.exit_code == 1
    assert result.output == 'Error: exporting to ONNX needs the onnx package; install it with: pip install "mlp-manual[onnx]"\n'
    with pytest.raises(ImportError, match="mlp-manual"):
        importlib.import_module("mlp_manual.export.onnx")


def test_a_trained_model_with_standardised_text_label_data_exports_its_whole_inference_path(tmp_path):
    """A CSV run with preprocessing and text labels: onnxruntime on raw rows gives the
    probabilities that the model file's own predictor gives on the same raw rows."""
    from mlp_manual import load_predictor

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3)) * [1.0, 10.0, 100.0] + [5.0, 50.0, 500.0]  # (N, D), far from standardised
    labels = np.where(X[:, 0] + X[:, 1] / 10 > 10, "big", "small")
    rows = "\n".join(",".join(f"{v:.4f}" for v in r) + f",{c}" for r, c in zip(X, labels))
    (tmp_path / "d.csv").write_text("sepal,petal,stem,kind\n" + rows + "\n")
    (tmp_path / "c.yaml").write_text("data: {name: csv, path: d.csv, target: kind, preprocess: standardize}\n"
                                     "training: {epochs: 5}\n")
    assert invoke_cli(train_main, str(tmp_path / "c.yaml"), "--out", str(tmp_path / "run"), "-q").exit_code == 0
    result = invoke_cli(main, "--model", str(tmp_path / "run" / "model.npz"), "--output", str(tmp_path / "m.onnx"))
    assert result.exit_code == 0, result.output
    raw = X.astype(np.float32)
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    probabilities = session.run(None, {session.get_inputs()[0].name: raw})[names.index("probabilities")]
    predictor = load_predictor(tmp_path / "run" / "model.npz")
    np.testing.assert_allclose(probabilities, predictor.predict_proba(raw), atol=1e-5)
    assert list(predictor.classes) == ["big", "small"]
    label = session.run(["label"], {"input": raw})[0]
    assert label.tolist() == predictor.predict(raw).tolist() and {"big", "small"} == set(label.tolist())
    metadata = {p.key: json.loads(p.value) for p in onnx.load(tmp_path / "m.onnx").metadata_props if p.key != "loss"}
    assert metadata["classes"] == ["big", "small"] and metadata["feature_names"] == ["sepal", "petal", "stem"]
    assert metadata["target_names"] == ["kind"] and metadata["preprocessing"]["kind"] == "standardize"
    np.testing.assert_array_equal(metadata["preprocessing"]["shift"], predictor.info.preprocessing.shift)


def test_the_label_of_a_binary_logit_is_its_class_at_the_larger_probability(rng):
    model = model_with("tanh", 1, rng)
    X = raw_inputs(rng)
    info = ModelInfo("classification", "bce_with_logits", None, None, classes=("no", "yes"))
    got = run_onnx(export_model(model, info), X)
    expected = np.where(model_outputs(model, X)[:, 0] > 0, "yes", "no")
    assert got["label"].tolist() == expected.tolist() and len(set(expected)) == 2


def test_integer_class_labels_come_out_as_their_text(rng):
    model = model_with("relu", 3, rng)
    info = ModelInfo("classification", "softmax_cross_entropy", None, None, classes=(0, 1, 2))
    got = run_onnx(export_model(model, info), raw_inputs(rng))
    assert got["label"].tolist() == [str(i) for i in got["logits"].argmax(axis=1)]


SCALERS = ["standard", "minmax", "maxabs", "robust", "two"]


def scaler_steps(kind):
    from sklearn.preprocessing import (
        MaxAbsScaler,
        MinMaxScaler,
        RobustScaler,
        StandardScaler,
    )
    return {"standard": [StandardScaler()], "minmax": [MinMaxScaler()], "maxabs": [MaxAbsScaler()],
            "robust": [RobustScaler()], "two": [MinMaxScaler(), "passthrough", StandardScaler(with_mean=False)]}[kind]


@pytest.mark.parametrize("kind", SCALERS)
def test_a_fitted_pipeline_exports_with_its_scalers_and_labels(kind, tmp_path):
    pytest.importorskip("sklearn")
    from sklearn.pipeline import make_pipeline

    from mlp_manual.sklearn import MLPClassifier, to_onnx

    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 4)) * [1.0, 10.0, 100.0, 0.1] + [5.0, -50.0, 500.0, 0.0]  # (N, D), unscaled
    y = np.where(X[:, 0] + X[:, 1] / 10 > 0, "up", "down")
    pipe = make_pipeline(*scaler_steps(kind), MLPClassifier(max_iter=20, random_state=0)).fit(X, y)
    to_onnx(pipe, tmp_path / "p.onnx")
    session = ort.InferenceSession(str(tmp_path / "p.onnx"), providers=["CPUExecutionProvider"])
    label, probabilities = session.run(["label", "probabilities"], {"input": X.astype(np.float32)})
    assert label.tolist() == pipe.predict(X).tolist()
    np.testing.assert_allclose(probabilities, pipe.predict_proba(X), atol=1e-5)


def test_a_fitted_regressor_exports_its_predictions_and_other_steps_are_refused_by_name(tmp_path):
    pytest.importorskip("sklearn")
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from mlp_manual.sklearn import MLPRegressor, to_onnx

    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 3)) * [1.0, 50.0, 0.01]
    y = X @ [1.0, 0.02, 100.0]
    pipe = Pipeline([("scale", StandardScaler()), ("mlp", MLPRegressor(max_iter=10, random_state=0))]).fit(X, y)
    output = run_onnx(to_onnx(pipe), X.astype(np.float32))["output"]
    np.testing.assert_allclose(output[:, 0], pipe.predict(X), rtol=1e-4, atol=1e-4)
    with pytest.raises(ExportError, match="pipeline step 'pca' \\(PCA\\) has no ONNX translation"):
        to_onnx(Pipeline([("pca", PCA(2)), ("mlp", MLPRegressor(max_iter=1))]).fit(X, y))
    with pytest.raises(ExportError, match="LinearRegression is not an mlp-manual estimator"):
        to_onnx(Pipeline([("scale", StandardScaler()), ("lr", LinearRegression())]).fit(X, y))


@pytest.mark.parametrize("categories_first", [False, True])
def test_a_pipeline_with_imputers_and_a_one_hot_encoder_exports_on_raw_rows(categories_first, tmp_path):
    pytest.importorskip("sklearn")
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from mlp_manual.sklearn import MLPClassifier, to_onnx

    rng = np.random.default_rng(6)
    colour = rng.choice(["red", "green", "blue"], 300).astype(object)
    weight, height = rng.normal(2.0, 1.0, 300), rng.normal(0.0, 5.0, 300)
    y = np.where((colour == "red") ^ (weight > 2.0), "yes", "no")
    X = np.column_stack([weight, colour, height]).astype(object)  # (N, 3): a number, a text, a number
    X[rng.random(300) < 0.1, 0] = np.nan
    X[rng.random(300) < 0.1, 1] = np.nan
    numbers = ("numbers", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), [0, 2])
    texts = ("texts", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                    OneHotEncoder(handle_unknown="ignore", sparse_output=False)), [1])
    columns = ColumnTransformer([texts, numbers] if categories_first else [numbers, texts])
    pipe = make_pipeline(columns, MLPClassifier(hidden_layer_sizes=(16,), max_iter=30, random_state=0)).fit(X, y)
    to_onnx(pipe, tmp_path / "p.onnx")
    session = ort.InferenceSession(str(tmp_path / "p.onnx"), providers=["CPUExecutionProvider"])
    raw = {"input": X[:, [0, 2]].astype(np.float32),  # NaN where a number is missing
           "categories": np.array([[c if isinstance(c, str) else ""] for c in X[:, 1]], dtype=object)}
    label, probabilities = session.run(["label", "probabilities"], raw)
    assert label.tolist() == pipe.predict(X).tolist()
    np.testing.assert_allclose(probabilities, pipe.predict_proba(X), atol=1e-5)
    unseen = {"input": raw["input"][:1], "categories": np.array([["purple"]], dtype=object)}
    known = X[:1].copy()
    known[0, 1] = "purple"  # handle_unknown="ignore": all zeros, in the graph as in the pipeline
    np.testing.assert_allclose(session.run(["probabilities"], unseen)[0], pipe.predict_proba(known), atol=1e-5)
    with pytest.raises(ExportError, match="drops columns"):
        to_onnx(make_pipeline(ColumnTransformer([numbers]), MLPClassifier(max_iter=1)).fit(X, y))
    with pytest.raises(ExportError, match="a SimpleImputer exports with add_indicator=False"):
        indicator = ("numbers", SimpleImputer(add_indicator=True), [0, 2])
        to_onnx(make_pipeline(ColumnTransformer([indicator, texts]), MLPClassifier(max_iter=1)).fit(X, y))


def test_a_transformed_target_regressor_exports_in_the_targets_units():
    pytest.importorskip("sklearn")
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from mlp_manual.sklearn import MLPRegressor, to_onnx

    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 2))
    y = 5000 + 1000 * np.sin(X[:, 0]) + 300 * X[:, 1]
    model = TransformedTargetRegressor(MLPRegressor(hidden_layer_sizes=(16,), max_iter=30, random_state=0),
                                       transformer=StandardScaler()).fit(X, y)
    output = run_onnx(to_onnx(model), X.astype(np.float32))["output"]
    np.testing.assert_allclose(output[:, 0], model.predict(X), rtol=1e-6)
    assert 4000 < model.predict(X).mean() < 6000
    with pytest.raises(ExportError, match="transformer=StandardScaler"):
        to_onnx(TransformedTargetRegressor(MLPRegressor(max_iter=1), transformer=MinMaxScaler()).fit(X, y))
