"""plots/png.py writes every kind of figure the package draws as an opaque PNG cropped to its
drawing, whatever a matplotlibrc says; and the plain-text labels of log axes read like
matplotlib's own."""

import re
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.ticker import LogFormatterSciNotation

from mlp_manual.config import load_config
from mlp_manual.explain.graph import build_graph
from mlp_manual.explain.trace import trace
from mlp_manual.plots import classes, curves, diagnostics, png, regression
from mlp_manual.plots.graph import draw_graph
from mlp_manual.plots.style import PlainLogFormatter, new_figure, power_of_ten
from mlp_manual.training.experiment import prepare

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def loss_curves():
    epochs = list(range(1, 51))
    curves.plot_curves({"epoch": epochs, "train_loss": list(np.geomspace(2, 1e-3, 50)),
                        "val_loss": list(np.geomspace(3, 2e-3, 50))}, "loss", Path("loss.png"), "run: loss", 40, True)


def decision_boundary():
    X = np.random.default_rng(0).normal(size=(100, 2))
    curves.plot_decision_boundary(lambda grid: (grid[:, 0] + 0.2 * grid[:, 1] > 0).astype(int), X,
                                  (X[:, 0] > 0).astype(int), Path("decision_boundary.png"), "boundary", ["a", "b"])


def confusion():  # a colour bar: an axes with a locator of its own
    classes.plot_confusion(np.array([[5, 1], [2, 7]]), ["cat", "dog"], Path("confusion.png"), "confusion")


def mistakes():  # a constrained layout and a suptitle
    rng = np.random.default_rng(0)
    classes.plot_mistakes(rng.random((20, 64)), np.arange(20) % 3, (np.arange(20) + 1) % 3, (8, 8), list("xyz"),
                          Path("mistakes.png"), "mistakes")


def lr_sweep():  # a log x axis
    diagnostics.plot_lr_find(np.geomspace(1e-5, 1, 40), np.linspace(2, 0.5, 40), 1e-2, Path("lr_find.png"), "run")


def predictions():  # two panels and a suptitle
    y = np.random.default_rng(0).normal(size=(30, 2))
    return regression.draw_predictions(y, y + 0.1, ["t0", "t1"], "predictions")


def graph():
    exp = prepare(load_config(CONFIGS / "xor.yaml"))
    return draw_graph(build_graph(trace(exp.model, exp.loss, exp.data.X_train[:4], exp.data.y_train[:4],
                                        check=False)), "xor")


def made(draw, figures):
    """The figure ``draw`` makes, whether it returns it or hands it to save."""
    figures.clear()
    fig = draw()
    return fig if fig is not None else next(iter(figures.values()))


