"""The computation graph of a pass (mlp_manual.explain.graph) drawn with matplotlib alone.

The axes span the figure and one data unit is one inch, so the layout's positions and the
fixed-size text agree at any depth. Boxes are node labels; forward edges are solid arrows with
the tensor's shape, backward edges dashed red arrows with the gradient's formula and norm.
Every artist has a gid naming its node or edge, for whoever inspects the figure.
"""

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch

from .curves import save
from .style import agg_figure

FILL = {"data": "0.9", "output": "#dbe9f6", "param": "#fdf1c7", "loss": "#f8d7d3"}
BACKWARD = "#c0392b"
TWIN = 0.1  # inches between the forward and the backward edge of one pair of nodes
FONT = 7.5
MARGIN = (1.5, 5.2, 0.9, 0.6)  # inches left of, right of, above and below the nodes


def draw_graph(graph, title: str):
    """A figure of ``graph`` (a Graph); returns it."""
    xs, ys = [n.x for n in graph.nodes], [n.y for n in graph.nodes]
    left, right = min(xs) - MARGIN[0], max(xs) + MARGIN[1]
    top, bottom = max(ys) + MARGIN[2], min(ys) - MARGIN[3]
    fig = agg_figure((right - left, top - bottom))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)
    ax.axis("off")
    boxes = {}
    for n in graph.nodes:
        boxes[n.key] = ax.text(n.x, n.y, n.label, ha="center", va="center", fontsize=FONT + 0.5, zorder=3,
                               gid=f"node:{n.key}", bbox={"boxstyle": "round,pad=0.4", "fc": FILL[n.kind], "ec": "0.35"})
    for e in graph.edges:
        draw_edge(ax, e, graph.node(e.source), graph.node(e.target), boxes)
    ax.text(left + 0.2, top - 0.25, title, ha="left", va="top", fontsize=FONT + 2.5, gid="title")
    ax.legend(handles=[Line2D([], [], color="k", label="forward: the shape passed on"),
                       Line2D([], [], color=BACKWARD, linestyle="--", label="backward: gradient formula, |norm|")],
              loc="upper right", fontsize=FONT + 0.5, frameon=False)
    return fig


def draw_edge(ax, e, source, target, boxes) -> None:
    """One arrow between two boxes and its label; a forward and a backward edge between the same
    nodes run side by side, TWIN apart, with their labels on opposite sides."""
    start, end = np.array([source.x, source.y]), np.array([target.x, target.y])
    backward = e.direction == "backward"
    sign = 1 if backward else -1
    # main column: forward on the left, backward on the right; side edges: forward above, backward below
    shift = np.array([sign * TWIN / 2, 0.0]) if source.x == target.x else np.array([0.0, -sign * TWIN / 2])
    style = {"color": BACKWARD, "linestyle": "--"} if backward else {"color": "k", "linestyle": "-"}
    ax.add_patch(FancyArrowPatch(tuple(start + shift), tuple(end + shift), arrowstyle="-|>", mutation_scale=9,
                                 linewidth=1.0, zorder=4, gid=f"{e.direction}:{e.source}->{e.target}",
                                 patchA=boxes[e.source].get_bbox_patch(), patchB=boxes[e.target].get_bbox_patch(),
                                 shrinkA=2, shrinkB=2, **style))
    x, y, placement = label_place(source, target, backward)
    ax.text(x, y, e.label, gid=f"label:{e.direction}:{e.source}->{e.target}", fontsize=FONT, color=style["color"],
            zorder=5, **placement)


def label_place(source, target, backward: bool):
    """Where an edge's label goes and how it is aligned. Main column: midway between the two
    outputs, forward labels left of the pair and backward labels right. Edges to the side column:
    along the line near the side node, turned with it, forward labels above the pair and backward
    labels below, so each label hugs its own arrow."""
    if source.x == target.x:
        side = 1 if backward else -1
        return side * (TWIN + 0.08), (source.y + target.y) / 2, {"ha": "left" if backward else "right",
                                                                "va": "center"}
    side, main = (source, target) if source.x < target.x else (target, source)
    angle = np.degrees(np.arctan2(main.y - side.y, main.x - side.x))
    t = 0.35  # fraction of the way from the side node to the main one
    x, y = side.x + t * (main.x - side.x), side.y + t * (main.y - side.y)
    offset = (TWIN / 2 + 0.04) * (-1 if backward else 1)
    return x, y + offset, {"ha": "center", "va": "top" if backward else "bottom", "rotation": angle,
                           "rotation_mode": "anchor"}


def plot_graph(graph, path, title: str) -> None:
    """Draw ``graph`` and write it to ``path`` as PNG."""
    save(draw_graph(graph, title), path)
