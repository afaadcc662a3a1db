"""mlp-sample: new items (names, words) from a trained text model, one per line."""

import math

import click

from ..predict.model_file import read_model
from ..predict.sample import check_text_model, generate
from .common import import_option, output_failed, say, user_errors, version_option


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@click.option("--model", "model_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A model.npz written by mlp-train on text data (data.name names or text).")
@click.option("-n", "count", type=click.IntRange(min=1), default=20, show_default=True, help="Items to generate.")
@click.option("--temperature", type=float, default=1.0, show_default=True,
              help="Divides the logits before the softmax: below 1 the likelier characters win more often, "
                   "above 1 the draws come closer to uniform.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="One seed gives the same items; item i is the same whatever -n.")
@click.option("--prefix", default="", help="Characters every item starts with.")
@click.option("--max-length", type=click.IntRange(min=1), default=100, show_default=True,
              help="Cut an item that has not ended after this many characters (the prefix included).")
@user_errors
@import_option
def main(model_path, count, temperature, seed, prefix, max_length):
    """Generate items with a trained text model, character by character: from a context of
    boundary tokens (and the prefix), draw the next character from softmax(logits /
    temperature), shift it into the context, and stop when the model draws the boundary token.
    Prints one item per line.

    Examples:

    \b
        mlp-sample --model runs/names/model.npz
        mlp-sample --model runs/names/model.npz -n 5 --temperature 0.5 --seed 3
        mlp-sample --model runs/names/model.npz --prefix ka
    """
    if not (math.isfinite(temperature) and temperature > 0):
        raise click.BadParameter(f"{temperature} is not a number > 0 (a small value such as 0.1 picks the "
                                 "likeliest character nearly every time)", param_hint="'--temperature'")
    model, info = read_model(model_path)
    vocabulary = check_text_model(info, model_path)
    unknown = vocabulary.unknown(prefix)
    if unknown is not None:
        raise click.BadParameter(f"{prefix!r}: {unknown!r} is not a character the model knows; its vocabulary is "
                                 f"{vocabulary.describe()}", param_hint="'--prefix'")
    if len(prefix) > max_length:
        raise click.BadParameter(f"the prefix has {len(prefix)} characters, more than --max-length {max_length}",
                                 param_hint="'--max-length'")
    cut = 0
    try:
        for item in generate(model, vocabulary, count, temperature=temperature, seed=seed, prefix=prefix,
                             max_length=max_length):
            cut += not item.ended
            click.echo(item.text)
    except OSError as e:  # standard output's reader has gone (| head): stop drawing
        output_failed(e)
        return
    if cut:
        say(f"note: {cut} of {count} items reached --max-length {max_length} without ending and were cut there",
            err=True)


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
