"""``mlp-data``: see which datasets are available and download MNIST and Fashion-MNIST."""

import os
import shlex
import subprocess

import click

from ..datasets import datadir
from ..datasets import fetch as fetching
from ..datasets.real import DIGITS_FILE, MNIST1D_FILE
from ..datasets.text import NAMES_FILE
from ..errors import DataError
from .common import say, user_errors, version_option


def quote(word: str) -> str:
    """``word`` as one argument of a command line in this system's shell."""
    return shlex.quote(word) if os.name == "posix" else subprocess.list2cmdline([word])


DATA_DIR = click.option("--data-dir", type=click.Path(file_okay=False), default=None,
                        help="Data directory (default: $MLP_MANUAL_DATA, ./data, then the user cache).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
def main():
    """Datasets for mlp-manual: list them, fetch the downloadable ones.

    Examples:

    \b
        mlp-data list
        mlp-data fetch mnist
        mlp-data fetch fashion_mnist --data-dir ~/datasets
    """


@main.command("list")
@DATA_DIR
@user_errors
def list_datasets(data_dir):
    """Show every dataset, whether it is present, and where."""
    rows = [("digits", "shipped", str(DIGITS_FILE)), ("mnist1d", "shipped", str(MNIST1D_FILE)),
            ("names", "shipped", str(NAMES_FILE))]
    for name in datadir.IDX_FILES:
        try:
            files = datadir.locate(name, data_dir)
            rows.append((name, "present", str(next(iter(files.values())).parent)))
        except DataError:
            looked = ", ".join(str(folder / name) for folder, _ in datadir.candidate_dirs(data_dir))
            fetch = f"mlp-data fetch {name}" + (f" --data-dir {quote(data_dir)}" if data_dir else "")
            rows.append((name, "missing", f"get it with `{fetch}`; looked in {looked}"))
    width = max(len(name) for name, _, _ in rows)
    for name, status, where in rows:
        say(f"{name:<{width}}  {status:<7}  {where}")


def _progress_bar(label, total):
    if total is None:
        return click.progressbar(length=0, label=label, show_percent=False, show_pos=True)
    return click.progressbar(length=total, label=label, show_eta=True)


@main.command("fetch")
@click.argument("name", type=click.Choice(sorted(fetching.EXPECTED)), metavar="DATASET")
@DATA_DIR
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=fetching.TIMEOUT,
              show_default=True, help="Seconds a connection or read may stall before the next mirror is tried.")
@user_errors
def fetch_dataset(name, data_dir, timeout):
    """Download NAME's four IDX files, verify them and put them in the data directory.

    Files already present and correct are kept. Without --data-dir the files go to
    $MLP_MANUAL_DATA if set, else the user cache folder.
    """
    folder = fetching.fetch(name, data_dir, timeout=timeout, progress=_progress_bar,
                            log=lambda message: say(message, err=True))
    say(f"{name} is ready in {folder}")


if __name__ == "__main__":
    from ..process import run_as_program

    run_as_program(main)
