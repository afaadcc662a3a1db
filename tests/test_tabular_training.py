"""Training choices for tabular data through the real commands: loss.class_weights for
imbalanced classes, data.target_preprocess for regression targets on a large scale."""

import csv
import io

import numpy as np
import pytest
import yaml
from conftest import invoke_cli

from mlp_manual import load_predictor
from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.predict import main as predict_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.predict.model_file import read_model


def write_config(tmp_path, name, config):
    (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return str(tmp_path / f"{name}.yaml")


def rare_class_recall(tmp_path, name, **loss):
    """Train on 95% 'common' and 5% 'rare' points that overlap; the test split's recall of 'rare'."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0.0, 1.0, (950, 2)), rng.normal(1.2, 1.0, (50, 2))])
    labels = ["common"] * 950 + ["rare"] * 50
    (tmp_path / "imbalanced.csv").write_text("a,b,label\n" + "\n".join(
        f"{a:.4f},{b:.4f},{t}" for (a, b), t in zip(X, labels)) + "\n")
    config = {"data": {"name": "csv", "path": str(tmp_path / "imbalanced.csv"), "target": "label",
                       "test_fraction": 0.3}, "training": {"epochs": 30},
              **({"loss": {"name": "softmax_cross_entropy", **loss}} if loss else {})}
    result = invoke_cli(train_main, "--config", write_config(tmp_path, name, config), "--out", str(tmp_path / name),
                        "-q")
    assert result.exit_code == 0, result.output
    result = invoke_cli(eval_main, "--model", str(tmp_path / name / "model.npz"), "--split", "test", "--out",
                        str(tmp_path / f"{name}_eval"))
    rare = next(line.split() for line in result.output.splitlines() if line.startswith("rare "))
    return float(rare[3])  # class, support, precision, recall


def test_balanced_class_weights_find_the_rare_class(tmp_path):
    plain = rare_class_recall(tmp_path, "plain")
    balanced = rare_class_recall(tmp_path, "balanced", class_weights="balanced")
    by_label = rare_class_recall(tmp_path, "by_label", class_weights={"rare": 10})
    assert plain < 0.2 and balanced > 0.4 and by_label > 0.3, (plain, balanced, by_label)
    saved = yaml.safe_load((tmp_path / "by_label" / "config.yaml").read_text())
    assert saved["loss"] == {"name": "softmax_cross_entropy", "class_weights": {"rare": 10}}
    assert yaml.safe_load((tmp_path / "plain" / "config.yaml").read_text())["loss"] == "softmax_cross_entropy"


@pytest.mark.parametrize("setting, message", [
    ("{rar: 10}", "loss.class_weights names the class 'rar', which the data lacks (classes: common, rare) "
                  "(did you mean 'rare'?)"),
    ("bal", "loss.class_weights must be balanced, or a mapping of class labels to weights > 0, got 'bal'"),
    ("{rare: -1}", "loss.class_weights must be balanced, or a mapping of class labels to weights > 0"),
])
def test_a_wrong_class_weight_is_one_line(tmp_path, setting, message):
    (tmp_path / "d.csv").write_text("a,label\n1,common\n2,rare\n3,common\n4,rare\n5,common\n")
    result = invoke_cli(train_main, "--config", write_config(tmp_path, "c", {"data": {
        "name": "csv", "path": str(tmp_path / "d.csv"), "val_fraction": 0.0}}),
        "--set", f"loss.class_weights={setting}", "--out", str(tmp_path / "run"), "-q")
    assert result.exit_code != 0 and len(result.output.splitlines()) == 1 and message in result.output, result.output


def regression_csv(path, n=400, seed=3):
    """Targets around 5000 with a spread of 1000, from three features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = 5000 + 1000 * (np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2])
    path.write_text("a,b,c,price\n" + "\n".join(f"{a:.4f},{b:.4f},{c:.4f},{t:.2f}" for (a, b, c), t in zip(X, y))
                    + "\n")


