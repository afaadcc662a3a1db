"""The computation graph of a pass (mlp_manual.explain.graph) drawn with matplotlib alone.

The axes span the figure and one data unit is one inch, so the layout's positions and the
fixed-size text agree at any depth. Boxes are node labels; forward edges are solid arrows with
the tensor's shape, backward edges dashed red arrows with the gradient's formula and norm; a
residual block's skip connection is a pair of such arrows bent around the right of the column.
Every artist has a gid naming its node or edge, for whoever inspects the figure.
"""

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path

from .png import save
from .style import agg_figure

FILL = {"data": "0.9", "output": "#dbe9f6", "param": "#fdf1c7", "add": "#dcefd9", "loss": "#f8d7d3"}
BACKWARD = "#c0392b"
TWIN = 0.1  # inches between the forward and the backward edge of one pair of nodes
FONT = 7.5
MARGIN = (1.5, 5.2, 0.9, 0.6)  # inches left of, right of, above and below the nodes
SKIP_LABEL = 2.0  # inches right of a skip connection, for its labels
SKIP_ARM = 0.09  # inches between a box's middle and the arms of a skip connection


def draw_graph(graph, title: str):
    """A figure of ``graph`` (a Graph); returns it."""
    xs, ys = [n.x for n in graph.nodes], [n.y for n in graph.nodes]
    bends = [e.bend for e in graph.edges if e.bend is not None]
    left, right = min(xs) - MARGIN[0], max([max(xs) + MARGIN[1], *(b + SKIP_LABEL for b in bends)])
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
        draw = draw_edge if e.bend is None else draw_skip
        draw(ax, e, graph.node(e.source), graph.node(e.target), boxes)
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


def draw_skip(ax, e, source, target, boxes) -> None:
    """A skip connection: out of the right side of one box, down at x = ``e.bend``, into the
    right side of the other. Its arms leave the lower half of the block's input box and enter the
    upper half of the add box, so a box that ends one block and starts the next keeps them apart;
    the backward edge runs TWIN outside the forward one. Both labels are right of the vertical
    parts: the forward one level with the upper arm, the backward one halfway down."""
    backward = e.direction == "backward"
    inset = TWIN / 2 * (1 if backward else -1)  # backward: outside; forward: inside
    top, bottom = (target, source) if backward else (source, target)  # the block's input is above its add node
    x, y_top, y_bottom = e.bend + TWIN / 2 + inset, top.y - SKIP_ARM - inset, bottom.y + SKIP_ARM + inset
    points = [(right_side(ax, boxes[top.key]), y_top), (x, y_top), (x, y_bottom),
              (right_side(ax, boxes[bottom.key]), y_bottom)]
    if backward:
        points.reverse()
    style = {"color": BACKWARD, "linestyle": "--"} if backward else {"color": "k", "linestyle": "-"}
    ax.add_patch(FancyArrowPatch(path=Path(points), arrowstyle="-|>", mutation_scale=9, linewidth=1.0,
                                 zorder=4, gid=f"{e.direction}:{e.source}->{e.target}", **style))
    if backward:
        at = {"x": x + 0.08, "y": (top.y + bottom.y) / 2, "ha": "left", "va": "center"}
    else:  # right of both vertical parts, where no other block's skip runs
        at = {"x": e.bend + TWIN + 0.08, "y": y_top, "ha": "left", "va": "center"}
    ax.text(s=e.label, gid=f"label:{e.direction}:{e.source}->{e.target}", fontsize=FONT, color=style["color"],
            zorder=5, **at)


def right_side(ax, text) -> float:
    """The x, in data units (inches), of the right side of a node's box."""
    renderer = ax.figure.canvas.get_renderer()
    pad = text.get_bbox_patch().get_boxstyle().pad * text.get_fontsize() / 72  # round,pad=0.4: in font sizes
    right = ax.transData.inverted().transform(text.get_window_extent(renderer))[1, 0]
    return right + pad + 0.03


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
    t = 0.4  # fraction of the way from the side node to the main one: clear of a long parameter name
    x, y = side.x + t * (main.x - side.x), side.y + t * (main.y - side.y)
    offset = (TWIN / 2 + 0.04) * (-1 if backward else 1)
    return x, y + offset, {"ha": "center", "va": "top" if backward else "bottom", "rotation": angle,
                           "rotation_mode": "anchor"}


def plot_graph(graph, path, title: str) -> None:
    """Draw ``graph`` and write it to ``path`` as PNG."""
    save(draw_graph(graph, title), path)
