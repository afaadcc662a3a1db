"""Inline display in Jupyter, VS Code and Colab: a run folder, a model, a figure and the stepping
page, each as an object that shows itself (``_repr_html_``, ``_repr_png_``).

Nothing here imports IPython: a notebook displays any object with these methods as the last
value of a cell, and ``print()`` of one gives its text. Figures are embedded as base64 PNGs and
the stepping page as the ``srcdoc`` of a sandboxed iframe, so a saved notebook shows them
anywhere, with no file beside it and no network.

    from mlp_manual.notebook import show_run, show_model, show_explain
    show_run("runs/xor")              # the run's last line and its figures
    show_model("runs/xor/model.npz")  # the layer table
    show_explain("configs/xor.yaml")  # step through one forward and backward pass
"""

import base64
import html
import os
from pathlib import Path

from .errors import DataError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PAGE_HEIGHT = 760  # pixels of the stepping page's frame: the graph, the step's formula and its numbers


class Shown:
    """Something a notebook shows as HTML (``_repr_html_``) and ``print()`` as text."""

    def __init__(self, html_text: str, text: str):
        self.html, self.text = html_text, text

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


class Figure:
    """A PNG figure: a notebook shows the image (``_repr_png_``, or an <img> in HTML)."""

    def __init__(self, name: str, data: bytes):
        self.name, self.data = name, data

    def _repr_png_(self) -> bytes:
        return self.data

    def _repr_html_(self) -> str:
        return img_tag(self.name, self.data)

    def __repr__(self) -> str:
        return f"Figure({self.name}, {len(self.data):,} bytes)"


def img_tag(name: str, data: bytes) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="{html.escape(name)}" style="max-width:100%" src="data:image/png;base64,{encoded}">'


