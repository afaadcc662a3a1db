"""mlp-eval: a saved model's results on a dataset split: loss, accuracy, a per-class table and the
confusion matrix for a classifier; MSE, RMSE, MAE and R² per target and predicted-against-true for
regression."""

from pathlib import Path

import click

from ..readable import readable
from ..runs.evaluate import TextSplit, evaluate_split, evaluate_text, load_saved_run
from ..training.evaluation import class_table, regression_table
from .common import import_option, say, user_errors, version_option


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@click.option("--model", "model_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A model.npz written by mlp-train.")
@click.option("--data", "dataset", metavar="NAME", help="Dataset (default: the one in the run's config).")
@click.option("--split", type=click.Choice(["test", "val", "train"]),
              help="The split to evaluate (default: test; for a text model, every split).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="The run's config (default: config.yaml beside the model).")
@click.option("--data-dir", metavar="DIR", help="Folder holding downloaded datasets.")
@click.option("--out", metavar="DIR", type=click.Path(file_okay=False),
              help="Folder for confusion.png / predictions.png (<name>_<split>.png for val and train; "
                   "default: the model's folder).")
@user_errors
@import_option
def main(model_path, dataset, split, config_path, data_dir, out):
    """Evaluate a trained model on a split of a dataset. A classifier: print the loss, the accuracy
    and a per-class table (support, precision, recall), and write confusion.png. A regression
    model: print the loss and MSE, RMSE, MAE and R² per target (and over all targets), and write
    predictions.png (predicted against true values). A text model (names, text): print, for every
    split, the loss in nats per character, the perplexity exp(loss) and the next-character
    accuracy; the boundary token that ends each word counts as a character.

    The data is loaded and preprocessed exactly as in training, from the run's config and seed,
    so the split is the one the run held out.

    \b
    Examples:
      mlp-eval --model runs/mnist/model.npz --data mnist
      mlp-eval --model runs/digits/model.npz --split val --out reports/
      mlp-eval --model runs/sine/model.npz --split val
      mlp-eval --model runs/names/model.npz
    """
    run = load_saved_run(model_path, config_path=config_path, dataset=dataset, data_dir=data_dir)
    if run.exp.data.text:
        say(text_table(run.label, evaluate_text(run, [split] if split else None)))
        return
    split = split or "test"
    ev = evaluate_split(run, split)
    r, n = ev.result, len(ev.result.y_true)
    folder = Path(out) if out else Path(model_path).parent
    folder.mkdir(parents=True, exist_ok=True)
    stem = "confusion" if ev.classification else "predictions"
    path = folder / (f"{stem}.png" if split == "test" else f"{stem}_{split}.png")  # keep the run's test plot
    if ev.classification:
        say(f"{ev.dataset} {split}: {n} samples, loss {readable(r.loss)}, "
            f"accuracy {readable(r.accuracy)} ({int(r.confusion.trace())}/{n})")
        say(class_table(r.confusion, ev.class_names))
        from ..plots.classes import plot_confusion

        plot_confusion(r.confusion, ev.class_names, path, f"{ev.dataset} {split}: accuracy {100 * r.accuracy:.2f}%")
    else:
        say(f"{ev.dataset} {split}: {n} samples, loss {readable(r.loss)}")
        say(regression_table(r, ev.target_names))
        from ..plots.regression import plot_predictions

        plot_predictions(r.y_true, r.y_pred, ev.target_names, path,
                         f"{ev.dataset} {split}: R² {r.metrics()['r2']['all']:.4f}")
    say(f"wrote {path}")


def text_table(label: str, results: list[TextSplit]) -> str:
    """One line per split: words, characters, loss in nats per character, perplexity, accuracy."""
    lines = [f"{label}: loss in nats per character (each word's end counts as one), perplexity = exp(loss)",
             f"{'split':<5}  {'words':>7}  {'characters':>10}  {'loss':>7}  {'perplexity':>10}  {'accuracy':>8}"]
    lines += [f"{r.split:<5}  {r.words:>7,}  {r.characters:>10,}  {r.loss:>7.4f}  {r.perplexity:>10.3f}  "
              f"{r.accuracy:>8.4f}" for r in results]
    return "\n".join(lines)


if __name__ == "__main__":
    from .process import run_as_program

    run_as_program(main)
