"""mlp-plot: overlay the curves of several runs, or redraw one run's plots."""

from pathlib import Path

import click

from ..errors import ConfigError
from ..results.compare import best_epoch, run_datasets, run_legend, run_name
from ..runs.metrics import read_metrics
from .common import output_file, say, user_errors, version_option, writable_folder


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@click.argument("run_dirs", nargs=-1, required=True, metavar="RUN_DIR [RUN_DIR ...]")
@click.option("-o", "--out", metavar="PNG",
              help="Output image, a .png (default FIRST_RUN_DIR/compare_METRIC.png; with one run, its own plots).")
@click.option("--metric", help="Column of metrics.csv to compare: train_loss, val_loss, train_acc, val_acc, "
                               "lr, ... (default val_loss, or train_loss when a run has no validation set)")
@user_errors
def main(run_dirs, out, metric):
    """Compare runs: one line per run of METRIC against the epoch, labelled by what differs between
    their configs (e.g. lr=0.1 vs lr=0.01), titled with their dataset. The image goes to the
    first run's folder as compare_METRIC.png unless -o names it. With a single RUN_DIR and neither
    -o nor --metric, redraw that run's loss.png and accuracy.png from its metrics.csv (and its
    summary.json's best epoch).

    Examples:

    \b
        mlp-plot runs/moons-a runs/moons-b                 # runs/moons-a/compare_val_loss.png
        mlp-plot runs/moons-* --metric val_acc -o moons_acc.png
        mlp-plot runs/moons-a
    """
    dirs = [Path(d) for d in run_dirs]
    if out is not None:
        out = output_file(out, "-o", ".png")
    seen = set()
    for d in dirs:
        if d.resolve() in seen:
            raise click.UsageError(f"{d} is given twice; give each run once")
        seen.add(d.resolve())
    metrics = [read_metrics(d) for d in dirs]
    if out is None:
        writable_folder(dirs[0], "-o FILE.png")
    if len(dirs) == 1 and out is None and metric is None:
        from ..plots.curves import plot_run_curves

        history = {k: v for k, v in metrics[0].items() if any(x is not None for x in v)}  # no empty val_ columns
        plot_run_curves(history, dirs[0], run_name(dirs[0]), *best_epoch(dirs[0]))
        say(f"redrew the plots of {dirs[0]} from its metrics.csv")
        return

    def empty(m, key):
        return key in m and all(v is None for v in m[key])

    if metric is None:  # val_loss, unless a run has no validation set
        metric = "train_loss" if any(empty(m, "val_loss") or "val_loss" not in m for m in metrics) else "val_loss"
        if metric == "train_loss":
            say("a run has no validation set: comparing train_loss")
    for d, m in zip(dirs, metrics):
        if metric not in m:
            raise ConfigError(f"{d}: metrics.csv has no {metric} column; columns: {', '.join(m)}")
        if empty(m, metric):
            raise ConfigError(f"{d}: the {metric} column of metrics.csv is empty (a run without a validation set)")
    labels, caption = run_legend(dirs)
    curves = [(label, m["epoch"], m[metric]) for label, m in zip(labels, metrics)]
    path = Path(out) if out else dirs[0] / f"compare_{metric}.png"
    from ..plots.curves import plot_compare

    plot_compare(curves, metric, path, f"{run_datasets(dirs)}: {metric} per epoch", caption)
    runs = "1 run" if len(dirs) == 1 else f"{len(dirs)} runs"
    say(f"wrote {path}: {runs}, " + "; ".join(label for label, _, _ in curves))


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
