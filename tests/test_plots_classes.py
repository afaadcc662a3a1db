"""confusion.png and mistakes.png read back through matplotlib: counts large enough to read,
images framed and packed under the title."""

import numpy as np
import pytest

from mlp_manual.plots import classes


def count_texts(ax) -> dict[tuple[float, float], str]:
    return {t.get_position(): t.get_text() for t in ax.texts}


@pytest.mark.parametrize("n, smallest", [(2, 20), (10, 12)])
def test_confusion_counts_are_written_large_and_zeros_left_out(tmp_path, figures, n, smallest):
    confusion = np.diag(np.arange(1, n + 1) * 97)  # three-digit counts on the diagonal
    confusion[0, 1] = 3
    classes.plot_confusion(confusion, [str(c) for c in range(n)], tmp_path / "confusion.png", "digits: test")
    ax = figures["confusion.png"].axes[0]
    texts = count_texts(ax)
    assert texts[(1, 0)] == "3" and texts[(0, 0)] == "97" and len(texts) == n + 1
    assert min(t.get_fontsize() for t in ax.texts) >= smallest
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(c) for c in range(n)]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("predicted", "true", "digits: test")


def test_count_font_fits_the_cell():
    assert classes.count_fontsize(7.0, 10, 6) < classes.count_fontsize(7.0, 10, 2) <= 20  # wide counts shrink
    assert classes.count_fontsize(12.0, 20, 5) >= 7


def mistakes_figure(tmp_path, figures, n_wrong, n=60, shape=(28, 28)):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(n, shape[0] * shape[1]))
    y_true = np.arange(n) % 10
    y_pred = y_true.copy()
    y_pred[:n_wrong] = (y_pred[:n_wrong] + 1) % 10
    classes.plot_mistakes(X, y_true, y_pred, shape, [str(c) for c in range(10)], tmp_path / "mistakes.png",
                          "mnist: misclassified test images")
    return figures["mistakes.png"]


def test_mistakes_are_framed_titled_and_counted(tmp_path, figures):
    fig = mistakes_figure(tmp_path, figures, n_wrong=50)
    shown = [ax for ax in fig.axes if ax.images]
    assert len(shown) == 36 and fig._suptitle.get_text() == "mnist: misclassified test images: 36 of 50 (true -> predicted)"
    assert shown[0].get_title() == "0 -> 1"
    for ax in shown:
        assert ax.axison and all(s.get_visible() for s in ax.spines.values())  # a frame around each image
        assert list(ax.get_xticks()) == [] and list(ax.get_yticks()) == []
    assert not any(ax.axison for ax in fig.axes if not ax.images)
    fig = mistakes_figure(tmp_path, figures, n_wrong=4)
    assert fig._suptitle.get_text().endswith(": all 4 (true -> predicted)")


def test_the_grid_starts_right_under_the_title(tmp_path, figures):
    fig = mistakes_figure(tmp_path, figures, n_wrong=36)
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    title_bottom = fig._suptitle.get_window_extent(renderer).y0
    first_row_top = max(ax.title.get_window_extent(renderer).y1 for ax in fig.axes if ax.images)
    assert 0 <= title_bottom - first_row_top < 0.25 * fig.dpi  # no empty band: under a quarter inch
