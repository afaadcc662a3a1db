"""A traced pass as a computation graph: what is drawn and where, without drawing it.

Nodes are the data, each layer's output, each parameter, the targets and the loss. The layer
outputs form one column from the data at the top to the loss at the bottom, so a deep network
grows downwards and its labels never share a row; parameters sit in a column to the left, level
with the output they feed. Forward edges carry the shape of the tensor they pass; backward edges
go the other way with the formula of the gradient they carry and its norm.

Positions are in inches, so the drawing can keep text at a fixed size.
"""

import textwrap
from dataclasses import dataclass

import numpy as np

from .formulas import LOSS_FORMULAS
from .trace import Trace

PARAM_X = -3.8  # the parameter column, left of the main one at x = 0
GAP = 1.15  # vertical distance between two outputs, plus PARAM_GAP for each side that has parameters
PARAM_GAP = 0.6
PARAM_SPREAD = 1.2  # vertical distance between the parameters of one layer
WRAP = 46  # characters per line of a formula


@dataclass(frozen=True)
class Node:
    key: str  # "X", "layers.<i>", "layers.<i>.<param>", "y", "loss"
    label: str
    kind: str  # "data", "output", "param", "loss"
    x: float
    y: float


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    direction: str  # "forward" (solid) or "backward" (dashed)
    label: str


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


def shape(a: np.ndarray) -> str:
    return str(tuple(a.shape))


def build_graph(trace: Trace) -> Graph:
    """Nodes and edges of the traced pass, laid out top to bottom."""
    nodes = [Node("X", f"X  {shape(trace.X)}\ndata", "data", 0.0, 0.0)]
    edges = []
    y, above, previous = 0.0, 0, "X"
    for step in trace.steps:
        params = list(step.layer.params)
        y -= GAP + PARAM_GAP * (bool(above) + bool(params))
        above = len(params)
        key = step.name
        formula = step.layer.forward_formula or "(no formula given)"
        nodes.append(Node(key, f"{key}  {step.type}\n{wrap(formula)}", "output", 0.0, y))
        edges += [Edge(previous, key, "forward", shape(step.x)),
                  Edge(key, previous, "backward", gradient_label(step.layer.backward_formulas.get(
                      "dx", "dx = (no formula given)"), step.grads["dx"]))]
        for j, k in enumerate(params):
            param_key = f"{key}.{k}"
            offset = (len(params) - 1) / 2 - j
            nodes.append(Node(param_key, param_key, "param", PARAM_X, y + offset * PARAM_SPREAD))
            formula = step.layer.backward_formulas.get(k, f"d{k} = (no formula given)")
            edges += [Edge(param_key, key, "forward", shape(step.layer.params[k])),
                      Edge(key, param_key, "backward", gradient_label(formula, step.grads[k]))]
        previous = key
    loss = trace.loss
    y -= GAP + PARAM_GAP * bool(above)
    math = LOSS_FORMULAS[loss.name]
    nodes += [Node("loss", f"loss  {loss.name}\n{wrap(math.loss)}\n= {loss.value:.4g}", "loss", 0.0, y),
              Node("y", f"y  {shape(loss.targets)}\ntargets", "data", PARAM_X, y)]
    edges += [Edge(previous, "loss", "forward", shape(loss.logits)),
              Edge("y", "loss", "forward", shape(loss.targets)),
              Edge("loss", previous, "backward", gradient_label(math.seed, loss.dlogits))]
    return Graph(nodes, edges)
