"""mlp-sweep: a hyperparameter search on Optuna, each trial an ordinary run folder."""

import dataclasses
import os
from pathlib import Path

import click

from ..errors import ConfigError, one_line, short_repr
from ..options import NAME
from ..readable import readable
from .common import aligned, say, user_errors, version_option, writable_folder, write_csv
from .sweep_run import note, say_summary, spawn, work
from .workers import end_with_parent, worker_storage


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
def main():
    """Search hyperparameters: many runs of one config, chosen and pruned by Optuna, on one
    machine or many. Needs the sweep extra: pip install "mlp-manual[sweep]".

    Examples:

    \b
        mlp-sweep run sweeps/spirals.yaml --workers 2
        mlp-sweep status sweeps/spirals-width
        mlp-sweep best sweeps/spirals-width
        mlp-sweep run sweep.yaml --storage postgresql://me@db.example/sweeps --out /scratch/me/sweep
    """


@main.command()
@click.argument("sweep_file", metavar="SWEEP.yaml")
@click.option("--out", metavar="DIR", help="The sweep folder: its trials' run folders, journal and figures "
                                           "(default sweeps/<name>).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes on this machine (each trains one trial at a time).")
@click.option("--trials", type=click.IntRange(min=1), metavar="N",
              help="The study's budget: trials over every worker and machine (default: the file's trials).")
@click.option("--storage", metavar="URL", help="Where the study lives: postgresql://user@host/db to share it "
                                               "between machines (default: the file's storage, else a journal "
                                               "file in the sweep folder).")
@click.option("--worker", "as_worker", is_flag=True, hidden=True)  # one of the processes of --workers N
@user_errors
def run(sweep_file, out, workers, trials, storage, as_worker):
    """Create the study (or join it) and run trials until its budget is used up. Each trial is a
    run folder DIR/trials/<number>/ that mlp-eval, mlp-predict, mlp-plot and mlp-train --resume
    take. Ctrl-C or SIGTERM saves the running trials; the same command again continues.

    Exit codes: 0 the budget is used up, 1 a mistake in the sweep file or the config (or a
    damaged journal file, or every trial failed), 4 the machine or the study's database failed, 130 Ctrl-C, 143
    SIGTERM, 129 SIGHUP.
    """
    from ..sweep.spec import load_sweep

    if as_worker:
        end_with_parent()
        storage = worker_storage() or storage
    sweep = load_sweep(sweep_file)
    if trials is not None:
        sweep = dataclasses.replace(sweep, trials=trials)
    url = storage or sweep.storage
    folder = writable_folder(Path(out or Path("sweeps") / sweep.name), "--out DIR")
    if as_worker:
        return work(sweep, folder, url)
    from ..sweep.folder import write_record
    from ..sweep.storage import StudyStorage
    from ..sweep.study import open_study

    store = StudyStorage(url, folder, note=note)
    open_study(sweep, store, folder)
    write_record(folder, sweep.name, url, sweep_file)
    keys = ", ".join(p.key for p in sweep.space)
    say(f"sweep {sweep.name}: {sweep.trials} trial{'s' if sweep.trials != 1 else ''} varying {keys}; objective {sweep.metric} ({sweep.direction}); "
        f"{sweep.sampler.name} sampler, {sweep.pruner.name} pruner; study in {store.describe()}; "
        f"{workers} worker{'s' if workers > 1 else ''}")
    if workers == 1:
        work(sweep, folder, url)
    else:
        spawn(sweep_file, folder, url, sweep.trials, workers)
    say_summary(sweep, folder, store)


def _open(sweep_dir, storage, study):
    """The study of ``sweep_dir`` (its sweep.json), or of --storage and --study."""
    from ..sweep.folder import read_record, recorded_journal
    from ..sweep.storage import StudyStorage
    from ..sweep.study import load_study

    if sweep_dir is None and (storage is None or study is None):
        raise click.UsageError("give the sweep folder, or both --storage URL and --study NAME")
    folder = Path(sweep_dir) if sweep_dir else Path(".")
    if sweep_dir is not None and (storage is None or study is None):
        record = read_record(folder)
        study = study or record.study
        if storage is None:
            recorded_journal(folder, record)
            storage = record.storage
    return folder, load_study(StudyStorage(storage, folder), study)


def _study_name(ctx, param, value):
    """--study: a name without line breaks, as the study's name goes into lines of files."""
    if value is not None and not NAME.accepts(value):
        raise click.BadParameter(f"must be {NAME.described}, got {short_repr(value)}")
    return value


