"""mlp-predict: a trained model's predictions for the rows of a CSV or .npy file, as CSV."""

import sys
from contextlib import ExitStack
from pathlib import Path

import click

from ..files import atomic_text_file
from ..predict.model_file import read_model
from ..predict.predictor import NO_PREPROCESSING, Predictor, predict_file
from .common import (
    import_option,
    output_failed,
    output_file,
    say,
    user_errors,
    version_option,
)

PROGRESS_BYTES = 1 << 20  # inputs larger than this get a progress bar on a terminal


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@click.option("--model", "model_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A model.npz written by mlp-train.")
@click.option("--input", "input_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Rows to predict: a CSV (with or without a header) or a .npy array.")
@click.option("--output", metavar="CSV", type=click.Path(dir_okay=False),
              help="Write the predictions here (atomically) instead of to standard output.")
@click.option("--proba", is_flag=True, help="Classification: add one probability column p_<label> per class.")
@click.option("--delimiter", default=",", show_default=True, help="The input CSV's field separator.")
@click.option("--keep", "keep", multiple=True, metavar="COLUMN",
              help="Copy this input column (an ID) into the output, before the predictions: a header name, or "
                   "an index (0 is the first) for a CSV without a header. Repeatable.")
@user_errors
@import_option
def main(model_path, input_path, output, proba, delimiter, keep):
    """Predict with a trained model: apply the preprocessing stored in the model file, run the
    model in evaluation mode, and write a CSV with a header and one row per input row.

    A CSV input with a header has its columns matched to the training features by name (other
    columns, such as the target or an ID, are ignored, or copied first with --keep); a CSV without
    a header, or a .npy array (rows x features, or rows x height x width for an image model),
    must have the training width. Classification gives the class label in column `prediction`
    (and `p_<label>` columns with --proba); regression gives `prediction`, or
    `prediction_<target>` per target.

    Examples:

    \b
        mlp-predict --model runs/iris/model.npz --input new.csv
        mlp-predict --model runs/iris/model.npz --input new.csv --output pred.csv --proba
        mlp-predict --model runs/churn/model.npz --input customers.csv --keep customer_id
        mlp-predict --model runs/mnist/model.npz --input images.npy --output pred.csv
    """
    if len(delimiter) != 1:
        raise click.BadParameter(f"{delimiter!r} is not a single character", param_hint="'--delimiter'")
    if output:
        output = output_file(output, "--output")
    model, info = read_model(model_path)
    if info.preprocessing is None:
        say(f"note: {model_path}: {NO_PREPROCESSING}", err=True)
    predictor = Predictor(model, info)
    if proba and predictor.classes is None:
        raise click.UsageError(f"--proba needs a classification model; {model_path} predicts values")
    size = Path(input_path).stat().st_size
    with ExitStack() as stack:
        out = stack.enter_context(atomic_text_file(output)) if output else sys.stdout
        on_progress = None
        if show_progress(size):
            bar = stack.enter_context(click.progressbar(length=size, label="predicting", file=sys.stderr))
            on_progress = (lambda done: bar.update(done - bar.pos))
        try:
            rows = predict_file(predictor, input_path, out, proba, delimiter, on_progress=on_progress, keep=keep)
        except OSError as e:
            if output:  # the output file: atomic_text_file names it
                raise
            output_failed(e)  # standard output's reader has gone (| head), or a full disk
            return
    if output:
        say(f"wrote {rows} predictions to {output}", err=True)


def show_progress(size: int) -> bool:
    """A progress bar for an input of ``size`` bytes: for long inputs, on a terminal only."""
    return size > PROGRESS_BYTES and sys.stderr.isatty()


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
