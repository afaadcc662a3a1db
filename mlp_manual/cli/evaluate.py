"""mlp-eval: a saved model's loss, accuracy and per-class table on a dataset split, and its confusion matrix."""

from pathlib import Path

import click

from ..config import load_config
from ..errors import ConfigError, DataError
from ..runs.model_file import load_model
from ..training.evaluation import class_table, evaluate_classes
from ..training.experiment import prepare
from .common import user_errors


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--model", "model_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="A model.npz written by mlp-train.")
@click.option("--data", "dataset", metavar="NAME", help="Dataset (default: the one in the run's config).")
@click.option("--split", type=click.Choice(["test", "val", "train"]), default="test", show_default=True)
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="The run's config (default: config.yaml beside the model).")
@click.option("--data-dir", metavar="DIR", help="Folder holding downloaded datasets.")
@click.option("--out", metavar="DIR", type=click.Path(file_okay=False),
              help="Folder for confusion.png / confusion_<split>.png (default: the model's folder).")
@user_errors
def main(model_path, dataset, split, config_path, data_dir, out):
    """Evaluate a trained model on a split of a dataset: print the loss, the accuracy and a per-class
    table (support, precision, recall), and write confusion.png.

    The data is loaded and preprocessed exactly as in training, from the run's config and seed,
    so the split is the one the run held out.

    \b
    Examples:
      mlp-eval --model runs/mnist/model.npz --data mnist
      mlp-eval --model runs/digits/model.npz --split val --out reports/
    """
    from ..plots.classes import plot_confusion

    model_path = Path(model_path)
    config_path = Path(config_path) if config_path else model_path.with_name("config.yaml")
    if not config_path.is_file():
        raise ConfigError(f"{config_path}: no run config beside the model; pass --config")
    overrides = [f"data.name={dataset}"] if dataset else []
    if data_dir:
        overrides.append(f"data.data_dir={data_dir}")
    cfg = load_config(config_path, overrides)
    exp = prepare(cfg)
    if not exp.loss.classification:
        raise DataError(f"mlp-eval reports classification results; {config_path} trains with {cfg.loss}")
    model = load_model(model_path)
    d = exp.data
    X, y = getattr(d, f"X_{split}"), getattr(d, f"y_{split}")
    if X is None:
        raise DataError(f"{cfg.data.name} has no {split} split with this config")
    if model.input_width() not in (None, d.n_features):
        raise DataError(f"{model_path} takes {model.input_width()} features, {cfg.data.name} has {d.n_features}")
    outputs, needed = model.output_width(d.n_features), exp.loss.output_width(d.n_classes, d.target_width)
    if outputs != needed:
        raise DataError(f"{model_path} has {outputs} outputs, {cfg.data.name} with {cfg.loss} needs {needed}")
    result = evaluate_classes(model.astype(X.dtype), exp.loss, X, y, d.n_classes)
    names = d.class_names_or_numbers
    click.echo(f"{cfg.data.name} {split}: {len(X)} samples, loss {result.loss:.4f}, "
               f"accuracy {result.accuracy:.4f} ({int(result.confusion.trace())}/{len(X)})")
    click.echo(class_table(result.confusion, names))
    folder = Path(out) if out else model_path.parent
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ("confusion.png" if split == "test" else f"confusion_{split}.png")  # keep the run's test plot
    plot_confusion(result.confusion, names, path, f"{cfg.data.name} {split}: accuracy {100 * result.accuracy:.2f}%")
    click.echo(f"wrote {path}")


if __name__ == "__main__":
    main()
