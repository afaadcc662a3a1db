"""A traced pass as one self-contained HTML page that steps through it in the browser.

The page holds the pass as JSON: every tensor's values, every gradient mlp-manual computed, and
the operations between them, each with the contribution it sends back to each of its inputs
(dx, dW, ...). Its script (page/explain.js, inline) walks the forward pass op by op, then the
backward pass contribution by contribution (with ``scalar``, each ``+=`` of the chain rule on one
scalar), and for small networks recomputes the pass when an input or a weight is edited. It
shows each matrix as a small grid; one with a row per row of the batch shows the rows that
explain.text's preview_rows picks, the same as the text walk-through, and the page names them.
The graph is laid out by explain.graph, as for ``--graph``. Nothing is fetched: script and style are
inline, and a Content-Security-Policy forbids every connection and allows only that script and
that style, by their SHA-256. Every text from a config, a file or a path is data: escaped in the
heading, JSON in a data block, and set as text by the script, never as HTML.

N = rows, D = input features of a layer, H = its output features, K = model outputs.
"""

import base64
import hashlib
import html
import json
import re
from importlib import resources

import numpy as np

from ..errors import ConfigError
from ..layers.registry import row_of
from .graph import build_graph
from .text import backward_formula, forward_formula, preview_rows
from .trace import BlockEnd, Trace

MAX_EDITABLE = 200  # inputs and weights given a number field; a larger pass is shown, not edited
GRID = 8  # rows and columns of a matrix the page shows as a grid; a larger one shows its corner


def tensor(a) -> dict:
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [float(v) for v in a.ravel()]}


def pass_title(name: str, weights: str) -> str:
    """The page's heading: ``xor: one forward and backward pass (initial weights (seed 0))``."""
    return f"{name}: one forward and backward pass ({weights})"


def pass_data(result: Trace, title: str, scalar: bool = False, training: tuple | None = None) -> dict:
    """The JSON the page runs on: graph, values, gradients and ops of the traced pass.
    ``training``: (the training rows the batch's rows are, how many training rows there are),
    for the page to name the rows it shows."""
    graph = build_graph(result)
    values, grads, ops = {"X": tensor(result.X)}, {}, []
    previous, block_input, recomputed = "X", {}, True
    for step in result.steps:
        if isinstance(step, BlockEnd):
            b = step.block
            if step.end == "fork":
                block_input[b.name] = previous
                continue
            last = previous
            values[b.name], grads[b.name] = tensor(b.out), tensor(b.dout)
            ops.append({"out": b.name, "op": "add", "inputs": [last, block_input[b.name]],
                        "formula": forward_formula(b),
                        "backward": {last: "df(x) = dout", block_input[b.name]: "dx += dout (skip)"},
                        "contrib": {last: tensor(b.dout), block_input[b.name]: tensor(b.dout)}})
            previous = b.name
            continue
        recomputed &= isinstance(row_of(step.layer).page, str)
        ops.append(_layer_op(step, previous, values, grads))
        previous = step.name
    first = next((op for op in ops if "X" in op["contrib"]), None)
    if first is not None and "X" not in grads:
        grads["X"] = first["contrib"]["X"]
    loss = result.loss
    spec = loss.spec
    values["y"], values["loss"], grads["loss"] = tensor(loss.targets), tensor(loss.value), tensor(1.0)
    ops.append({"out": "loss", "op": spec.page, "inputs": [previous, "y"], "formula": spec.formula,
                "backward": {previous: spec.seed_formula}, "contrib": {previous: tensor(loss.dlogits)}})
    grads[previous] = tensor(loss.dlogits)
    outputs = {op["out"] for op in ops}
    editable = ["X"] + [k for op in ops for k in op["inputs"] if k not in outputs and k not in ("X", "y")]
    small = sum(len(values[k]["data"]) for k in editable) <= MAX_EDITABLE
    recomputable = recomputed and spec.plain  # the page recomputes the plain losses
    if scalar and not small:
        n = sum(len(values[k]["data"]) for k in editable)
        raise ConfigError(f"--html --scalar makes a step of every += and is for small passes: this one has {n:,} "
                          f"inputs and weights, the limit is {MAX_EDITABLE}; take fewer --rows")
    layers = [op["out"] for op in ops[:-1]]  # the outputs of the layers and blocks: all but the loss
    batch, rows = ["X", "y", *layers], preview_rows(result.X)  # batch: a row for each row of the batch
    if not (small and recomputable):
        for key, t in [*values.items(), *grads.items(), *(kv for op in ops for kv in op["contrib"].items())]:
            shrink(t, rows if key in batch else None)
    return {"title": title, "loss": "loss", "scalar": scalar,
            "nodes": [{"key": n.key, "label": n.label.split("\n")[0], "kind": n.kind, "x": n.x, "y": n.y}
                      for n in graph.nodes],
            "edges": [{"source": e.source, "target": e.target, "direction": e.direction, "bend": e.bend}
                      for e in graph.edges],
            "values": values, "grads": grads, "ops": ops,
            "editable": editable if small and recomputable else [],
            "rows": rows, "batch": batch, "grid": GRID, "names": {k: f"output of {k}" for k in layers},
            "training": None if training is None else {"rows": [int(r) for r in training[0]], "of": int(training[1])}}


