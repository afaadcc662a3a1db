"""grad_norms.png, update_ratio.png, activations.png and lr_find.png read back through matplotlib:
a deep network's series are named by layer index and type, never share a colour, and their
legends sit outside the plotting area."""

import math

import matplotlib.colors as mcolors
import pytest

from mlp_manual.plots import diagnostics

LAYER_TYPES = ["linear", "sigmoid"] * 10 + ["linear"]  # 11 linear layers: 22 parameter tensors


def deep_rows(steps=(4, 9, 14)):
    """Diagnostics rows (step, layer, tensor, stat, value) of the network of LAYER_TYPES."""
    rows = []
    for step in steps:
        for i, kind in enumerate(LAYER_TYPES):
            if kind == "linear":
                for key in ("W", "b"):
                    name = f"layers.{i}.{key}"
                    rows += [(step, i, name, "grad_norm", 10.0 ** (i / 4 - 6)), (step, i, name, "weight_norm", 1.0),
                             (step, i, name, "update_ratio", 0.0 if i == 0 else 1e-3)]
            rows += [(step, i, f"layers.{i}", "act_mean", 0.5), (step, i, f"layers.{i}", "act_std", 0.2)]
            if kind == "sigmoid":
                rows.append((step, i, f"layers.{i}", "saturated_fraction", 0.1))
    return rows


def legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def assert_legend_outside(fig, ax):
    fig.canvas.draw()
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1


@pytest.fixture
def drawn(tmp_path, figures):
    diagnostics.plot_diagnostics(deep_rows(), tmp_path, "deep", LAYER_TYPES)
    return figures


@pytest.mark.parametrize("name", ["grad_norms.png", "update_ratio.png"])
def test_each_parameter_tensor_is_named_by_layer_and_type_in_its_own_colour(drawn, name):
    fig = drawn[name]
    [ax] = fig.axes
    tensors = [f"{i} linear.{k}" for i in range(0, 21, 2) for k in ("W", "b")]
    assert len(tensors) == 22
    texts = legend_texts(ax)
    assert texts[:22] == tensors and texts[22:] == ([] if name == "grad_norms.png" else ["0.001 (healthy)"])
    series = ax.lines[:22]
    assert len({mcolors.to_hex(line.get_color()) for line in series}) == 22
    assert [line.get_linestyle() for line in series[:2]] == ["-", "--"]  # biases dashed
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "step"
    assert_legend_outside(fig, ax)


def test_a_zero_update_ratio_is_a_gap_not_a_spike(drawn):
    [ax] = drawn["update_ratio.png"].axes
    first = ax.lines[0]  # 0 linear.W, whose update rounded to zero
    assert legend_texts(ax)[0] == "0 linear.W"
    assert all(math.isnan(v) for v in first.get_ydata())  # not drawn
    assert ax.get_ylim()[0] > 1e-10 and [t.get_text() for t in ax.texts] == ["gaps: exactly 0"]
    assert len(drawn["grad_norms.png"].axes[0].texts) == 0


def test_activations_name_every_layer_once_in_colours_shared_by_both_panels(drawn):
    fig = drawn["activations.png"]
    top, bottom = fig.axes
    assert legend_texts(top) == [f"{i} {kind}" for i, kind in enumerate(LAYER_TYPES)]
    means = top.lines[::2]
    assert len({mcolors.to_hex(line.get_color()) for line in means}) == len(LAYER_TYPES)
    assert legend_texts(bottom) == ["saturated: |output| near its limit"]  # the colours are named once, above
    assert mcolors.to_hex(bottom.lines[0].get_color()) == mcolors.to_hex(top.lines[2].get_color())  # layer 1
    assert_legend_outside(fig, top)
    assert_legend_outside(fig, bottom)


@pytest.mark.parametrize("depth", [17, 41])
def test_the_activation_legends_never_overlap_each_other_at_any_depth(tmp_path, figures, depth):
    kinds = ["linear", "relu"] * (depth // 2) + ["linear"]
    rows = [(step, i, f"layers.{i}", stat, 0.3) for step in (1, 2) for i in range(len(kinds))
            for stat in ("act_mean", "act_std")]
    rows += [(step, i, f"layers.{i}", "dead_fraction", 0.1) for step in (1, 2) for i in range(1, len(kinds), 2)]
    diagnostics.plot_activations(rows, tmp_path, "deep", kinds)
    fig = figures["activations.png"]
    top, bottom = fig.axes
    fig.canvas.draw()
    upper, lower = top.get_legend().get_window_extent(), bottom.get_legend().get_window_extent()
    assert not upper.overlaps(lower)
    assert upper.y0 >= bottom.get_window_extent().y1  # the layer legend stays beside its own panel
    assert len(legend_texts(top)) == len(kinds) and legend_texts(bottom) == ["dead: output 0 for every row"]


def test_without_layer_types_the_tensor_names_are_used(tmp_path, figures):
    diagnostics.plot_diagnostics(deep_rows(), tmp_path, "deep")
    assert legend_texts(figures["grad_norms.png"].axes[0])[:2] == ["layers.0.W", "layers.0.b"]


def test_lr_find_marks_the_suggested_rate(tmp_path, figures):
    lrs = [1e-6 * 10 ** (k / 10) for k in range(60)]
    diagnostics.plot_lr_find(lrs, [2.0 - k / 60 for k in range(60)], 1e-3, tmp_path / "lr_find.png", "moons")
    [ax] = figures["lr_find.png"].axes
    assert legend_texts(ax) == ["suggested lr 0.001"]
    assert (ax.get_xscale(), ax.get_xlabel(), ax.get_title()) == ("log", "learning rate", "moons: learning-rate sweep")
    assert list(ax.lines[1].get_xdata()) == [1e-3, 1e-3]
