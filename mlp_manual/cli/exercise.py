"""mlp-exercise: backpropagation exercises, written by the student and checked on the spot."""

from pathlib import Path

import click

from ..errors import ExerciseError
from ..exercises.check import TIME_LIMIT
from .common import say, user_errors, version_option

DIR_HELP = "The folder of your exercise files and progress."
DEFAULT_DIR = "exercises"


def dir_option(fn):
    return click.option("--dir", "folder", default=DEFAULT_DIR, show_default=True, metavar="DIR", help=DIR_HELP,
                        type=click.Path(file_okay=False, path_type=Path))(fn)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@version_option
def main():
    """Write backward passes yourself, from the chain rule to a whole MLP, and have each checked
    on the spot: every tensor against the core's own implementation and float64 central
    differences; a wrong one is named as a teacher would ("dW is transposed"), at the smallest
    input where it shows.

    Examples:

    \b
        mlp-exercise list
        mlp-exercise start linear
        mlp-exercise check linear
        mlp-exercise hint linear
        mlp-exercise check --train
    """


@main.command("list")
@dir_option
@user_errors
def list_(folder):
    """The exercises in learning order, each with its status in DIR: not started, started,
    failing or passed."""
    from ..exercises import EXERCISES
    from ..exercises.files import read_progress, status

    progress = read_progress(folder) if folder.is_dir() else {}
    width = max(len(ex.name) for ex in EXERCISES)
    for i, ex in enumerate(EXERCISES, 1):
        say(f"{i:>2}. {ex.name:<{width}}  {status(folder, ex, progress):<21} {ex.title}")


@main.command()
@click.argument("name")
@dir_option
@user_errors
def start(name, folder):
    """Write the scaffold of exercise NAME into DIR/NAME.py: the docstring with the shapes and
    the math to derive, the parts given, and a TODO where your code goes. A file you have
    changed is never overwritten."""
    from ..exercises import find
    from ..exercises.files import start as write_scaffold

    ex = find(name)
    path, written = write_scaffold(folder, ex)
    if not written:
        raise ExerciseError(f"{path} has changes of yours and was left as it is; move it away to start over")
    say(f"wrote {path}: write the part marked TODO, then run mlp-exercise check {ex.name}" + _dir_suffix(folder))


@main.command()
@click.argument("name", required=False)
@dir_option
@click.option("--train", is_flag=True, help="Train configs/moons.yaml through mlp-train with your own layers "
                                            "(your linear and relu exercises); passes at 95% test accuracy.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the cases' values and shapes.")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), default=TIME_LIMIT, show_default=True,
              metavar="SECONDS", help="How long your code may run on all the cases of one exercise, once "
                                      "its file is imported; past it the check stops it.")
@user_errors
def check(name, folder, train, seed, time_limit):
    """Check exercise NAME in DIR (without NAME: every exercise you have started). Prints each
    tensor against the core and central differences, names the mistake it recognises, and
    the smallest input where it shows. Exit status 0 when all pass, 1 otherwise."""
    from ..exercises import EXERCISES, find
    from ..exercises.check import check as run_check
    from ..exercises.files import read_progress, record

    if train:
        if name:
            raise click.UsageError("--train checks your layer exercises together and trains with them; "
                                   "give it no NAME")
        from ..exercises.train_check import train_with_student_layers
        return _exit(train_with_student_layers(folder, say))
    chosen = [find(name)] if name else [ex for ex in EXERCISES if (folder / ex.file).exists()]
    if not chosen:
        raise ExerciseError(f"no exercise started in {folder}/: start one with mlp-exercise start "
                            f"{EXERCISES[0].name}")
    if folder.is_dir():
        read_progress(folder)  # a damaged progress file is said before any check, not after the first
    passed = True
    for ex in chosen:
        path = folder / ex.file
        if not path.is_file():
            raise ExerciseError(f"{path} is not a file: start the exercise with mlp-exercise start {ex.name}"
                                + _dir_suffix(folder))
        report = run_check(ex, path, seed=seed, time_limit=time_limit)
        say(str(report))
        record(folder, ex, report.passed, report.checked)
        passed &= report.passed
    _exit(passed)


def _dir_suffix(folder: Path) -> str:
    """`` --dir DIR`` to repeat in a suggested command, unless DIR is the default."""
    return "" if folder == Path(DEFAULT_DIR) else f" --dir {folder}"


def _exit(passed: bool) -> None:
    if not passed:
        raise SystemExit(1)


@main.command()
@click.argument("name")
@dir_option
@user_errors
def hint(name, folder):
    """A hint for exercise NAME: one more each time you ask."""
    from ..exercises import find
    from ..exercises.files import next_hint

    ex = find(name)
    number, text = next_hint(folder, ex)
    say(f"hint {number} of {len(ex.hints)} for {ex.name}: {text}")


@main.command()
@click.argument("name")
@click.option("--yes", is_flag=True, help="Show it without asking first.")
@user_errors
def solution(name, yes):
    """The reference answer to exercise NAME, after a confirmation."""
    from ..exercises import find
    from ..exercises.files import solution as reference

    ex = find(name)
    try:
        shown = yes or click.confirm(f"Show the solution of {ex.name}? Try mlp-exercise hint {ex.name} first",
                                     default=False)
    except click.Abort:  # no answer: standard input closed, or Ctrl-D
        say("")
        shown = False
    if not shown:
        raise ExerciseError(f"the solution of {ex.name} was not shown (--yes shows it without asking)")
    say(reference(ex).rstrip("\n"))
