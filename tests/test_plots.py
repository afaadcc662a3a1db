"""The figures of plots/curves.py, read back through matplotlib: a run folder's loss.png and
accuracy.png and mlp-plot's comparison share one drawing path, one log-scale rule, whole-number
epoch ticks, the best-epoch mark and the accuracy zoom; the decision boundary names its classes."""

import json
import math
import os
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli.plot import main as plot_main
from mlp_manual.plots import curves, png
from mlp_manual.runs.metrics import write_metrics


def axes_of(fig):
    [ax] = fig.axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    return ax.get_xlabel(), ax.get_ylabel(), ax.get_title(), legend, ax.get_yscale()


@pytest.mark.parametrize("metric, values, log", [
    ("loss", [2.0, 0.5, 0.019], True),  # more than two decades
    ("train_loss", [2.0, 0.02], False),  # exactly two
    ("val_loss", [None, 5.0, 0.01, math.inf, 0.0, -1.0], True),  # only finite positive values count
    ("acc", [0.001, 1.0], False),  # only losses
    ("loss", [None, math.nan], False),
])
def test_log_scale_rule(metric, values, log):
    assert curves.log_scale(metric, values) is log


def test_run_curves_draw_train_and_val_loss_and_accuracy(tmp_path, figures):
    history = {"epoch": [1, 2, 3], "train_loss": [3.0, 0.3, 0.01], "val_loss": [3.0, 0.5, 0.2],
               "train_acc": [0.1, 0.9, 0.999], "val_acc": [0.2, 0.8, 0.95]}
    curves.plot_run_curves(history, tmp_path, "spirals")
    assert axes_of(figures["loss.png"]) == ("epoch", "loss", "spirals: loss", ["train", "val"], "log")
    assert axes_of(figures["accuracy.png"]) == ("epoch", "acc", "spirals: accuracy", ["train", "val"], "linear")
    train, val = figures["loss.png"].axes[0].lines
    assert list(val.get_ydata()) == [3.0, 0.5, 0.2] and val.get_linestyle() == "--" and val.get_marker() == "o"


def test_run_curves_of_a_regression_without_validation(tmp_path, figures):
    curves.plot_run_curves({"epoch": list(range(1, 41)), "train_loss": [1.0 / e for e in range(1, 41)]},
                           tmp_path, "sine")
    assert list(figures) == ["loss.png"]
    assert axes_of(figures["loss.png"]) == ("epoch", "loss", "sine: loss", ["train"], "linear")
    assert figures["loss.png"].axes[0].lines[0].get_marker() == "None"  # no markers from 30 epochs on


def test_compare_draws_one_labelled_line_per_run(tmp_path, figures):
    runs = [("lr=0.1", [1, 2], [1.0, 0.001]), ("lr=0.01", [1, 2, 3], [1.0, 0.5, 0.25])]
    curves.plot_compare(runs, "val_loss", tmp_path / "compare.png", "val_loss per epoch")
    assert axes_of(figures["compare.png"]) == ("epoch", "val_loss", "val_loss per epoch", ["lr=0.1", "lr=0.01"], "log")
    curves.plot_compare(runs, "val_acc", tmp_path / "acc.png", "val_acc per epoch")
    assert axes_of(figures["acc.png"])[4] == "linear"


def test_mlp_plot_redraws_a_run_through_the_same_path(tmp_path, figures):
    run = tmp_path / "moons-a"
    run.mkdir()
    write_metrics(run, {"epoch": [1, 2], "lr": [0.1, 0.1], "train_loss": [0.7, 0.6], "train_acc": [0.5, 0.6],
                        "seconds": [0.1, 0.2]})
    result = invoke_cli(plot_main, str(run))
    assert result.exit_code == 0 and result.output == f"redrew the plots of {run} from its metrics.csv\n"
    # the empty val_ columns of a run without validation are not drawn
    assert axes_of(figures["loss.png"]) == ("epoch", "loss", "moons-a: loss", ["train"], "linear")
    assert axes_of(figures["accuracy.png"]) == ("epoch", "acc", "moons-a: accuracy", ["train"], "linear")



