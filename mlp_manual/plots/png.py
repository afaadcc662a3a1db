"""Writing a figure as a PNG cropped to what is drawn, in one drawing pass.

Saving with ``bbox_inches="tight"`` draws a figure twice: once to measure where its artists end
(a legend beside the axes, a long label) and once more, at the cropped size, to paint it; every
tick label is laid out again in the second pass. Here the figure is painted once, on a canvas
with ROOM inches added on every side, and the pixels are cut out around everything painted
(every pixel that differs from the background), with PAD inches of margin, 0.1 as
``bbox_inches="tight"`` leaves. The picture is the same; its margins are measured on the ink
rather than on the artists' boxes, so the image can be a few pixels smaller.

A figure whose artists this file does not know how to move (a figure legend, figure-level
images, lines, patches or other artists, subfigures, a text placed in figure coordinates
inside an axes) is saved with ``bbox_inches="tight"`` instead, as is one whose drawing reaches
the edge of the room. (An artist placed wholly beyond the room would be left out; none of the
package's figures puts anything more than an inch outside its own area.)
"""

import matplotlib.image
import numpy as np

from ..files import atomic_path

DPI = 110
PAD = 0.1  # inches of margin around what is painted
ROOM = 3.0  # inches of canvas added on each side for what lies outside the figure's own area
TITLE_CHARACTERS = 100


def save(fig, path) -> None:
    """Write ``fig`` to ``path`` as a PNG at DPI, cropped to what is painted, atomically. A
    title longer than TITLE_CHARACTERS (a run's name may be long) is cut with "..." first, so
    that it cannot stretch the image. The figure keeps its size and dpi; a layout engine's
    placement of the axes stays, the engine goes."""
    cut_titles(fig)
    pixels = cropped_pixels(fig) if movable(fig) else None  # (rows, columns, 4) uint8
    with atomic_path(path) as tmp:
        if pixels is None:  # the settings the one-pass path uses, whatever a matplotlibrc says
            fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight", pad_inches=PAD, transparent=False,
                        facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())
        else:
            matplotlib.image.imsave(tmp, pixels, format="png", dpi=DPI)


def cut_titles(fig) -> None:
    """Cut every title of ``fig`` (axes titles, figure texts, axes texts with gid "title") to
    TITLE_CHARACTERS."""
    titles = [ax.title for ax in fig.axes] + list(fig.texts)
    titles += [t for ax in fig.axes for t in ax.texts if t.get_gid() == "title"]
    for title in titles:
        if len(title.get_text()) > TITLE_CHARACTERS:
            title.set_text(title.get_text()[:TITLE_CHARACTERS - 3] + "...")


def movable(fig) -> bool:
    """Whether ``grow`` keeps every artist of ``fig`` in place: the figure holds only axes and
    texts placed in figure coordinates, and no axes holds a text placed in figure coordinates."""
    return (not (fig.legends or fig.images or fig.lines or fig.patches or fig.artists or fig.subfigs)
            and all(t.get_transform() is fig.transFigure for t in fig.texts)
            and not any(t.get_transform() is fig.transFigure for ax in fig.axes for t in ax.texts))


def cropped_pixels(fig) -> np.ndarray | None:
    """Paint ``fig`` once at DPI with ROOM inches around it and return what is painted plus PAD,
    (rows, columns, 4) RGBA uint8; None when nothing is
    painted or the drawing reaches the canvas's edge. The figure is given back as it was, save
    that a layout engine's placement of the axes is kept and the engine removed."""
    engine = fig.get_layout_engine()
    if engine is not None:  # a constrained layout places the axes once, at the figure's own size
        engine.execute(fig)
        fig.set_layout_engine("none")
    dpi = fig.get_dpi()
    grow(fig, ROOM)
    try:
        fig.set_dpi(DPI)
        fig.canvas.draw()
        pixels = np.asarray(fig.canvas.buffer_rgba())  # (canvas rows, canvas columns, 4), top row first
        packed = pixels.view(np.uint32)[..., 0]  # (canvas rows, canvas columns): one number per pixel
        ink = packed != packed[0, 0]  # the corner is background: the room keeps every artist off it
        rows, columns = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        if rows.size == 0 or rows[0] == 0 or columns[0] == 0 or rows[-1] == ink.shape[0] - 1 \
                or columns[-1] == ink.shape[1] - 1:
            return None
        pad = round(PAD * DPI)
        crop = pixels[max(rows[0] - pad, 0):rows[-1] + 1 + pad, max(columns[0] - pad, 0):columns[-1] + 1 + pad]
        return np.ascontiguousarray(crop)  # a copy: the canvas's buffer goes with the room
    finally:
        grow(fig, -ROOM)
        fig.set_dpi(dpi)


def grow(fig, room: float) -> None:
    """Add ``room`` inches on every side of ``fig`` (a negative ``room`` takes it away) while every
    axes and figure text keeps its place relative to the others."""
    width, height = fig.get_size_inches()
    new_width, new_height = width + 2 * room, height + 2 * room

    def moved(x, y):  # figure fractions before -> after
        return (room + x * width) / new_width, (room + y * height) / new_height

    for ax in fig.axes:
        x0, y0, w, h = ax.get_position(original=True).bounds
        ax.set_position([*moved(x0, y0), w * width / new_width, h * height / new_height])
    for text in fig.texts:
        text.set_position(moved(*text.get_position()))
    fig.set_size_inches(new_width, new_height)
