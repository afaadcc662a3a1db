"""Figures for looking inside training: gradient norms, update ratios, activations, and the
learning-rate sweep.

Each series is named by layer index and type (``0 linear.W``, ``1 relu``), has a colour of its
own, and the legends sit beside the plot, so a deep network stays readable.
"""

from collections import defaultdict

import numpy as np
from matplotlib.lines import Line2D

from .png import save
from .style import TITLE_Y, distinct_colors, legend_outside, log_axis, new_figure

LEGEND_ROWS = 12  # entries of a legend column that fit beside one of activations.png's two panels


def _series(rows, stat):
    """{(layer, tensor): ([steps], [values])} for one statistic of the diagnostics rows."""
    out = defaultdict(lambda: ([], []))
    for step, layer, tensor, s, value in rows:
        if s == stat:
            out[layer, tensor][0].append(step)
            out[layer, tensor][1].append(value)
    return out


def series_label(layer: int, tensor: str, layer_types) -> str:
    """``0 linear.W`` for the tensor ``layers.0.W``, ``1 relu`` for the output ``layers.1``;
    without ``layer_types`` (index -> type name) the tensor name itself."""
    if layer_types is None or layer >= len(layer_types):
        return tensor
    key = tensor.split(".")[2:]
    return f"{layer} {layer_types[layer]}" + "".join(f".{k}" for k in key)


def _tensor_panel(ax, rows, stat, layer_types) -> None:
    """One line per parameter tensor (biases dashed), log y; a zero (an update that rounded
    away) is left as a gap rather than drawn at the bottom of a log axis."""
    series = _series(rows, stat)
    for ((layer, tensor), (steps, values)), color in zip(series.items(), distinct_colors(len(series))):
        shown = [v if v > 0 else np.nan for v in values]
        ax.plot(steps, shown, color=color, linestyle="--" if tensor.endswith(".b") else "-",
                marker="." if len(steps) < 30 else None, label=series_label(layer, tensor, layer_types))
    log_axis(ax, "y")
    if any(v == 0 for _, values in series.values() for v in values):
        ax.text(0.99, 0.02, "gaps: exactly 0", transform=ax.transAxes, ha="right", va="bottom", fontsize=7,
                color="0.35")


def plot_diagnostics(rows, run_dir, name: str, layer_types=None) -> None:
    """grad_norms.png, update_ratio.png and activations.png from diagnostics rows
    (step, layer, tensor, stat, value); ``layer_types`` names each layer's type (``linear``)."""
    for stat, file, ylabel, ref in (("grad_norm", "grad_norms.png", "gradient norm", None),
                                    ("update_ratio", "update_ratio.png", "||lr * update|| / ||W||", 1e-3)):
        fig, ax = new_figure((8, 4.5))
        _tensor_panel(ax, rows, stat, layer_types)
        if ref:
            ax.axhline(ref, color="gray", linestyle=":", label=f"{ref:g} (healthy)")
        ax.set_xlabel("step")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{name}: {ylabel} per parameter tensor", y=TITLE_Y)
        ax.grid(alpha=0.3, which="both")
        legend_outside(ax, title="layer type.tensor")
        save(fig, run_dir / file)
    plot_activations(rows, run_dir, name, layer_types)


def plot_activations(rows, run_dir, name: str, layer_types=None) -> None:
    """activations.png: each layer output's mean (solid) and standard deviation (dashed) on top,
    its dead or saturated fraction below, in one colour per layer across both panels. The
    colours are named once, beside the top panel, in as many columns as keep that legend beside
    it at any depth; the bottom panel's legend names only its two line styles."""
    fig, (top, bottom) = new_figure((8, 6.5), 2, 1, sharex=True)
    means, stds = _series(rows, "act_mean"), _series(rows, "act_std")
    colors = dict(zip(means, distinct_colors(len(means))))
    for key, (steps, values) in means.items():
        label = series_label(*key, layer_types)
        top.plot(steps, values, color=colors[key], label=label)
        top.plot(*stds[key], linestyle="--", color=colors[key])
    top.set_ylabel("activation: mean (solid), std (dashed)")
    top.set_title(f"{name}: layer outputs", y=TITLE_Y)
    top.grid(alpha=0.3)
    legend_outside(top, title="layer", max_rows=LEGEND_ROWS)
    shown = []
    for stat, style, what in (("dead_fraction", "-", "dead: output 0 for every row"),
                              ("saturated_fraction", "--", "saturated: |output| near its limit")):
        series = _series(rows, stat)
        for key, (steps, values) in series.items():
            bottom.plot(steps, values, style, color=colors.get(key))
        if series:
            shown.append(Line2D([], [], color="0.35", linestyle=style, label=what))
    bottom.set_ylim(-0.02, 1.02)
    bottom.set_xlabel("step")
    bottom.set_ylabel("fraction of units (colour: layer)")
    bottom.grid(alpha=0.3)
    if shown:
        legend_outside(bottom, handles=shown)
    save(fig, run_dir / "activations.png")


def plot_lr_find(lrs, losses, suggested: float | None, path, name: str) -> None:
    """Smoothed loss against the learning rate (log x), with the suggested rate marked (the legend
    says "no clear descent" without one)."""
    fig, ax = new_figure((6, 4))
    ax.plot(lrs, losses, label="no clear descent" if suggested is None else None)
    if suggested is not None:
        ax.axvline(suggested, color="tab:red", linestyle="--", label=f"suggested lr {suggested:.2g}")
    log_axis(ax, "x")
    ax.set_xlabel("learning rate")
    ax.set_ylabel("training loss (smoothed)")
    ax.set_title(f"{name}: learning-rate sweep", y=TITLE_Y)
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    save(fig, path)

