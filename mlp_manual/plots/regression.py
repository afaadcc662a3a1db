"""Figures of a regression model: predicted against true values, and the fitted curve of a model
with one input feature.

Draws with matplotlib's Agg backend, like every plots module, and writes atomically.
Each ``draw_*`` returns the figure (for tests to inspect); ``plot_*`` draws and saves it.
N = samples, K = targets, G = points of the curve.
"""

import numpy as np

from .png import save
from .style import TITLE_Y, new_figure

MAX_PANELS = 6  # targets drawn side by side; more would be unreadable


def draw_predictions(y_true: np.ndarray, y_pred: np.ndarray, target_names, title: str):
    """One panel per target (the first MAX_PANELS): predicted (N,) against true (N,), with the
    line y = x on which perfect predictions lie."""
    k = min(y_true.shape[1], MAX_PANELS)
    fig, axes = new_figure((4.2 * k, 4.2), 1, k, squeeze=False)
    for j, ax in enumerate(axes[0]):
        t, p = y_true[:, j], y_pred[:, j]
        seen = np.concatenate([t, p])
        seen = seen[np.isfinite(seen)]  # a diverged model's outputs may not be
        lo, hi = (float(seen.min()), float(seen.max())) if seen.size else (0.0, 1.0)
        ax.scatter(t, p, s=12, alpha=0.6, label="samples")
        ax.plot([lo, hi], [lo, hi], "k--", linewidth=1, label="y = x")
        ax.set_xlabel(f"true {target_names[j]}")
        ax.set_ylabel(f"predicted {target_names[j]}")
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left")
    fig.suptitle(title)
    return fig


def plot_predictions(y_true: np.ndarray, y_pred: np.ndarray, target_names, path, title: str) -> None:
    """``draw_predictions`` saved to ``path``."""
    save(draw_predictions(y_true, y_pred, target_names, title), path)


def draw_fit(x: np.ndarray, y: np.ndarray, grid: np.ndarray, curve: np.ndarray, feature_name: str,
             target_names, title: str):
    """The data, targets y (N, K) against the one feature x (N,), and the model's curve (G, K)
    over ``grid`` (G,), one colour per target."""
    fig, ax = new_figure((6, 4))
    for j, name in enumerate(target_names[:MAX_PANELS]):
        suffix = f" ({name})" if len(target_names) > 1 else ""
        dots = ax.scatter(x, y[:, j], s=10, alpha=0.5, label=f"data{suffix}")
        ax.plot(grid, curve[:, j], color=dots.get_facecolor()[0][:3], linewidth=2, label=f"model{suffix}")
    ax.set_xlabel(feature_name)
    ax.set_ylabel(target_names[0] if len(target_names) == 1 else "target")
    ax.set_title(title, y=TITLE_Y)
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


def plot_fit(x: np.ndarray, y: np.ndarray, grid: np.ndarray, curve: np.ndarray, feature_name: str,
             target_names, path, title: str) -> None:
    """``draw_fit`` saved to ``path``."""
    save(draw_fit(x, y, grid, curve, feature_name, target_names, title), path)