def test_mlp_plot_redraws_a_run_with_the_title_of_its_config_name(tmp_path, figures):
    run = tmp_path / "moons-lr05"
    run.mkdir()
    write_metrics(run, {"epoch": [1, 2], "lr": [0.1, 0.1], "train_loss": [0.7, 0.6], "seconds": [0.1, 0.2]})
    (run / "config.yaml").write_text("name: moons\ndata: {name: moons}\n")
    assert invoke_cli(plot_main, str(run)).exit_code == 0
    assert axes_of(figures["loss.png"])[2] == "moons: loss"  # as mlp-train drew it, not the folder's name


REFUSE = """
import sys
from click.testing import CliRunner
from mlp_manual.cli.{module} import main
result = CliRunner().invoke(main, sys.argv[1:])
print(result.exit_code, "matplotlib" in sys.modules)
"""


@pytest.mark.parametrize("module, args", [
    ("plot", ["nowhere"]),
    ("plot", ["{run}", "--metric", "nope", "-o", "c.png"]),
    ("train", ["--config", "configs/xor.yaml", "--set", "training.epochs=0"]),
])
def test_a_bad_argument_is_refused_before_matplotlib_is_imported(tmp_path, module, args):
    run = tmp_path / "run"
    run.mkdir()
    write_metrics(run, {"epoch": [1], "train_loss": [0.5]})
    proc = subprocess.run([sys.executable, "-c", REFUSE.format(module=module), *(a.format(run=run) for a in args)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout.split() == ["1", "False"], proc.stderr


def visible_ticks(axis, limits) -> list[float]:
    lo, hi = limits
    return [float(t) for t in axis.get_ticklocs() if lo <= t <= hi]


@pytest.mark.parametrize("epochs, expected", [(1, [1.0]), (5, [1.0, 2.0, 3.0, 4.0, 5.0])])
def test_short_runs_have_whole_epoch_ticks(tmp_path, figures, epochs, expected):
    history = {"epoch": list(range(1, epochs + 1)), "train_loss": [1.0 / e for e in range(1, epochs + 1)],
               "train_acc": [0.5 + 0.05 * e for e in range(1, epochs + 1)]}
    curves.plot_run_curves(history, tmp_path, "moons")
    for name in ("loss.png", "accuracy.png"):
        fig = figures[name]
        fig.canvas.draw()
        ax = fig.axes[0]
        assert visible_ticks(ax.xaxis, ax.get_xlim()) == expected


def test_the_best_epoch_is_marked_and_says_whether_its_weights_were_restored(tmp_path, figures):
    history = {"epoch": [1, 2, 3, 4], "train_loss": [1.0, 0.5, 0.4, 0.3], "val_loss": [1.0, 0.6, 0.7, 0.8],
               "train_acc": [0.5, 0.7, 0.8, 0.9], "val_acc": [0.5, 0.7, 0.65, 0.6]}
    curves.plot_run_curves(history, tmp_path, "moons", best_epoch=2, restored=True)
    for name in ("loss.png", "accuracy.png"):
        ax = figures[name].axes[0]
        assert axes_of(figures[name])[3] == ["train", "val", "best epoch 2 (weights restored)"]
        marker = ax.lines[-1]
        assert list(marker.get_xdata()) == [2, 2] and marker.get_linestyle() == ":"
    curves.plot_run_curves(history, tmp_path, "moons", best_epoch=2)
    assert axes_of(figures["loss.png"])[3][-1] == "best epoch 2"


def test_accuracy_zooms_past_the_first_climb_and_says_so(tmp_path, figures):
    epochs = list(range(1, 101))
    train = [0.19, 0.7, 0.9, 0.95] + [0.99 + 0.0001 * e for e in range(96)]
    val = [0.3, 0.8, 0.93, 0.96] + [0.975 + 0.0001 * e for e in range(96)]
    curves.plot_run_curves({"epoch": epochs, "train_loss": [1.0] * 100, "train_acc": train, "val_acc": val},
                           tmp_path, "digits")
    ax = figures["accuracy.png"].axes[0]
    lo, hi = ax.get_ylim()
    assert 0.959 < lo < min(val[10:]) and max(train) < hi <= 1.01 and hi - lo >= 0.05 - 1e-9
    assert [t.get_text() for t in ax.texts] == ["zoomed past epochs 1-10 (lowest 0.190)"]
    curves.plot_run_curves({"epoch": [1, 2, 3], "train_loss": [1.0] * 3, "train_acc": [0.1, 0.5, 0.9]},
                           tmp_path, "short")
    ax = figures["accuracy.png"].axes[0]
    assert ax.get_ylim()[0] < 0.1 and len(ax.texts) == 0  # under 10 epochs everything is shown


def test_accuracy_that_plateaus_early_shows_its_whole_climb(tmp_path, figures):
    curves.plot_run_curves({"epoch": list(range(1, 31)), "train_loss": [1.0] * 30,
                            "train_acc": [0.5] * 3 + [1.0] * 27}, tmp_path, "xor")
    ax = figures["accuracy.png"].axes[0]
    lo, hi = ax.get_ylim()
    assert hi == 1.01 and lo < 0.5 and len(ax.texts) == 0  # the climb from 0.5 is in view, nothing zoomed past
    ticks = [t for t in ax.get_yticks() if lo <= t <= hi]
    assert max(ticks) == pytest.approx(1.0) and len(ticks) >= 4  # labelled up to 100%, not past it


def test_decision_boundary_has_a_legend_of_the_classes(tmp_path, figures):
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.5, 0.5]], dtype=np.float32)
    y = np.array([0, 1, 2, 1, 0])
    curves.plot_decision_boundary(lambda g: (g[:, 0] > 0.5).astype(int), X, y, tmp_path / "decision_boundary.png",
                                  "spirals: decision boundary", ("0", "1", "2"))
    fig = figures["decision_boundary.png"]
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["class 0", "class 1", "class 2"]
    assert legend.get_title().get_text() == "points: true class\nshade: predicted"
    colors = [tuple(c.get_facecolor()[0]) for c in ax.collections[-3:]]
    assert len(set(colors)) == 3
    fig.canvas.draw()
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1  # beside the plot, not over the points
    curves.plot_decision_boundary(lambda g: np.zeros(len(g), dtype=int), X[:2], np.array([0, 1]),
                                  tmp_path / "named.png", "t", ("cat", "dog"))
    assert [t.get_text() for t in figures["named.png"].axes[0].get_legend().get_texts()] == ["cat", "dog"]