def blocks(image, k=6):
    """Mean colour of each k x k block of an (H, W, C) image: what a sub-pixel shift leaves alike."""
    h, w = image.shape[0] // k * k, image.shape[1] // k * k
    return image[:h, :w, :3].reshape(h // k, k, w // k, k, 3).mean(axis=(1, 3))


def ink_box(image):
    """(top, bottom, left, right) margins of an (H, W, C) image's ink: pixels unlike its corner."""
    ink = np.any(image[..., :3] != image[0, 0, :3], axis=2)
    rows, columns = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    return rows[0], image.shape[0] - 1 - rows[-1], columns[0], image.shape[1] - 1 - columns[-1]


def inked(image):
    top, bottom, left, right = ink_box(image)
    return image[top:image.shape[0] - bottom, left:image.shape[1] - right, :3]


@pytest.mark.parametrize("draw", [loss_curves, decision_boundary, confusion, mistakes, lr_sweep, predictions, graph])
def test_every_kind_of_figure_is_an_opaque_png_cropped_to_its_drawing(tmp_path, figures, draw):
    fig = made(draw, figures)
    png.save(fig, tmp_path / "figure.png")
    image = plt.imread(tmp_path / "figure.png")
    assert np.all(image[..., 3] == 1.0)
    top, bottom, left, right = ink_box(image)
    # PAD is 11 pixels beyond the artists' boxes, which may reach past their ink (a node's
    # circle, a text's line height); a margin of an inch (a matplotlibrc's pad) is 110
    assert all(8 <= m <= 60 for m in (top, bottom, left, right)), (top, bottom, left, right)


def test_saving_gives_the_figure_back_as_it_was(tmp_path):
    fig, ax = new_figure((4, 3))
    ax.plot([0, 1], label="line")
    ax.legend()
    png.save(fig, tmp_path / "a.png")
    assert tuple(fig.get_size_inches()) == pytest.approx((4, 3)) and fig.get_dpi() == 100
    png.save(fig, tmp_path / "b.png")  # the same picture a second time
    assert np.array_equal(plt.imread(tmp_path / "a.png"), plt.imread(tmp_path / "b.png"))


def test_saving_ignores_a_matplotlibrc(tmp_path):
    fig, ax = new_figure((4, 3))
    ax.plot([1, 2], label="line")
    fig.legend()
    with matplotlib.rc_context({"savefig.transparent": True, "savefig.pad_inches": 1.0, "savefig.dpi": 50}):
        png.save(fig, tmp_path / "legend.png")
    image = plt.imread(tmp_path / "legend.png")
    assert np.all(image[..., 3] == 1.0)  # opaque
    assert ink_box(image)[0] <= 12  # about 0.1 inch of margin above the legend, not 1 inch
    assert image.shape[1] > 4 * png.DPI * 0.8  # at DPI, not 50


def test_a_long_title_is_cut(tmp_path):
    fig, ax = new_figure((4, 3))
    ax.set_title("x" * 300)
    png.save(fig, tmp_path / "title.png")
    assert ax.get_title() == "x" * (png.TITLE_CHARACTERS - 3) + "..."


@pytest.mark.parametrize("x, text", [
    (1e-3, "10\u207b\u00b3"), (2e-3, "2\u00d710\u207b\u00b3"), (1.0, "10\u2070"), (10.0, "10\u00b9"),
    (0.5, "5\u00d710\u207b\u00b9"), (3e12, "3\u00d710\u00b9\u00b2"), (1e-300, "10\u207b\u00b3\u2070\u2070"),
])
def test_power_of_ten_in_plain_text(x, text):
    assert power_of_ten(x) == text


def mathtext_to_plain(label):
    """matplotlib's '$\\mathdefault{2\\times10^{-3}}$' as '2x10^-3' in superscript characters."""
    label = label.replace("$\\mathdefault{", "").replace("}$", "").replace("\\times", "\u00d7")
    return re.sub(r"\^\{(-?\d+)\}", lambda m: m.group(1).translate(str.maketrans(
        "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")), label)


@pytest.mark.parametrize("low, high", [(2e-4, 0.7), (0.03, 0.5), (0.2, 0.9), (1e-9, 1e3)])
def test_log_labels_are_matplotlibs_own_in_plain_text(low, high):
    fig, ax = new_figure((6, 4))
    ax.plot([0, 1], [low, high])
    ax.set_yscale("log")
    fig.canvas.draw()
    ours = {"major": PlainLogFormatter(), "minor": PlainLogFormatter(labelOnlyBase=False)}
    theirs = {"major": LogFormatterSciNotation(), "minor": LogFormatterSciNotation(labelOnlyBase=False)}
    labels = {}
    for kind in ("major", "minor"):
        ticks = [t for t in getattr(ax.yaxis, f"get_{kind}_locator")()() if low <= t <= high]
        for f in (ours[kind], theirs[kind]):
            f.set_axis(ax.yaxis)
            f.set_locs(ticks)
        labels[kind] = [ours[kind](t) for t in ticks]
        assert labels[kind] == [mathtext_to_plain(theirs[kind](t)) for t in ticks]
    assert any(labels["major"] + labels["minor"])
    plt.close(fig)


def test_loss_curves_over_decades_use_the_plain_labels(figures):
    loss_curves()
    ax = figures["loss.png"].axes[0]
    assert ax.get_yscale() == "log" and isinstance(ax.yaxis.get_major_formatter(), PlainLogFormatter)
    assert isinstance(ax.yaxis.get_minor_formatter(), PlainLogFormatter)
