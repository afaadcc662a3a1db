"""Writing a figure as a PNG cropped to what is drawn, in one drawing pass.

Saving with ``bbox_inches="tight"`` draws a figure twice: once to measure where its artists end
(a legend beside the axes, a long label) and once more, at the cropped size, to paint it; every
tick label is measured again in the second pass. Here the figure is painted once on a canvas
with room on every side, measured on that same drawing, and the painted pixels are cut out,
with the 0.1-inch margin ``bbox_inches="tight"`` leaves. The result is the same picture, up to
a sub-pixel shift of the whole, at the same pixel size.

A figure whose artists this file does not know how to move (a figure legend, figure-level
images, lines or patches, subfigures, text placed in other coordinates) is saved with
``bbox_inches="tight"`` instead, as are figures whose artists reach past the room given.
"""

import matplotlib.image
import numpy as np

from ..files import atomic_path

DPI = 110
PAD = 0.1  # inches of margin around the drawn artists, as with bbox_inches="tight"
ROOM = 3.0  # inches of canvas added on each side for what lies outside the figure's own area
TITLE_CHARACTERS = 100


def save(fig, path) -> None:
    """Write ``fig`` to ``path`` as a PNG at DPI, cropped to its artists, atomically. A title
    longer than TITLE_CHARACTERS (a run's name may be long) is cut with "..." first, so that
    it cannot stretch the image."""
    cut_titles(fig)
    rgba = cropped_pixels(fig) if movable(fig) else None  # (rows, columns, 4) uint8
    with atomic_path(path) as tmp:
        if rgba is None:
            fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight")
        else:
            matplotlib.image.imsave(tmp, rgba, format="png", dpi=DPI)


def cut_titles(fig) -> None:
    titles = [ax.title for ax in fig.axes] + list(fig.texts)
    titles += [t for ax in fig.axes for t in ax.texts if t.get_gid() == "title"]
    for title in titles:
        if len(title.get_text()) > TITLE_CHARACTERS:
            title.set_text(title.get_text()[:TITLE_CHARACTERS - 3] + "...")


def movable(fig) -> bool:
    """Whether every artist of ``fig`` is an axes or a text placed in figure coordinates, the
    things ``grow`` moves."""
    return (not (fig.legends or fig.images or fig.lines or fig.patches or fig.subfigs)
            and all(t.get_transform() is fig.transFigure for t in fig.texts))


def cropped_pixels(fig) -> np.ndarray | None:
    """Paint ``fig`` once at DPI with ROOM inches around it and return the pixels inside its
    artists' bounding box plus PAD, (rows, columns, 4) uint8; None when the artists reach past
    the room."""
    engine = fig.get_layout_engine()
    if engine is not None:  # a constrained layout places the axes once, at the figure's own size
        engine.execute(fig)
        fig.set_layout_engine("none")
    grow(fig, ROOM)
    fig.set_dpi(DPI)
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(PAD)  # inches from the canvas's lower left
    canvas_width, canvas_height = fig.get_size_inches()
    if box.x0 < 0 or box.y0 < 0 or box.x1 > canvas_width or box.y1 > canvas_height:
        grow(fig, -ROOM)
        return None
    pixels = np.asarray(fig.canvas.buffer_rgba())  # (canvas rows, canvas columns, 4), top row first
    top = pixels.shape[0] - round(box.y1 * DPI)
    left = round(box.x0 * DPI)
    # the size savefig gives the cropped figure: its width and height in pixels, truncated (the
    # 1e-6 keeps a height of 957 pixels from becoming 956.99999 and 956 through the room's offset)
    rows, columns = int(box.height * DPI + 1e-6), int(box.width * DPI + 1e-6)
    return np.ascontiguousarray(pixels[top:top + rows, left:left + columns])


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
