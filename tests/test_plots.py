"""The per-epoch figures, read back through matplotlib: a run folder's loss.png and accuracy.png
and mlp-plot's comparison share one drawing path and one log-scale rule."""

import math
import os
import subprocess
import sys

import matplotlib.pyplot as plt
import pytest
from conftest import invoke_cli

from mlp_manual.cli.plot import main as plot_main
from mlp_manual.plots import curves
from mlp_manual.runs.metrics import write_metrics


@pytest.fixture
def figures(monkeypatch):
    """{file name: the figure that would have been written to it}."""
    drawn = {}
    monkeypatch.setattr(curves, "save", lambda fig, path: drawn.__setitem__(path.name, fig))
    yield drawn
    for fig in drawn.values():
        plt.close(fig)


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


def test_a_long_title_is_cut_before_the_figure_is_written(tmp_path):
    """A run's name may be 255 characters long; the image must not stretch to fit it."""
    fig, ax = plt.subplots()
    ax.set_title("n" * 255 + ": loss")
    fig.suptitle("short")
    curves.save(fig, tmp_path / "loss.png")
    assert ax.get_title() == "n" * 97 + "..." and fig.texts[0].get_text() == "short"
    assert plt.imread(tmp_path / "loss.png").shape[1] < 1200  # about 2700 pixels wide uncut
