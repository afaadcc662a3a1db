"""Figures of a classifier's test results: the confusion matrix and a grid of misclassified images.

C = classes, N = samples, D = pixels.
"""

import numpy as np

from .png import save
from .style import TITLE_Y, new_figure


def plot_confusion(confusion: np.ndarray, class_names, path, title: str) -> None:
    """Counts (C, C), row = true class; colour = share of the row, so every class reads alike."""
    n = len(confusion)
    share = confusion / np.maximum(confusion.sum(axis=1, keepdims=True), 1)  # (C, C)
    size = max(4.5, 0.5 * n + 2)
    fig, ax = new_figure((size + 1, size))
    image = ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
    if n <= 20:
        fontsize = count_fontsize(size, n, len(str(confusion.max())))
        for i in range(n):
            for j in range(n):
                if confusion[i, j]:
                    ax.text(j, i, str(confusion[i, j]), ha="center", va="center", fontsize=fontsize,
                            color="white" if share[i, j] > 0.5 else "black")
    names = [str(c) for c in class_names]
    long_names = max(map(len, names)) > 2
    ax.set_xticks(range(n), names, rotation=45 if long_names else 0, ha="right" if long_names else "center")
    ax.set_yticks(range(n), names)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(title, y=TITLE_Y)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="share of the true class")
    save(fig, path)


def count_fontsize(size: float, n: int, digits: int) -> float:
    """Font size (points) for counts of ``digits`` digits in the cells of an ``n`` x ``n`` matrix
    drawn about ``size`` inches wide: a third of a cell high, never wider than the cell, 7 to 20."""
    cell = 0.75 * size * 72 / n  # points; the axes take about three quarters of the figure
    return float(np.clip(min(cell / 3, 0.8 * cell / (0.6 * digits)), 7, 20))


def plot_mistakes(X: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, image_shape, class_names, path,
                  title: str, limit: int = 36) -> None:
    """The first ``limit`` misclassified inputs X (N, D) drawn as framed images, titled
    "true -> predicted", in a grid packed under the figure title."""
    all_wrong = np.flatnonzero(y_true != y_pred)
    wrong = all_wrong[:limit]
    cols = 6
    rows = max(1, -(-len(wrong) // cols))
    fig, axes = new_figure((1.5 * cols, 1.65 * rows + 0.4), rows, cols, squeeze=False,
                           layout="constrained")
    names = [str(c) for c in class_names]
    for ax in axes.ravel():
        ax.axis("off")
    for ax, i in zip(axes.ravel(), wrong):
        ax.axis("on")
        ax.imshow(X[i].reshape(image_shape), cmap="gray_r")
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_edgecolor("0.45")
        ax.set_title(f"{names[y_true[i]]} -> {names[y_pred[i]]}", fontsize=8, y=TITLE_Y)
    if len(wrong) == 0:
        axes[0, 0].text(0, 0.5, "no mistakes", fontsize=10)
    shown = f"{len(wrong)} of {len(all_wrong)}" if len(all_wrong) > len(wrong) else f"all {len(wrong)}"
    fig.suptitle(f"{title}: {shown} (true -> predicted)", fontsize=10)
    save(fig, path)
