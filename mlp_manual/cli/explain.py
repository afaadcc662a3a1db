"""mlp-explain: one forward and backward pass of a config's model, printed step by step."""

from pathlib import Path

import click

from ..config import load_config
from ..errors import ModelFileError
from ..explain.graph import build_graph
from ..explain.html import EXAMPLES, pass_data, pass_title, render
from ..explain.scalar import format_scalar_pass, require_small
from ..explain.text import format_trace
from ..explain.trace import MAX_ELEMENTS, pick_rows, trace
from ..files import write_text
from ..predict.model_file import load_model
from ..training.experiment import prepare
from .common import (
    config_argument,
    config_option,
    import_option,
    max_elements_option,
    output_file,
    say,
    set_option,
    user_errors,
    version_option,
    warnings_on_stderr,
)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@config_argument
@config_option("The YAML config whose model and data are used (default with --model: config.yaml beside it).")
@set_option
@click.option("--model", "model_path", type=click.Path(exists=True, dir_okay=False),
              help="Trained weights (a model.npz of the config's model) instead of the initial ones.")
@click.option("--rows", type=click.IntRange(min=1), default=4, show_default=True,
              help="Training rows in the batch.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Which rows are drawn, and which entries of a large tensor are checked.")
@max_elements_option(MAX_ELEMENTS)
@click.option("--graph", "graph_path", metavar="PNG",
              help="Also draw the pass as a computation graph into this .png file.")
@click.option("--scalar", is_flag=True,
              help="Redo the pass one scalar at a time, printing every chain-rule step (tiny models only); "
                   "with --html, the page steps through every += of the chain rule.")
@click.option("--html", "html_path", metavar="HTML",
              help="Write the pass as a self-contained page that steps through it in a browser, "
                   "instead of printing it.")
@click.option("--example", type=click.Choice(sorted(EXAMPLES)),
              help="With --html: write a built-in worked example instead (chain: L = (a*b + c)^2).")
@user_errors
@warnings_on_stderr
@import_option
def main(config_path, overrides, model_path, rows, seed, max_elements, graph_path, scalar, html_path, example):
    """Show backpropagation happen on a config's model and a few rows of its data.

    Prints the forward pass layer by layer (formula, shapes, values), the loss and the gradient
    that seeds the backward pass, then the backward pass in reverse order: for every gradient the
    formula from the layer's code, the shapes, its norm and values, and a float64 finite-difference
    check of that one step with the upstream gradient the pass produced. The last line counts the
    gradients that agree. The model runs as a float64 copy in training mode; dropout draws one
    mask, which the checks reuse.

    With --html, the pass is written as one HTML file that works offline, and only the file's
    name is printed: Step and Back (or the arrow keys) walk the forward pass, then the backward
    pass with each formula's numbers plugged in; the inputs and weights of a small network can
    be edited, and the URL keeps the step and the edits.

    Examples:

    \b
        mlp-explain --config configs/xor.yaml
        mlp-explain --config configs/xor.yaml --rows 2 --scalar
        mlp-explain --model runs/moons/model.npz --graph graph.png
        mlp-explain --config configs/xor.yaml --html explain.html
        mlp-explain --html chain.html --example chain
    """
    if example:
        return write_example(example, html_path, bool(config_path or model_path or overrides))
    config_path = run_config(config_path, model_path)
    graph_path = graph_path and output_file(graph_path, "--graph", ".png")
    html_path = html_path and output_file(html_path, "--html", ".html")
    cfg = load_config(config_path, list(overrides))
    exp = prepare(cfg)
    model = exp.model
    if model_path:
        load_weights(model, model_path, config_path)
    X, y = exp.data.X_train, exp.data.y_train
    picked = pick_rows(len(X), rows, seed)
    if scalar:
        require_small(model, exp.loss)
    result = trace(model, exp.loss, X[picked], y[picked], check=not html_path, seed=seed,
                   max_elements=max_elements or None)
    weights = f"trained weights from {model_path}" if model_path else f"initial weights (seed {cfg.seed})"
    if html_path:  # the page is the walk-through; one too large for it is refused before any output
        page = pass_data(result, pass_title(cfg.name, weights), scalar, (picked, len(X)))
    else:
        header = (f"{cfg.name}: training rows {format_rows(picked)} of {len(X)} ({cfg.data.name}), {weights}, "
                  f"loss {cfg.loss.name}")
        say(format_trace(result, header, exp.data.vocabulary))
        if scalar:
            say("")
            say(format_scalar_pass(result))
    if graph_path:
        from ..plots.graph import plot_graph

        plot_graph(build_graph(result), graph_path, f"{cfg.name}: forward (solid) and backward (dashed)")
        say(f"wrote {graph_path}")
    if html_path:
        write_page(page, html_path)


def write_example(example: str, html_path, with_a_run: bool) -> None:
    """The built-in worked example ``example``, as a page written to ``html_path``; a usage error
    ``with_a_run`` (--config, --model or --set given)."""
    if not html_path:
        raise click.UsageError("--example writes a page: give --html too")
    if with_a_run:
        raise click.UsageError("--example is a built-in page: it takes no --config, --model or --set")
    write_page(EXAMPLES[example](), output_file(html_path, "--html", ".html"))


def run_config(config_path, model_path):
    """The config the pass is made with: ``config_path``, or the config.yaml beside
    ``model_path`` (a given config that is missing is named when it is read)."""
    if config_path:
        return config_path
    if not model_path:
        raise click.UsageError("give --config, or --model with a config.yaml beside it")
    config_path = Path(model_path).with_name("config.yaml")
    if not config_path.is_file():
        raise click.UsageError(f"{config_path}: no run config beside the model; pass --config")
    return config_path


def write_page(data: dict, path: Path) -> None:
    write_text(path, render(data))
    say(f"wrote {path}")


def load_weights(model, path, config_path) -> None:
    """Put the arrays of the model file at ``path`` into ``model``, which the config built."""
    trained = load_model(path)
    want = [(s["type"], {k: v.shape for k, v in layer.params.items()})
            for s, layer in zip(model.spec(), model.layers)]
    got = [(s["type"], {k: v.shape for k, v in layer.params.items()})
           for s, layer in zip(trained.spec(), trained.layers)]
    if want != got:
        raise ModelFileError(f"{path}: holds a different model than {config_path} builds "
                             f"({describe(got)} vs {describe(want)})")
    model.load_state(trained.state())


def describe(layers) -> str:
    return ", ".join(t + "".join(f" {k}{tuple(s)}" for k, s in shapes.items()) for t, shapes in layers)


def format_rows(picked) -> str:
    shown = ", ".join(str(i) for i in picked[:8])
    return shown + (", ..." if len(picked) > 8 else "")


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
