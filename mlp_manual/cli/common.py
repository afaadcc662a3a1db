"""What every command shares: turning the library's errors and warnings into one-line messages."""

import functools
import os
import sys

import click

from ..errors import MLPManualError
from ..runs.run_warnings import collect_warnings


def user_errors(fn):
    """Wrap a click callback so that a mistake in the user's input (an MLPManualError) ends in
    ``Error: <message>`` and exit code 1, never a traceback."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MLPManualError as e:
            raise click.ClickException(str(e)) from None
    return wrapper


def say(message: str, err: bool = False) -> None:
    """``click.echo`` that outlives its reader: once standard output (or error) is a closed pipe,
    as in ``mlp-train ... | head -3``, the stream is pointed at the null device, so that this
    and later output (Python's own flush at exit included) is dropped and the command goes on."""
    try:
        click.echo(message, err=err)
    except BrokenPipeError:
        stream = sys.stderr if err else sys.stdout
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stream.fileno())
            os.close(null)
        except (OSError, ValueError):  # a stream without a descriptor: each write fails on its own
            pass


def warnings_on_stderr(fn):
    """Wrap a click callback so that every TrainingWarning raised while it runs is printed on
    standard error as its bare message, one line each, every occurrence."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with collect_warnings(lambda warning: say(str(warning), err=True)):
            return fn(*args, **kwargs)
    return wrapper


def max_elements_option(default: int):
    """``--max-elements``, shared by the commands that compare gradients with finite differences."""
    return click.option("--max-elements", type=click.IntRange(min=0), default=default, show_default=True,
                        help="Per tensor, check a seeded sample of this many entries plus one directional check "
                             "over all of them; 0 checks every entry.")