def finished_run(folder, lr, best_epoch=None):
    """A run folder as mlp-plot reads it: config.yaml, metrics.csv and, with ``best_epoch``, summary.json."""
    folder.mkdir()
    (folder / "config.yaml").write_text(f"name: moons\ndata: {{name: moons}}\noptimizer: {{lr: {lr}}}\n")
    write_metrics(folder, {"epoch": [1, 2, 3], "lr": [lr] * 3, "train_loss": [0.7, 0.5, 0.4],
                           "val_loss": [0.8, 0.6, 0.7], "seconds": [0.1] * 3})
    if best_epoch:
        (folder / "summary.json").write_text(json.dumps({"best_epoch": best_epoch,
                                                         "weights": {"source": "best", "epoch": best_epoch}}))
    return folder


def test_mlp_plot_compares_into_the_first_run_folder_titled_with_the_dataset(tmp_path, figures):
    a, b = finished_run(tmp_path / "a", 0.1), finished_run(tmp_path / "b", 0.01)
    result = invoke_cli(plot_main, str(a), str(b))
    assert result.exit_code == 0 and result.output == f"wrote {a / 'compare_val_loss.png'}: 2 runs, lr=0.1; lr=0.01\n"
    fig = figures["compare_val_loss.png"]
    assert axes_of(fig)[2:4] == ("moons: val_loss per epoch", ["lr=0.1", "lr=0.01"])
    ax = fig.axes[0]
    assert len({line.get_color() for line in ax.lines}) == 2
    fig.canvas.draw()
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1


def test_mlp_plot_of_one_run_with_a_metric_draws_that_metric(tmp_path, figures):
    run = finished_run(tmp_path / "a", 0.1)
    result = invoke_cli(plot_main, str(run), "--metric", "train_loss")
    assert result.exit_code == 0 and result.output == f"wrote {run / 'compare_train_loss.png'}: 1 run, a\n"
    assert axes_of(figures["compare_train_loss.png"])[1] == "train_loss"
    result = invoke_cli(plot_main, str(run), "--metric", "bogus")
    assert result.exit_code == 1 and result.output.startswith(f"Error: {run}: metrics.csv has no bogus column")


