"""Figures of a run: loss and accuracy curves, and the decision boundary of a 2-feature model.

The only module besides other plots_* modules that imports matplotlib; it uses the
non-interactive Agg backend and writes every PNG atomically.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..files import atomic_path  # noqa: E402


def save(fig, path) -> None:
    """Write ``fig`` to ``path`` as PNG atomically and free it."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def plot_curves(history: dict, metric: str, path, title: str) -> None:
    """Train and validation ``metric`` per epoch. Loss uses a log scale when it spans more than
    two decades."""
    fig, ax = plt.subplots(figsize=(6, 4))
    epochs = history["epoch"]
    values = []
    for split, style in (("train", "-"), ("val", "--")):
        key = f"{split}_{metric}"
        if key in history:
            ax.plot(epochs, history[key], style, label=split, marker="o" if len(epochs) < 30 else None)
            values += [v for v in history[key] if v is not None and np.isfinite(v)]
    positive = [v for v in values if v > 0]
    if metric == "loss" and positive and max(positive) / min(positive) > 100:
        ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    save(fig, path)


def plot_decision_boundary(predict, X: np.ndarray, y: np.ndarray, path, title: str) -> None:
    """Predicted class over a grid covering X (N, 2), with the points coloured by label y (N,)."""
    pad = 0.1 * (X.max(axis=0) - X.min(axis=0)) + 0.1
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    grid = np.stack([gx.ravel(), gy.ravel()], 1).astype(X.dtype)  # (300 * 300, 2)
    zz = predict(grid).reshape(gx.shape)
    n_classes = int(max(y.max(), zz.max())) + 1
    cmap = matplotlib.colors.ListedColormap(plt.get_cmap("tab10").colors[:max(n_classes, 2)])
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.contourf(gx, gy, zz, levels=np.arange(n_classes + 1) - 0.5, cmap=cmap, alpha=0.3)
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap=cmap, vmin=-0.5, vmax=cmap.N - 0.5,
               edgecolors="k", linewidths=0.5, s=25)
    ax.set_title(title)
    ax.set_xlabel("feature 0")
    ax.set_ylabel("feature 1")
    save(fig, path)
