"""mlp-eval: a saved model's results on a dataset split: loss, accuracy, a per-class table and the
confusion matrix for a classifier; MSE, RMSE, MAE and R² per target and predicted-against-true for
regression."""

from pathlib import Path

import click

from ..datasets.load import LOADERS
from ..readable import readable
from ..results.evaluate import (
    TextSplit,
    evaluate_file,
    evaluate_saved_model,
    evaluate_text,
    is_text_model,
    load_run_data,
)
from ..training.evaluation import class_table, regression_table
from .common import (
    config_option,
    import_option,
    say,
    user_errors,
    version_option,
    warnings_on_stderr,
    writable_folder,
)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@click.option("--model", "model_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A model.npz written by mlp-train.")
@click.option("--data", "dataset", metavar="NAME|FILE",
              help="Another dataset by name (default: the run's own), or a labelled CSV file to evaluate as a "
                   "whole, read with the run's column settings.")
@click.option("--split", type=click.Choice(["test", "val", "train"]),
              help="The split to evaluate (default: test; for a text model, every split).")
@config_option("The run's config (default: config.yaml beside the model).")
@click.option("--data-dir", metavar="DIR", help="Folder holding downloaded datasets.")
@click.option("--out", metavar="DIR", type=click.Path(file_okay=False),
              help="Folder for confusion.png / predictions.png (<name>_<split>.png for val and train; "
                   "default: the model's folder).")
@user_errors
@warnings_on_stderr
@import_option
def main(model_path, dataset, split, config_path, data_dir, out):
    """Evaluate a trained model on a split of a dataset. A classifier: print the loss, the accuracy
    and a per-class table (support, precision, recall), and write confusion.png. A regression
    model: print the loss and MSE, RMSE, MAE and R² per target (and over all targets), and write
    predictions.png (predicted against true values). A text model (data names or text): print, for
    every split, the loss in nats per character, the perplexity exp(loss) and the next-character
    accuracy; the boundary token that ends each word counts as a character.

    The split is the one the run held out: it is rebuilt from the run's config and seed, after
    checking that the data files are the ones the run read (a changed file is refused), and the
    inputs are preprocessed with the model file's statistics. --data FILE evaluates every row of
    another labelled file instead.

    Examples:

    \b
        mlp-eval --model runs/mnist/model.npz
        mlp-eval --model runs/digits/model.npz --split val --out reports/
        mlp-eval --model runs/iris/model.npz --data new_flowers.csv
        mlp-eval --model runs/names/model.npz
    """
    whole_file = dataset is not None and dataset not in LOADERS and (Path(dataset).is_file() or _looks_like_a_file(dataset))
    if is_text_model(model_path, config_path):
        if whole_file:
            raise click.UsageError("--data FILE evaluates a file of rows; a text model is evaluated on its run's splits")
        run = load_run_data(model_path, config_path=config_path, dataset=dataset, data_dir=data_dir,
                            split=split or "test")
        say(text_table(run.label, evaluate_text(run, [split] if split else None)))
        return
    folder = writable_folder(Path(out) if out else Path(model_path).parent, "--out DIR")
    split = split or "test"
    if whole_file:
        if click.get_current_context().get_parameter_source("split").name != "DEFAULT":
            raise click.UsageError("--split does not apply to --data FILE: the file is evaluated as a whole")
        ev = evaluate_file(model_path, dataset, config_path=config_path)
        suffix = f"_{Path(dataset).stem}"
    else:
        ev = evaluate_saved_model(model_path, split, config_path=config_path, dataset=dataset, data_dir=data_dir)
        suffix = "" if split == "test" else f"_{split}"  # keep the run's test plot
    r, n = ev.result, len(ev.result.y_true)
    where = f"{ev.dataset} ({ev.split})" if whole_file else f"{ev.dataset} {ev.split}"
    stem = "confusion" if ev.classification else "predictions"
    path = folder / f"{stem}{suffix}.png"
    if ev.classification:
        say(f"{where}: {n} samples, loss {readable(r.loss)}, "
            f"accuracy {readable(r.accuracy)} ({int(r.confusion.trace())}/{n})")
        say(class_table(r.confusion, ev.class_names))
        from ..plots.classes import plot_confusion

        plot_confusion(r.confusion, ev.class_names, path, f"{where}: accuracy {100 * r.accuracy:.2f}%")
    else:
        say(f"{where}: {n} samples, loss {readable(r.loss)}")
        say(regression_table(r, ev.target_names))
        from ..plots.regression import plot_predictions

        plot_predictions(r.y_true, r.y_pred, ev.target_names, path,
                         f"{where}: R² {r.metrics()['r2']['all']:.4f}")
    say(f"wrote {path}")


def text_table(label: str, results: list[TextSplit]) -> str:
    """One line per split: words, characters, loss in nats per character, perplexity, accuracy."""
    lines = [f"{label}: loss in nats per character (each word's end counts as one), perplexity = exp(loss)",
             f"{'split':<5}  {'words':>7}  {'characters':>10}  {'loss':>7}  {'perplexity':>10}  {'accuracy':>8}"]
    lines += [f"{r.split:<5}  {r.words:>7,}  {r.characters:>10,}  {r.loss:>7.4f}  {r.perplexity:>10.3f}  "
              f"{r.accuracy:>8.4f}" for r in results]
    return "\n".join(lines)


def _looks_like_a_file(value: str) -> bool:
    """A --data value meant as a file (a path or a file name), though no file is there."""
    return "/" in value or "\\" in value or Path(value).suffix != ""


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