def shrink(t: dict, rows: list[int] | None) -> None:
    """Keep of a tensor only what the page shows (a pass too large to edit): its ``corner``,
    the rows ``rows`` of a tensor of the batch (else its first GRID) and their first GRID values;
    a vector of the batch is a column. A scalar is kept whole."""
    shape, data = t["shape"], t["data"]
    if not shape or "corner" in t:  # a scalar; or a tensor two ops share, already shrunk
        return
    flat = np.asarray(data)
    if len(shape) == 1:  # a vector of the batch, one value per row, is a column; any other one a row
        m = flat.reshape((-1, 1) if rows is not None else (1, -1))  # (R, C)
    else:
        m = flat.reshape(shape[0], -1)  # (R, C)
    picked = rows if rows is not None else range(min(len(m), GRID))
    t["corner"], t["data"] = [[float(v) for v in m[r, :GRID]] for r in picked], []


def _layer_op(step, previous: str, values: dict, grads: dict) -> dict:
    """The op of one layer's step, whose input is the node ``previous``; its output and
    parameters go into ``values`` and ``grads``."""
    layer, key = step.layer, step.name
    values[key], grads[key] = tensor(step.out), tensor(step.dout)
    inputs = [previous] + [f"{key}.{k}" for k in layer.params]
    page = row_of(layer).page  # the op explain.js recomputes the layer with, when it has one
    op = {"out": key, "op": page if isinstance(page, str) else step.type, "inputs": inputs,
          "formula": forward_formula(step), "backward": {}, "contrib": {}}
    if "dx" in step.grads:  # none flows back into integer indices (an embedding's)
        op["backward"][previous] = backward_formula(step, "dx")
        op["contrib"][previous] = tensor(step.grads["dx"])
    if step.type == "leaky_relu":
        op["slope"] = layer.slope
    for k in layer.params:
        values[f"{key}.{k}"], grads[f"{key}.{k}"] = tensor(layer.params[k]), tensor(step.grads[k])
        op["backward"][f"{key}.{k}"] = backward_formula(step, k)
        op["contrib"][f"{key}.{k}"] = tensor(step.grads[k])
    return op


