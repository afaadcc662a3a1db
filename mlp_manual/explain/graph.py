"""A traced pass as a computation graph: what is drawn and where, without drawing it.

Nodes are the data, each layer's output, each parameter, the targets and the loss. The layer
outputs form one column from the data at the top to the loss at the bottom, so a deep network
grows downwards and its labels never share a row; parameters sit in a column to the left, level
with the output they feed. Forward edges carry the shape of the tensor they pass; backward edges
go the other way with the formula of the gradient they carry and its norm.

A residual block's inner layers are outputs of the column like any other, followed by an add
node, out = x + f(x). Its skip connection is a pair of edges from the block's input to the add
node that leave the column on the right (``bend``: the x of their vertical part; a block inside
another bends nearer the column, so the two never cross); the backward one carries dout and
says where it adds to the gradient that came back through f.

Positions are in inches, so the drawing can keep text at a fixed size.
"""

import textwrap
from dataclasses import dataclass

import numpy as np

from .text import backward_formula, forward_formula, shape
from .trace import BlockEnd, Trace

PARAM_X = -3.8  # the parameter column, left of the main one at x = 0
GAP = 1.15  # vertical distance between two outputs, plus PARAM_GAP for each side that has parameters
PARAM_GAP = 0.6
PARAM_SPREAD = 1.2  # vertical distance between the parameters of one layer
WRAP = 46  # characters per line of a formula
SKIP_X = 3.4  # the vertical part of the innermost skip connection, right of the backward labels
SKIP_STEP = 2.4  # how much further right the skip of each enclosing block runs: past the inner's labels
SKIP_ALTERNATE = 0.4  # every other block of one depth bends further right: one ends where the next starts


@dataclass(frozen=True)
class Node:
    key: str  # "X", "layers.<i>" (a block's: its add node), "layers.<i>.<param>", "y", "loss"
    label: str
    kind: str  # "data", "output", "param", "add", "loss"
    x: float
    y: float


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    direction: str  # "forward" (solid) or "backward" (dashed)
    label: str
    bend: float | None = None  # a skip connection: the x of its vertical part, right of the column


@dataclass
class Graph:
    nodes: list[Node]
    edges: list[Edge]

    def node(self, key: str) -> Node:
        return next(n for n in self.nodes if n.key == key)


def wrap(text: str) -> str:
    """One line per top-level ", " part of a formula (commas inside brackets do not split), each
    wrapped at WRAP characters."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c in "([") - (c in ")]")
        if depth == 0 and text.startswith(", ", i):
            parts.append(text[start:i + 1])
            start = i + 2
    parts.append(text[start:])
    return "\n".join(line for part in parts for line in textwrap.wrap(part, WRAP, break_on_hyphens=False))


def gradient_label(formula: str, grad: np.ndarray) -> str:
    """The formula, wrapped, and ``|dW| = 0.53``."""
    name = formula.partition(" = ")[0]
    return f"{wrap(formula)}\n|{name}| = {np.linalg.norm(grad):.3g}"


def build_graph(trace: Trace) -> Graph:
    """Nodes and edges of the traced pass, laid out top to bottom."""
    nodes = [Node("X", f"X  {shape(trace.X)}\ndata", "data", 0.0, 0.0)]
    edges = []
    y, above, previous = 0.0, 0, "X"
    depth = max((s.name.count(".") for s in trace.steps if isinstance(s, BlockEnd)), default=0)
    block_input = {}  # block name -> the node holding its x
    joined = {}  # depth -> blocks of that depth drawn so far
    for step in trace.steps:
        if isinstance(step, BlockEnd) and step.end == "fork":
            block_input[step.name] = previous
            continue
        params = [] if isinstance(step, BlockEnd) else list(step.layer.params)
        y -= GAP + PARAM_GAP * (bool(above) + bool(params))
        above = len(params)
        key = step.name
        if isinstance(step, BlockEnd):  # the join: out = x + f(x)
            nodes.append(Node(key, f"{key}  {step.block.type}\n{forward_formula(step.block)}", "add", 0.0, y))
            level = key.count(".")
            joined[level] = joined.get(level, 0) + 1
            bend = SKIP_X + SKIP_STEP * (depth - level) + SKIP_ALTERNATE * (joined[level] % 2 == 0)
            edges += join_edges(step.block, previous, block_input[key], bend)
            previous = key
            continue
        formula = forward_formula(step)
        nodes.append(Node(key, f"{key}  {step.type}\n{wrap(formula)}", "output", 0.0, y))
        edges.append(Edge(previous, key, "forward", shape(step.x)))
        if "dx" in step.grads:  # none flows back into integer indices
            edges.append(Edge(key, previous, "backward", gradient_label(backward_formula(step, "dx"), step.grads["dx"])))
        for j, k in enumerate(params):
            param_key = f"{key}.{k}"
            offset = (len(params) - 1) / 2 - j
            nodes.append(Node(param_key, param_key, "param", PARAM_X, y + offset * PARAM_SPREAD))
            formula = backward_formula(step, k)
            edges += [Edge(param_key, key, "forward", shape(step.layer.params[k])),
                      Edge(key, param_key, "backward", gradient_label(formula, step.grads[k]))]
        previous = key
    loss = trace.loss
    y -= GAP + PARAM_GAP * bool(above)
    spec = loss.spec
    nodes += [Node("loss", f"loss  {loss.name}\n{wrap(spec.formula)}\n= {loss.value:.4g}", "loss", 0.0, y),
              Node("y", f"y  {shape(loss.targets)}\ntargets", "data", PARAM_X, y)]
    edges += [Edge(previous, "loss", "forward", shape(loss.logits)),
              Edge("y", "loss", "forward", shape(loss.targets)),
              Edge("loss", previous, "backward", gradient_label(spec.seed_formula, loss.dlogits))]
    return Graph(nodes, edges)


def join_edges(block, last: str, source: str, bend: float) -> list[Edge]:
    """The edges into a block's add node: f(x) from its last inner layer, and x along the skip
    connection from ``source``; backward, dout goes back along both."""
    norm = f"|dout| = {np.linalg.norm(block.dout):.3g}"
    dx = backward_formula(block, "dx")
    skip = (f"dout along the skip\n{norm}\nat {source} it adds to df,\nthe gradient back through f:\n{dx}\n"
            f"|dx| = {np.linalg.norm(block.grads['dx']):.3g}")
    return [Edge(last, block.name, "forward", shape(block.fx)),
            Edge(block.name, last, "backward", f"dout into f(x)\n{norm}"),
            Edge(source, block.name, "forward", f"{shape(block.x)} skip", bend),
            Edge(block.name, source, "backward", skip, bend)]