@main.command()
@click.argument("sweep_dir", metavar="DIR", required=False)
@click.option("--storage", metavar="URL", help="The study's storage (default: the one DIR's sweep.json names).")
@click.option("--study", metavar="NAME", callback=_study_name, help="The study's name (default: DIR's).")
@click.option("--csv", "as_csv", is_flag=True, help="Write the table as CSV to standard output.")
@user_errors
def status(sweep_dir, storage, study, as_csv):
    """One row per trial: number, state (running, complete, pruned, failed, waiting), the
    parameters, the objective, epochs, seconds, host and run folder; the best first. Works while
    the sweep runs.

    Examples:

    \b
        mlp-sweep status sweeps/spirals-width
        mlp-sweep status sweeps/spirals-width --csv > trials.csv
        mlp-sweep status --storage postgresql://me@db.example/sweeps --study spirals-width
    """
    from ..sweep.table import best_trial, counts, trial_rows

    folder, found = _open(sweep_dir, storage, study)
    rows = trial_rows(found)
    metric = found.user_attrs.get("metric", "objective")
    columns = ["number", "state", *found.user_attrs.get("space", []), metric, "epochs", "seconds", "host",
               "run_dir", "note"]
    if as_csv:
        write_csv(columns, rows)
        return
    total = found.user_attrs.get("trials", len(rows))
    found_counts = counts(found)
    parts = ", ".join(f"{n} {s}" for s, n in found_counts.items())
    continued = len(rows) - sum(found_counts.values())
    best = best_trial(found)
    head = f"study {found.study_name}: {sum(found_counts.values())} trials of a budget of {total} ({parts or 'none yet'})"
    if continued:
        head += f", and {continued} whose worker stopped, continued by another"
    if best is not None:
        head += f"; best: trial {best.number}, {metric} {readable(best.value)}"
    say(one_line(head))
    if rows:
        say(_table(rows, columns, metric))


def _cell(value, column: str, metric: str) -> str:
    """A value of the table: the objective as readable() writes metrics, seconds to a tenth,
    parameters to 4 significant digits, run folders relative to here; text from the study (a
    host, a note, a folder: anyone who can write the study writes it) on one line."""
    if value is None:
        return "-"
    if column == "run_dir" and isinstance(value, str):
        return one_line(os.path.relpath(value) if os.path.isabs(value) and "\0" not in value else value)
    if isinstance(value, float):
        return readable(value) if column == metric else f"{value:.1f}" if column == "seconds" else f"{value:.4g}"
    return one_line(value)


def _table(rows: list[dict], columns: list[str], metric: str) -> str:
    """The rows as aligned columns; the note (why a trial stopped) last, empty for most trials."""
    return aligned([one_line(c) for c in columns],
                   [[_cell(r.get(c), c, metric) if c != "note" else one_line(r.get(c) or "") for c in columns]
                    for r in rows])


@main.command()
@click.argument("sweep_dir", metavar="DIR")
@click.option("--storage", metavar="URL", help="The study's storage (default: the one DIR's sweep.json names).")
@click.option("--study", metavar="NAME", callback=_study_name, help="The study's name (default: DIR's).")
@user_errors
def best(sweep_dir, storage, study):
    """Write DIR/best.yaml: the complete mlp-train config of the best trial. Training it again
    (mlp-train --config DIR/best.yaml) gives the trial's objective, bit for bit on the same
    machine.

    Example:

    \b
        mlp-sweep best sweeps/spirals-width && mlp-train --config sweeps/spirals-width/best.yaml
    """
    from .. import files
    from ..sweep.table import best_trial

    folder, found = _open(sweep_dir, storage, study)
    trial = best_trial(found)
    metric = one_line(found.user_attrs.get("metric", "objective"))
    if trial is None:
        raise ConfigError(f"{folder}: no trial of study {found.study_name} is complete yet")
    run_dir = str(trial.user_attrs.get("run_dir"))
    run_dir = run_dir if NAME.accepts(run_dir) else short_repr(run_dir)  # the study's text stays on its line
    header = (f"# The best trial of sweep {found.study_name}: trial {trial.number}, {metric} {readable(trial.value)}\n"
              f"# (its run folder: {run_dir}). Written by mlp-sweep best.\n")
    files.write_text(folder / "best.yaml", header + trial.user_attrs["config"])
    say(f"wrote {folder / 'best.yaml'} (trial {trial.number}, {metric} {readable(trial.value)}); train it with: "
        f"mlp-train --config {folder / 'best.yaml'}")


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
