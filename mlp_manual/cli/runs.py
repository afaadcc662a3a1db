"""mlp-runs: a table of run folders, the parameters that differ between them and their metrics."""

import os
from pathlib import Path

import click

from ..errors import DataError
from ..readable import readable
from ..results.table import (
    columns_of,
    filter_rows,
    find_runs,
    group_rows,
    run_rows,
    sort_rows,
)
from .common import aligned, say, user_errors, version_option, write_csv


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
@click.argument("folders", nargs=-1, metavar="[FOLDER ...]")
@click.option("--sort", "sort_key", metavar="COLUMN",
              help="Sort by this column, best first (default val_loss, or train_loss without validation).")
@click.option("--reverse", is_flag=True, help="Sort the other way.")
@click.option("--where", "conditions", multiple=True, metavar="COLUMN=VALUE",
              help="Only the runs whose COLUMN shows VALUE, e.g. --where status=completed (repeatable).")
@click.option("--group-by", "group_by", metavar="COLUMN[,COLUMN]",
              help="One row per value of these columns, with the mean and spread of each metric over its runs "
                   "(e.g. over seeds).")
@click.option("--csv", "as_csv", is_flag=True, help="Write the table as CSV to standard output.")
@user_errors
def main(folders, sort_key, reverse, conditions, group_by, as_csv):
    """A table of every run folder at or under FOLDER (default runs/): its name, status, the
    config values that differ between the runs, its best-epoch and test metrics, epochs and
    seconds. Sweep trials are run folders too. A run whose summary.json cannot be read, or holds
    a value of the wrong type, is a row of status damaged, with a line on standard error that
    says why; the table exits 1 only when every run is damaged.

    Examples:

    \b
        mlp-runs
        mlp-runs runs/ sweeps/spirals-lr --sort val_acc
        mlp-runs runs/ --where status=completed --csv > runs.csv
        mlp-runs runs/ --group-by lr          # mean and spread over the seeds of each lr
    """
    runs = find_runs([Path(f) for f in folders] or [Path("runs")])
    rows, params, damaged = run_rows(runs)
    columns = columns_of(rows, params)
    rows = filter_rows(rows, columns, list(conditions))
    if group_by:
        rows, columns = group_rows(rows, columns, [k.strip() for k in group_by.split(",") if k.strip()])
        sort_key = sort_key or next((f"{m}_mean" for m in ("val_loss", "train_loss") if f"{m}_mean" in columns),
                                    columns[0])
    rows = sort_rows(rows, columns, sort_key, reverse)
    if as_csv:
        write_csv(columns, rows)
    else:  # metrics as readable() writes them, seconds to a tenth, run folders relative to here
        say(aligned(columns, [[_cell(r.get(c), c) for c in columns] for r in rows]))
    for line in damaged:
        say(f"damaged: {line}", err=True)
    if len(damaged) == len(runs):
        raise DataError(f"no run could be read: every summary.json is damaged ({len(runs)} run"
                        f"{'s' if len(runs) > 1 else ''})")


def _cell(value, column: str) -> str:
    if value is None:
        return "-"
    if column == "run":
        return os.path.relpath(value) if os.path.isabs(value) else value
    if isinstance(value, float):
        if column.startswith("seconds"):
            return f"{value:.1f}"
        if column.startswith("epochs"):
            return f"{value:.1f}"
        return readable(value) if column.split("_")[0] in ("val", "train", "test") else f"{value:.4g}"
    return str(value)


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
