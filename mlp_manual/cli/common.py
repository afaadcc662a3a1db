"""What every command shares: turning the library's errors into one-line messages."""

import functools

import click

from ..errors import MLPManualError


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