def test_standardized_targets_train_and_predict_in_the_targets_units(tmp_path):
    regression_csv(tmp_path / "prices.csv")
    r2 = {}
    for how in ("none", "standardize"):
        config = {"data": {"name": "csv", "path": str(tmp_path / "prices.csv"), "target": "price",
                           "task": "regression", "preprocess": "standardize", "target_preprocess": how,
                           "test_fraction": 0.2},
                  "model": {"layers": [{"type": "linear", "units": 32}, {"type": "tanh"}, {"type": "linear"}]},
                  "loss": "mse", "optimizer": {"lr": 0.01}, "training": {"epochs": 40}}
        result = invoke_cli(train_main, "--config", write_config(tmp_path, how, config), "--out",
                            str(tmp_path / how), "-q")
        assert result.exit_code == 0, result.output
        result = invoke_cli(eval_main, "--model", str(tmp_path / how / "model.npz"), "--split", "test", "--out",
                            str(tmp_path / f"{how}_eval"))
        r2[how] = float(result.output.splitlines()[-2].split()[-1])
    assert r2["none"] < 0 < 0.8 < r2["standardize"], r2
    model_path = tmp_path / "standardize" / "model.npz"
    model, info = read_model(model_path)
    targets = info.target_preprocessing
    assert targets.kind == "standardize" and 4000 < targets.shift[0] < 6000 and 500 < targets.scale[0] < 1500
    result = invoke_cli(predict_main, "--model", str(model_path), "--input", str(tmp_path / "prices.csv"))
    rows = list(csv.reader(io.StringIO(result.stdout)))
    predicted = np.array([float(r[0]) for r in rows[1:]])
    truth = np.loadtxt(tmp_path / "prices.csv", delimiter=",", skiprows=1)
    assert rows[0] == ["prediction"] and abs(predicted.mean() - 5000) < 300
    assert np.sqrt(np.mean((predicted - truth[:, 3]) ** 2)) < 400  # in the targets' units: the spread is 1000
    result = invoke_cli(eval_main, "--model", str(model_path), "--data", str(tmp_path / "prices.csv"), "--out",
                        str(tmp_path / "file_eval"))
    mse = float(result.output.splitlines()[-2].split()[1])
    assert mse == pytest.approx(np.mean((predicted - truth[:, 3]) ** 2), rel=1e-4)
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from mlp_manual.export.onnx import export_file

    export_file(model_path, tmp_path / "m.onnx")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    out, = session.run(["output"], {"input": truth[:, :3].astype(np.float32)})
    np.testing.assert_allclose(out[:, 0], load_predictor(model_path).predict(truth[:, :3]), rtol=1e-5)


def test_standardized_targets_are_for_regression(tmp_path):
    (tmp_path / "d.csv").write_text("a,label\n1,x\n2,y\n3,x\n4,y\n")
    result = invoke_cli(train_main, "--config", write_config(tmp_path, "c", {"data": {
        "name": "csv", "path": str(tmp_path / "d.csv"), "val_fraction": 0.0, "target_preprocess": "standardize"}}),
        "--out", str(tmp_path / "run"), "-q")
    assert result.exit_code == 1 and "data.target_preprocess: standardize is for regression targets, and this " \
                                      "data has classes" in result.output


def test_a_label_yaml_reads_as_true_or_false_is_matched_and_explain_shows_the_weights(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,bought\n" + "\n".join(f"{i % 7},{i % 3},{'yes' if i % 5 == 0 else 'no'}"
                                                                for i in range(60)) + "\n")
    config = write_config(tmp_path, "c", {"data": {"name": "csv", "path": str(tmp_path / "d.csv")},
                                          "training": {"epochs": 2}})
    result = invoke_cli(train_main, "--config", config, "--set", "loss.class_weights={yes: 4}", "--out",
                        str(tmp_path / "run"), "-q")
    assert result.exit_code == 0, result.output
    from mlp_manual.cli.explain import main as explain_main

    result = invoke_cli(explain_main, str(tmp_path / "run" / "config.yaml"))
    assert result.exit_code == 0, result.output
    assert "loss = mean(w[y] * (log(sum(exp(logits))) - logits[y]))" in result.output
    assert "dlogits = w[y] * (softmax(logits) - onehot(y)) / N" in result.output


def test_mlp_eval_standardizes_targets_as_the_model_file_says_whatever_the_config(tmp_path):
    regression_csv(tmp_path / "prices.csv", n=200)
    config = {"data": {"name": "csv", "path": str(tmp_path / "prices.csv"), "target": "price", "task": "regression",
                       "preprocess": "standardize", "target_preprocess": "standardize", "test_fraction": 0.2},
              "loss": "mse", "optimizer": {"lr": 0.01}, "training": {"epochs": 5}}
    result = invoke_cli(train_main, "--config", write_config(tmp_path, "c", config), "--out", str(tmp_path / "run"),
                        "-q")
    assert result.exit_code == 0, result.output
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    saved["data"]["target_preprocess"] = "none"
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(saved))
    outputs = [invoke_cli(eval_main, "--model", str(tmp_path / "run" / "model.npz"), *extra, "--out",
                          str(tmp_path / "eval")).output.splitlines()[:3]
               for extra in ((), ("--config", str(tmp_path / "other.yaml")))]
    assert outputs[0] == outputs[1] and "R2" in outputs[0][1]