def test_mlp_plot_redraws_a_run_with_its_best_epoch_from_summary_json(tmp_path, figures):
    run = finished_run(tmp_path / "a", 0.1, best_epoch=2)
    assert invoke_cli(plot_main, str(run)).exit_code == 0
    assert axes_of(figures["loss.png"])[3] == ["train", "val", "best epoch 2 (weights restored)"]
    (run / "summary.json").write_text("{damaged")
    assert invoke_cli(plot_main, str(run)).exit_code == 0
    assert axes_of(figures["loss.png"])[3] == ["train", "val"]


def test_run_curve_legends_sit_beside_the_plot(tmp_path, figures):
    history = {"epoch": [1, 2, 3], "train_loss": [1.0, 0.5, 0.4], "train_acc": [0.5, 0.7, 0.8]}
    curves.plot_run_curves(history, tmp_path, "moons", best_epoch=3)
    for name in ("loss.png", "accuracy.png"):
        fig = figures[name]
        fig.canvas.draw()
        ax = fig.axes[0]
        assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1


def test_one_accuracy_value_is_shown_in_a_range_a_person_reads(tmp_path, figures):
    curves.plot_run_curves({"epoch": [1], "train_loss": [0.7], "train_acc": [0.75]}, tmp_path, "xor")
    lo, hi = figures["accuracy.png"].axes[0].get_ylim()
    assert (lo, hi) == pytest.approx((0.725, 0.775))


def test_a_long_title_is_cut_before_the_figure_is_written(tmp_path):
    """A run's name may be 255 characters long; the image must not stretch to fit it."""
    fig, ax = plt.subplots()
    ax.set_title("n" * 255 + ": loss")
    fig.suptitle("short")
    png.save(fig, tmp_path / "loss.png")
    assert ax.get_title() == "n" * 97 + "..." and fig.texts[0].get_text() == "short"
    assert plt.imread(tmp_path / "loss.png").shape[1] < 1200  # about 2700 pixels wide uncut


def test_a_csv_run_is_titled_with_its_file_as_mlp_eval_names_it(tmp_path):
    from mlp_manual.results.compare import run_datasets

    for name, data in (("a", "{name: csv, path: /data/iris.csv}"), ("b", "{name: moons}")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(f"data: {data}\n")
    assert run_datasets([tmp_path / "a", tmp_path / "b"]) == "iris.csv, moons"


def test_runs_that_differ_in_their_layers_get_short_labels_and_a_caption(tmp_path, figures):
    import yaml

    from mlp_manual.plots.curves import plot_compare
    from mlp_manual.results.compare import run_legend

    runs = []
    for depth in (2, 8, 16):
        d = tmp_path / f"deep{depth}"
        d.mkdir()
        layers = [{"type": "linear", "units": 64}, {"type": "relu"}] * depth + [{"type": "linear"}]
        (d / "config.yaml").write_text(yaml.safe_dump({"name": "m", "data": {"name": "moons"},
                                                       "model": {"layers": layers}}))
        runs.append(d)
    labels, caption = run_legend(runs)
    assert labels == ["5 layers", "17 layers", "33 layers"]
    assert caption.splitlines()[0] == "5 layers: deep2: layers=[linear 64, relu, linear 64, relu, linear]"
    plot_compare([(label, [1, 2], [0.5, 0.4]) for label in labels], "val_loss", tmp_path / "c.png", "moons", caption)
    fig = figures["c.png"]
    [ax] = fig.axes
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1 and legend.width < ax.get_window_extent().width / 2
    assert [t.get_text() for t in ax.texts] == [caption]


def test_short_differences_are_the_labels_themselves(tmp_path):
    import yaml

    from mlp_manual.results.compare import run_legend

    for lr in (0.1, 0.01):
        (tmp_path / f"lr{lr}").mkdir()
        (tmp_path / f"lr{lr}" / "config.yaml").write_text(yaml.safe_dump({"optimizer": {"lr": lr}}))
    assert run_legend([tmp_path / "lr0.1", tmp_path / "lr0.01"]) == (["lr=0.1", "lr=0.01"], None)
