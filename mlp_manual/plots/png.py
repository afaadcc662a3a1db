"""Writing a figure as a PNG, atomically, cropped to what is drawn with a margin of PAD inches.

The settings are the package's own, whatever a matplotlibrc says: DPI, an opaque background in
the figure's colours, ``bbox_inches="tight"``. (Painting once on a larger canvas and cutting the
ink out, instead of the tight box's two drawing passes, saved about 55 ms of a 0.75 s XOR run:
under a tenth of it, so figures are saved the plain way; benchmarks/README.md, "Tricks kept and
removed".)
"""

from ..files import atomic_path

DPI = 110
PAD = 0.1  # inches of margin around what is drawn
TITLE_CHARACTERS = 100


def save(fig, path) -> None:
    """Write ``fig`` to ``path`` as a PNG at DPI, cropped to what is drawn, atomically. A title
    longer than TITLE_CHARACTERS (a run's name may be long) is cut with "..." first, so that it
    cannot stretch the image."""
    cut_titles(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight", pad_inches=PAD, transparent=False,
                    facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())


def cut_titles(fig) -> None:
    """Cut every title of ``fig`` (axes titles, figure texts, axes texts with gid "title") to
    TITLE_CHARACTERS."""
    titles = [ax.title for ax in fig.axes] + list(fig.texts)
    titles += [t for ax in fig.axes for t in ax.texts if t.get_gid() == "title"]
    for title in titles:
        if len(title.get_text()) > TITLE_CHARACTERS:
            title.set_text(title.get_text()[:TITLE_CHARACTERS - 3] + "...")
