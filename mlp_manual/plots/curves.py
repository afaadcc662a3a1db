"""Figures of runs: loss and accuracy per epoch, one metric of several runs overlaid, and the
decision boundary of a 2-feature model.
"""

import contextlib
from pathlib import Path

import numpy as np
from matplotlib.colors import ListedColormap

from .png import save
from .style import (
    TITLE_Y,
    distinct_colors,
    epoch_axis,
    legend_outside,
    log_axis,
    new_figure,
    zoom_accuracy,
)


def log_scale(metric: str, values) -> bool:
    """Whether to draw ``metric`` on a log axis: a loss whose finite positive ``values`` span
    more than two decades."""
    positive = [v for v in values if v is not None and np.isfinite(v) and v > 0]
    return metric.endswith("loss") and bool(positive) and max(positive) / min(positive) > 100


def plot_per_epoch(lines, metric: str, path, title: str, size=(6, 4), best_epoch: int | None = None,
                   restored: bool = False, caption: str | None = None) -> None:
    """``metric`` against the epoch, one line per (epochs, values, style), ``style`` being the
    keywords of ``Axes.plot`` (label, linestyle, marker); log y axis by ``log_scale``, accuracy
    axes zoomed by ``zoom_accuracy``, whole-number epochs. A ``best_epoch`` is marked by a
    vertical line, labelled as the epoch whose weights were kept when ``restored``. The legend
    sits beside the plot, where it hides no curve; a ``caption`` goes under the plot."""
    fig, ax = new_figure(size)
    for epochs, values, style in lines:
        ax.plot(epochs, values, **style)
    if log_scale(metric, [v for _, values, _ in lines for v in values]):
        log_axis(ax, "y")
    elif metric.endswith("acc"):
        zoom_accuracy(ax, [values for _, values, _ in lines])
    if best_epoch is not None:
        ax.axvline(best_epoch, color="0.4", linestyle=":", linewidth=1.2,
                   label=f"best epoch {best_epoch}" + (" (weights restored)" if restored else ""))
    epoch_axis(ax, [e for epochs, _, _ in lines for e in epochs])
    ax.set_ylabel(metric)
    ax.set_title(title, y=TITLE_Y)
    ax.grid(alpha=0.3)
    legend_outside(ax)
    if caption:
        ax.text(0.0, -0.16, caption, transform=ax.transAxes, va="top", ha="left", fontsize=7, color="0.25")
    save(fig, path)


def plot_curves(history: dict, metric: str, path, title: str, best_epoch: int | None = None,
                restored: bool = False) -> None:
    """Train and validation ``metric`` ("loss" or "acc") per epoch from ``history``
    ({column: [value per epoch]}); a column that is absent is not drawn."""
    marker = "o" if len(history["epoch"]) < 30 else None
    lines = [(history["epoch"], history[f"{split}_{metric}"], {"linestyle": style, "label": split, "marker": marker})
             for split, style in (("train", "-"), ("val", "--")) if f"{split}_{metric}" in history]
    plot_per_epoch(lines, metric, path, title, best_epoch=best_epoch, restored=restored)


def plot_run_curves(history: dict, run_dir: Path, name: str, best_epoch: int | None = None,
                    restored: bool = False, attempt=lambda file: contextlib.nullcontext()) -> None:
    """A run folder's loss.png, and accuracy.png when ``history`` has accuracies; both mark the
    ``best_epoch`` (the one whose weights the model holds when ``restored``). Each is drawn
    inside ``attempt(file name)``, which may record a failure and go on to the next."""
    with attempt("loss.png"):
        plot_curves(history, "loss", run_dir / "loss.png", f"{name}: loss", best_epoch, restored)
    if "train_acc" in history:
        with attempt("accuracy.png"):
            plot_curves(history, "acc", run_dir / "accuracy.png", f"{name}: accuracy", best_epoch, restored)


def plot_compare(curves: list[tuple[str, list, list]], metric: str, path, title: str,
                 caption: str | None = None) -> None:
    """One line of ``metric`` per run: (label, epochs, values), each run its own colour; the
    ``caption`` (each run's full description) under the plot."""
    colors = distinct_colors(len(curves))
    plot_per_epoch([(epochs, values, {"label": label, "color": color})
                    for (label, epochs, values), color in zip(curves, colors)], metric, path, title,
                   size=(7, 4.5), caption=caption)


def plot_decision_boundary(predict, X: np.ndarray, y: np.ndarray, path, title: str, class_names=None) -> None:
    """Predicted class over a grid covering X (N, 2), with the points coloured by label y (N,)
    and a legend naming each class (``class_names``, default the class numbers)."""
    pad = 0.1 * (X.max(axis=0) - X.min(axis=0)) + 0.1
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    grid = np.stack([gx.ravel(), gy.ravel()], 1).astype(X.dtype)  # (300 * 300, 2)
    zz = predict(grid).reshape(gx.shape)
    n_classes = max(int(max(y.max(), zz.max())) + 1, len(class_names or ()))
    names = [str(c) for c in class_names] if class_names is not None else [str(c) for c in range(n_classes)]
    colors = distinct_colors(max(n_classes, 2))
    cmap = ListedColormap(colors)
    fig, ax = new_figure((5, 5))
    ax.contourf(gx, gy, zz, levels=np.arange(n_classes + 1) - 0.5, cmap=cmap, alpha=0.3)
    for c in range(n_classes):
        mine = y == c
        ax.scatter(X[mine, 0], X[mine, 1], color=colors[c], edgecolors="k", linewidths=0.5, s=25,
                   label=f"class {names[c]}" if names[c].isdigit() else names[c])
    ax.set_title(title, y=TITLE_Y)
    ax.set_xlabel("feature 0")
    ax.set_ylabel("feature 1")
    legend_outside(ax, title="points: true class\nshade: predicted", title_fontsize=8)
    save(fig, path)
