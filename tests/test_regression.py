"""Regression as a first-class task: metrics per target, mlp-eval, the run folder's
predictions.png and fit.png (checked through their matplotlib objects), and --overfit-batch."""

import math

import numpy as np
from conftest import invoke_cli

from mlp_manual.cli.evaluate import main as eval_main
from mlp_manual.cli.train import main as train_main
from mlp_manual.config import load_config
from mlp_manual.plots.regression import draw_fit, draw_predictions
from mlp_manual.results.evaluate import evaluate_saved_model
from mlp_manual.runs.run import train_run
from mlp_manual.training.evaluation import RegressionEvaluation, regression_table


def test_metrics_per_target_and_overall_follow_their_definitions():
    y = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0], [6.0, 5.0]])
    p = np.array([[1.5, 4.0], [2.0, 5.0], [2.0, 5.0], [6.0, 7.0]])
    m = RegressionEvaluation(0.0, y, p).metrics()
    assert m["mse"]["targets"].tolist() == [0.3125, 1.25] and m["mse"]["all"] == 0.78125
    assert m["mae"]["targets"].tolist() == [0.375, 0.75] and m["mae"]["all"] == 0.5625
    assert np.allclose(m["rmse"]["targets"], np.sqrt([0.3125, 1.25])) and m["rmse"]["all"] == math.sqrt(0.78125)
    assert m["r2"]["targets"][0] == 1 - 1.25 / 14 and math.isnan(m["r2"]["targets"][1])  # a constant target
    assert m["r2"]["all"] == 1 - 1.25 / 14  # the mean over the targets where R² is defined
    lines = regression_table(RegressionEvaluation(0.0, y, p), ["height", "weight"]).splitlines()
    assert lines[0].split() == ["target", "MSE", "RMSE", "MAE", "R2"]
    assert lines[1].split() == ["height", "0.3125", "0.559", "0.375", "0.9107"]
    assert lines[2].split() == ["weight", "1.25", "1.118", "0.75", "-"]
    assert lines[3].split() == ["all", "0.7812", "0.8839", "0.5625", "0.9107"]


def test_the_predictions_figure_has_one_panel_per_target_with_the_identity_line():
    y = np.array([[0.0, 10.0], [1.0, 20.0], [2.0, 30.0]])
    p = np.array([[0.5, 12.0], [1.0, 18.0], [2.5, np.inf]])
    fig = draw_predictions(y, p, ["a", "b"], "t")
    axes = fig.axes
    assert len(axes) == 2 and fig._suptitle.get_text() == "t"
    assert (axes[0].get_xlabel(), axes[0].get_ylabel()) == ("true a", "predicted a")
    assert [t.get_text() for t in axes[1].get_legend().get_texts()] == ["samples", "y = x"]
    assert axes[0].lines[0].get_xdata().tolist() == axes[0].lines[0].get_ydata().tolist() == [0.0, 2.5]
    assert axes[1].lines[0].get_xdata().tolist() == [10.0, 30.0]  # the infinite prediction is left out
    assert axes[0].collections[0].get_offsets().tolist() == [[0.0, 0.5], [1.0, 1.0], [2.0, 2.5]]


def test_the_fit_figure_shows_the_data_and_the_curve():
    x, y = np.array([0.0, 1.0, 2.0]), np.array([[0.1], [0.9], [2.2]])
    grid, curve = np.linspace(0, 2, 5), np.linspace(0, 2, 5)[:, None]
    fig = draw_fit(x, y, grid, curve, "dose", ["response"], "t")
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("dose", "response", "t")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["data", "model"]
    assert ax.lines[0].get_xdata().tolist() == grid.tolist() and ax.lines[0].get_ydata().tolist() == curve[:, 0].tolist()
    assert ax.collections[0].get_offsets().tolist() == [[0.0, 0.1], [1.0, 0.9], [2.0, 2.2]]


def test_a_regression_run_folder_has_its_plots_and_mlp_eval_reports_its_metrics(tmp_path):
    out = tmp_path / "run"
    result = invoke_cli(train_main, "--config", "configs/sine.yaml", "--out", str(out), "--set", "training.epochs=30",
                        "--set", "data.preprocess=standardize", "-q")
    assert result.exit_code == 0, result.output
    assert (out / "predictions.png").stat().st_size > 0 and (out / "fit.png").stat().st_size > 0
    assert not (out / "accuracy.png").exists() and not (out / "confusion.png").exists()
    result = invoke_cli(eval_main, "--model", str(out / "model.npz"), "--split", "val", "--out", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("sine val: 80 samples, loss ") and lines[1].split()[0] == "target"
    mse, rmse, _, r2 = map(float, lines[2].split()[1:])
    assert lines[2].split()[0] == "y" and r2 > 0.8 and abs(rmse - math.sqrt(mse)) < 1e-3 * rmse
    assert abs(float(lines[0].split()[-1]) - mse) < 1e-3  # the loss is the MSE
    assert lines[-1] == f"wrote {tmp_path / 'r' / 'predictions_val.png'}"
    ev = evaluate_saved_model(out / "model.npz", "val")
    assert not ev.classification and ev.target_names == ["y"] and ev.result.y_pred.shape == (80, 1)


def test_a_csv_regression_names_its_target_and_has_no_fit_plot_for_two_features(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(60, 2))
    rows = [f"{a:.5f},{b:.5f},{2 * a - b:.5f}" for a, b in X]
    (tmp_path / "d.csv").write_text("a,b,price\n" + "\n".join(rows) + "\n")
    cfg = load_config("configs/sine.yaml", [f"data.path={tmp_path / 'd.csv'}", "data.name=csv", "data.task=regression",
                                            "data.test_fraction=0.2", "training.epochs=3"])
    train_run(cfg, str(tmp_path / "run"), echo=lambda line: None)
    assert (tmp_path / "run" / "predictions.png").is_file() and not (tmp_path / "run" / "fit.png").exists()
    ev = evaluate_saved_model(tmp_path / "run" / "model.npz")
    assert ev.split == "test" and ev.target_names == ["price"] and len(ev.result.y_true) == 12
    assert ev.dataset == "d.csv"  # the file, not "csv"


def test_overfit_batch_judges_a_regression_fit_against_the_targets_variance():
    result = invoke_cli(train_main, "--config", "configs/sine.yaml", "--overfit-batch", "20")
    assert result.exit_code == 0, result.output
    last = result.output.splitlines()[-1]
    assert last.startswith("memorised 20 examples in ") and "below 1% of the targets' variance 0." in last
    result = invoke_cli(train_main, "--config", "configs/sine.yaml", "--overfit-batch", "20", "--max-steps", "20",
                        "--set", "optimizer.lr=1e-6")
    assert result.exit_code == 1
    assert "could not memorise 20 examples in 20 steps" in result.output and "not below 1% of the targets' variance" in result.output