def show_figure(path: str | os.PathLike) -> Figure:
    """The PNG at ``path``, shown inline; DataError when it is missing or not a PNG."""
    from .files import open_regular

    path = Path(path)
    try:
        with open_regular(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise DataError(f"{path}: no such figure") from None
    except OSError as e:
        raise DataError(f"{path}: cannot read it ({e.strerror or e})") from None
    if not data.startswith(PNG_SIGNATURE):
        raise DataError(f"{path}: not a PNG image")
    return Figure(path.name, data)


def show_run(folder: str | os.PathLike) -> Shown:
    """A run folder: its name, its last line (as ``mlp-train`` ends) and every figure it holds,
    embedded. The folder is named as given, so a notebook shows no path of the machine it ran on
    beyond it. DataError when it is no run folder."""
    from .results.compare import load_summary, read_configs
    from .runs.finish import final_line
    from .runs.folder import RUN_FILES

    folder = Path(folder)
    if not (folder / "config.yaml").is_file():
        raise DataError(f"{folder}: not a run folder (no config.yaml)")
    summary = load_summary(folder / "summary.json")
    if summary is None:
        line = "unfinished: no summary.json yet (running, or stopped before its end)"
    else:
        # read as mlp-runs reads it: a run whose data has moved since is still shown
        monitor = read_configs([folder])[0].get("training.early_stopping.monitor", "val_loss")
        line = f"{summary.get('status', 'unfinished')}: {final_line(summary, folder, monitor)}"
    figures = [show_figure(folder / name) for name in RUN_FILES
               if name.endswith(".png") and (folder / name).is_file()]
    esc = html.escape
    shown = "".join(f"<figure style='display:inline-block;margin:4px'>{f._repr_html_()}"
                    f"<figcaption><code>{esc(f.name)}</code></figcaption></figure>" for f in figures)
    page = f"<div class='mlp-run'><p><b>{esc(folder.name)}</b>: {esc(line)}</p>{shown}</div>"
    text = "\n".join([f"{folder.name}: {line}"] + [f"  {f.name}" for f in figures])
    return Shown(page, text)


def show_model(model, input_width: int | None = None) -> Shown:
    """The layer table of ``model`` (a Model, or the path of a model file): each layer's type,
    its parameters' shapes, its output shape and its parameter count, then the total.
    ``input_width``: the inputs per row (a model file says it; a Model's first layer mostly
    does)."""
    from .layers import registry

    if isinstance(model, (str, os.PathLike)):
        from .predict.model_file import read_model

        model, info = read_model(model)
        input_width = input_width or info.n_features
    layers = list(model.layers)
    width = input_width or next((w for w in map(registry.input_width, layers) if w is not None), None)
    rows = []
    for i, layer in enumerate(layers):
        shapes = ", ".join(f"{k} {_shape(v.shape)}" for k, v in layer.params.items())
        width = registry.output_width(layer, width) if width is not None else None
        out = f"(N, {width})" if width is not None else "?"
        rows.append((str(i), registry.row_of(layer).name, repr(layer), shapes or "-", out,
                     sum(v.size for v in layer.params.values())))
    total = sum(r[5] for r in rows)
    return Shown(_model_html(rows, total), _model_text(rows, total))


def _shape(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


HEADINGS = ("", "type", "layer", "parameters", "output", "count")


def _model_html(rows: list[tuple], total: int) -> str:
    esc = html.escape
    head = "".join(f"<th>{h}</th>" for h in HEADINGS)
    body = "".join("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in r[:5]) + f"<td>{r[5]:,}</td></tr>"
                   for r in rows)
    return (f"<table class='mlp-model'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<p>total trainable parameters: <b>{total:,}</b></p>")


def _model_text(rows: list[tuple], total: int) -> str:
    table = [HEADINGS] + [(*r[:5], f"{r[5]:,}") for r in rows]
    widths = [max(len(str(r[j])) for r in table) for j in range(len(HEADINGS))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    return "\n".join(lines + [f"total trainable parameters: {total:,}"])


def show_explain(config, *, rows: int = 4, seed: int = 0, scalar: bool = False, height: int = PAGE_HEIGHT) -> Shown:
    """The page ``mlp-explain --config CONFIG --html`` writes (its options as the command's:
    ``rows`` training rows drawn by ``seed``; ``scalar``, a step per ``+=``), shown in a sandboxed
    iframe of ``height`` pixels. ``config``: a Config or the path of its YAML file. The page is
    self-contained and its Content-Security-Policy forbids every connection."""
    from .config import Config, load_config
    from .explain.html import pass_data, pass_title, render
    from .explain.scalar import require_small
    from .explain.trace import pick_rows, trace
    from .training.experiment import prepare

    cfg = config if isinstance(config, Config) else load_config(config)
    exp = prepare(cfg)
    if scalar:
        require_small(exp.model, exp.loss)
    X, y = exp.data.X_train, exp.data.y_train
    picked = pick_rows(len(X), rows, seed)
    result = trace(exp.model, exp.loss, X[picked], y[picked], check=False, seed=seed)
    title = pass_title(cfg.name, f"initial weights (seed {cfg.seed})")
    return page_frame(render(pass_data(result, title, scalar, (picked, len(X)))), title, height)


def show_example(name: str = "chain", height: int = PAGE_HEIGHT) -> Shown:
    """A built-in worked example's page (``mlp-explain --html --example chain``: L = (a*b + c)^2)."""
    from .explain.html import EXAMPLES, render

    if name not in EXAMPLES:
        raise ValueError(f"no example {name!r}; the examples are: {', '.join(sorted(EXAMPLES))}")
    data = EXAMPLES[name]()
    return page_frame(render(data), data["title"], height)


def page_frame(page: str, title: str, height: int = PAGE_HEIGHT) -> Shown:
    """``page`` as the ``srcdoc`` of an iframe whose sandbox allows its script and nothing more
    (no same origin, no forms, no pop-ups, no navigation of the notebook)."""
    frame = (f'<iframe srcdoc="{html.escape(page, quote=True)}" sandbox="allow-scripts" '
             f'title="{html.escape(title, quote=True)}" '
             f'style="box-sizing:border-box;width:100%;height:{int(height)}px;border:1px solid #ddd"></iframe>')
    return Shown(frame, f"{title} (a page that steps through the pass: shown in a notebook)")