def chain_data() -> dict:
    """The classic worked example L = (a*b + c)^2 at a = 2, b = -3, c = 10, computed in numpy:
    d = a*b, e = d + c, L = e^2, so dL/de = 2e = 8 = dL/dd = dL/dc, dL/da = 8 b, dL/db = 8 a."""
    a, b, c = np.float64(2.0), np.float64(-3.0), np.float64(10.0)
    d = a * b  # fwd: d = a * b
    e = d + c  # fwd: e = d + c
    L = e * e  # fwd: L = e^2
    dL = np.float64(1.0)  # the seed, dL/dL
    de = 2 * e * dL  # fwd: L = e^2  =>  de = 2 e dL
    dd, dc = de, de  # fwd: e = d + c  =>  dd = de, dc = de
    da, db = b * dd, a * dd  # fwd: d = a * b  =>  da = b dd, db = a dd
    t = tensor
    return {"title": "L = (a*b + c)^2, the chain rule by hand", "loss": "L", "scalar": True,
            "nodes": [{"key": "a", "label": "a", "kind": "data", "x": -2.4, "y": 0.0},
                      {"key": "b", "label": "b", "kind": "data", "x": 0.0, "y": 0.0},
                      {"key": "d", "label": "d = a * b", "kind": "output", "x": -1.2, "y": -1.6},
                      {"key": "c", "label": "c", "kind": "data", "x": 1.4, "y": -1.6},
                      {"key": "e", "label": "e = d + c", "kind": "output", "x": 0.0, "y": -3.2},
                      {"key": "L", "label": "L = e^2", "kind": "loss", "x": 0.0, "y": -4.8}],
            "edges": [{"source": s, "target": t_, "direction": "forward", "bend": None}
                      for s, t_ in [("a", "d"), ("b", "d"), ("d", "e"), ("c", "e"), ("e", "L")]]
            + [{"source": t_, "target": s, "direction": "backward", "bend": None}
               for s, t_ in [("a", "d"), ("b", "d"), ("d", "e"), ("c", "e"), ("e", "L")]],
            "values": {"a": t(a), "b": t(b), "c": t(c), "d": t(d), "e": t(e), "L": t(L)},
            "grads": {"L": t(dL), "e": t(de), "d": t(dd), "c": t(dc), "a": t(da), "b": t(db)},
            "ops": [{"out": "d", "op": "mul", "inputs": ["a", "b"], "formula": "d = a * b",
                     "backward": {"a": "da = b * dd", "b": "db = a * dd"}, "contrib": {"a": t(da), "b": t(db)}},
                    {"out": "e", "op": "add", "inputs": ["d", "c"], "formula": "e = d + c",
                     "backward": {"d": "dd = 1 * de", "c": "dc = 1 * de"}, "contrib": {"d": t(dd), "c": t(dc)}},
                    {"out": "L", "op": "square", "inputs": ["e"], "formula": "L = e^2",
                     "backward": {"e": "de = 2 e * dL"}, "contrib": {"e": t(de)}}],
            "editable": ["a", "b", "c"]}


EXAMPLES = {"chain": chain_data}


def render(data: dict) -> str:
    """The whole page: template, style, script and the pass's JSON, inline. Every placeholder is
    filled in one pass, so a filled-in text (a config's name holding ``{{data}}``) is never read
    as a placeholder; the policy allows the one script and the one style by their SHA-256 alone."""
    folder = resources.files(__package__) / "page"
    page = (folder / "explain.html").read_text(encoding="utf-8")
    style = (folder / "explain.css").read_text(encoding="utf-8")
    script = (folder / "explain.js").read_text(encoding="utf-8")
    fills = {"title": escape(data["title"]), "style": style, "style_hash": sha256(style),
             "data": json_island(data), "script": script, "script_hash": sha256(script)}
    return PLACEHOLDER.sub(lambda m: fills[m.group(1)], page)


PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
# ensure_ascii writes every character past ASCII (U+2028 and U+2029 among them) as \uXXXX; these
# three are written so too, so no text in the JSON can close its <script> or open a comment there
JSON_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def json_island(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"), allow_nan=False, ensure_ascii=True).translate(JSON_ESCAPES)


def sha256(text: str) -> str:
    """The Content-Security-Policy source that allows exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def escape(text: str) -> str:
    return html.escape(text, quote=True)
