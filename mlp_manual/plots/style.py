"""What the figures share so that a person can read them: colours that never repeat within a
figure, legends beside the plotting area rather than over the curves, whole-number epoch ticks,
accuracy axes zoomed to where the curves spend their time, and log axes labelled in plain text.
"""

import math

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter, MaxNLocator

# A title's height, fixed: matplotlib's automatic placement measures every tick label at each
# draw to clear labels above the axes, and no plot here has any there (same place, less time).
TITLE_Y = 1.0


def distinct_colors(n: int) -> list:
    """``n`` colours, no two alike: tab10 up to 10, tab20 up to 20, else ``n`` evenly spaced
    stops of the turbo colour map."""
    if n <= 10:
        return list(matplotlib.colormaps["tab10"].colors[:n])
    if n <= 20:
        return list(matplotlib.colormaps["tab20"].colors[:n])
    return [tuple(c) for c in matplotlib.colormaps["turbo"](np.linspace(0.03, 0.97, n))]


def agg_figure(figsize, layout=None) -> Figure:
    """An empty figure on an Agg canvas (``fig.canvas.draw()`` and ``get_renderer()`` work, as
    under pyplot), made without pyplot: no global list of figures, nothing to close, and the
    time to import pyplot is saved."""
    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)  # attaches itself as fig.canvas
    return fig


def new_figure(figsize, *grid, layout=None, **subplots_kwargs):
    """``agg_figure(figsize, layout)`` and its axes, ``Figure.subplots(*grid, **subplots_kwargs)``."""
    fig = agg_figure(figsize, layout)
    return fig, fig.subplots(*grid, **subplots_kwargs)


def legend_outside(ax, title: str | None = None, max_rows: int = 20, **kwargs):
    """A legend to the right of ``ax``, outside the plotting area, in as many columns as keep it
    to ``max_rows`` entries high (so that it stays beside ``ax``); none when nothing on ``ax`` has
    a label (a sweep whose every trial failed), where matplotlib would warn on standard error."""
    n = len(kwargs["handles"]) if "handles" in kwargs else len(ax.get_legend_handles_labels()[1])
    if n == 0:
        return None
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, title=title,
                     fontsize=7 if n > 8 else 8, ncol=max(1, math.ceil(n / max_rows)), **kwargs)


def epoch_axis(ax, epochs) -> None:
    """Label the x axis "epoch" with whole-number ticks only, with room around 1-epoch runs."""
    lo, hi = int(min(epochs)), int(max(epochs))
    pad = max(0.5, 0.03 * (hi - lo))
    ax.set_xlim(lo - pad, hi + pad)
    if hi - lo < 10:  # every epoch; a locator would fall back to fractions over so short a range
        ax.set_xticks(range(lo, hi + 1))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("epoch")


SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def power_of_ten(x: float) -> str:
    """``x`` > 0 written as a power of ten in plain text: "10\u207b\u00b3", "2\u00d710\u207b\u00b3"."""
    exponent = math.floor(math.log10(x) + 1e-9)  # 1e-9: 0.001 is 10^-3, not 9.99...x10^-4
    coefficient = x / 10.0 ** exponent
    power = "10" + str(exponent).translate(SUPERSCRIPT)
    return power if abs(coefficient - 1) < 1e-6 else f"{coefficient:.3g}\u00d7{power}"


class PlainLogFormatter(LogFormatter):
    """Labels a log axis where matplotlib's own formatter would, with ``power_of_ten``: the same
    text as its mathtext labels, drawn as plain text, which spares loading and running the
    mathtext parser for every figure with a log axis."""

    def __call__(self, x, pos=None):
        return power_of_ten(x) if x > 0 and super().__call__(x, pos) else ""


def log_axis(ax, which: str) -> None:
    """Put the ``which`` ("x" or "y") axis of ``ax`` on a log scale labelled by PlainLogFormatter."""
    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    axis.set_major_formatter(PlainLogFormatter())
    axis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))


class AtMostOneLocator(MaxNLocator):
    """matplotlib's automatic ticks (``AutoLocator`` is this ``MaxNLocator``) without those above
    1: an accuracy axis may leave room above 100%, but labels no accuracy there."""

    def tick_values(self, vmin, vmax):
        ticks = super().tick_values(vmin, vmax)
        return ticks[ticks <= 1 + 1e-9]


def _finite(values) -> list[float]:
    return [v for v in values if v is not None and np.isfinite(v)]


PLATEAU = 0.01  # accuracy that moves less than this after the first tenth of the epochs has plateaued


def zoom_accuracy(ax, series) -> None:
    """Fit the y axis of an accuracy plot to the values after the first tenth of the epochs
    (the fast climb of the first epochs would squash the rest), within [0, 1] and a little
    margin, never narrower than 0.05, and say so in a corner when earlier values fall below it.
    A run whose accuracy has plateaued by then (it moves less than PLATEAU) shows its whole curve,
    climb included: zoomed, it would be one flat line. ``series``: one list of values per line,
    epoch by epoch, None where missing. Runs of under 10 epochs show all."""
    skip = max(len(values) for values in series) // 10
    kept = _finite(v for values in series for v in values[skip:])
    if not kept:
        return
    lo, hi = min(kept), max(kept)
    if hi - lo < PLATEAU:  # the run reached its plateau early (xor at 100%): the climb is the story
        every = _finite(v for values in series for v in values)
        lo, skip = min(every), 0
    margin = max(0.05 * (hi - lo), (0.05 - (hi - lo)) / 2)  # at least 5 points of accuracy in view
    top = min(hi + margin, 1.01)
    bottom = max(min(lo - margin, top - 0.05), -0.01)  # at 100% the window moves down, not above 1
    ax.set_ylim(bottom, top)
    if top > 1:  # room above 100%, but no tick there
        ax.yaxis.set_major_locator(AtMostOneLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10]))
    lowest = min(_finite(v for values in series for v in values[:skip]), default=bottom)
    if lowest < bottom:
        ax.text(0.99, 0.02, f"zoomed past epochs 1-{skip} (lowest {lowest:.3f})", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7, color="0.35")
