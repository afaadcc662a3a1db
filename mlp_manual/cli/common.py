"""What every command shares: turning the library's errors and warnings into one-line messages."""

import csv
import functools
import os
import signal
import sys
from pathlib import Path

import click

from .. import __version__
from ..errors import MachineError, MLPManualError, machine_error, out_of_memory
from ..layers.user_modules import blame_user_layer, imported_layers
from ..process import interrupted
from ..runs.run_warnings import collect_warnings
from .progress import clear_progress

version_option = click.version_option(__version__, "--version", message="mlp-manual %(version)s",
                                      help="Print the mlp-manual version and exit.")


MACHINE_EXIT = 4  # the machine failed: a full disk, a read-only or vanished folder, memory


def user_errors(fn):
    """Wrap a click callback so that a mistake in the user's input (an MLPManualError) ends in
    ``Error: <message>`` and exit code 1, never a traceback; a failure of the machine (a
    MachineError, and any file or memory error the library did not name) in ``Error: <message>``
    and exit code 4; and Ctrl-C, SIGTERM or SIGHUP in ``Interrupted.`` (``Interrupted by SIGTERM.``) and exit code
    130 (143, 129; process.py); mlp-train says more when a run was under way."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MLPManualError as e:
            raise click.ClickException(str(e)) from None
        except MachineError as e:
            machine_failure(str(e))
        except MemoryError:
            machine_failure(str(out_of_memory()))
        except OSError as e:  # a file operation the library did not name
            where = f" ({e.filename})" if e.filename else ""
            machine_failure(f"{e.strerror or e}{where}")
        except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM and SIGHUP (Terminated)
            clear_progress()
            interrupted(getattr(e, "signum", signal.SIGINT))
    return wrapper


def machine_failure(message: str) -> None:
    """End the command on a failure of the machine: ``Error: <message>``, exit code 4."""
    clear_progress()
    say(f"Error: {message}", err=True)
    sys.exit(MACHINE_EXIT)


def say(message: str, err: bool = False) -> None:
    """``click.echo`` that outlives its reader: once standard output (or error) is a closed pipe,
    as in ``mlp-train ... | head -3``, a file on a full disk or a terminal that has gone, the rest
    of the output is dropped (``drop_output``) and the command goes on, so that every file it
    writes is still written."""
    try:
        click.echo(message, err=err)
    except OSError:  # a closed pipe (EPIPE; EINVAL on Windows), a full disk, a terminal gone (EIO)
        drop_output(err)


def output_failed(e: OSError) -> None:
    """After a write of the command's product to standard output failed with ``e``: drop the rest
    of the output (``drop_output``); a reader that has gone (EPIPE, ``| head``) wants no more, so
    the caller ends quietly; any other failure (a full disk, a terminal gone) raises MachineError,
    as the product is incomplete."""
    drop_output()
    if not isinstance(e, BrokenPipeError):
        raise machine_error(e, "standard output") from None


def write_csv(columns: list[str], rows: list[dict]) -> None:
    """The ``rows`` (dicts) as CSV on standard output, ``columns`` first; a missing value is
    empty. A closed pipe (``| head``) drops the rest."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    try:
        writer.writerow(columns)
        writer.writerows([["" if r.get(c) is None else r[c] for c in columns] for r in rows])
    except OSError:
        drop_output()


def aligned(header: list[str], cells: list[list[str]]) -> str:
    """A table of text ``cells`` under ``header``, each column as wide as its widest cell."""
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(header)]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in [header, *cells])


def drop_output(err: bool = False) -> None:
    """Point standard output (or error), which can no longer be written, at the null device: later
    writes, Python's own flush at exit included, are dropped without an error."""
    stream = sys.stderr if err else sys.stdout
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError):  # a stream without a descriptor: each write fails on its own
        pass


def output_file(path, option: str, suffix: str | None = None) -> Path:
    """``path``, checked before the command does any work as a file it can write: a file name
    (not a folder) in an existing, writable folder, ending in ``suffix`` when one is given.
    Otherwise a usage error on ``option``."""
    p = Path(path)
    folder = p.resolve().parent
    problem = None
    if suffix and p.suffix.lower() != suffix:
        problem = f"{path} must end in {suffix} (the file is written as {suffix[1:].upper()})"
    elif p.is_dir():
        problem = f"{path} is a folder; name a file in it"
    elif not folder.is_dir():
        problem = f"folder {p.parent} {'is not a folder' if folder.exists() else 'does not exist'}"
    elif not os.access(folder, os.W_OK):
        problem = f"folder {p.parent} is not writable"
    if problem:
        raise click.BadParameter(problem, param_hint=f"'{option}'")
    return p


def writable_folder(folder: Path, other: str) -> Path:
    """The default output ``folder`` (a run's own), created if missing and checked before any work
    as one the command can write in; else a MachineError that says to choose another with
    ``other`` (``--out DIR``)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise machine_error(e, folder, "create the folder") from None
    if not os.access(folder, os.W_OK):
        raise MachineError(f"cannot write in {folder} (a read-only folder or file system): name another place "
                           f"with {other}", folder)
    return folder


def warnings_on_stderr(fn):
    """Wrap a click callback so that every TrainingWarning raised while it runs is printed on
    standard error as its bare message, one line each, every occurrence."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        def show(warning):
            clear_progress()
            say(str(warning), err=True)

        with collect_warnings(show):
            return fn(*args, **kwargs)
    return wrapper


def config_argument(fn):
    """An optional positional CONFIG that means the same as ``--config`` (``mlp-train configs/xor.yaml``);
    giving both is a usage error. The callback receives it as ``config_path``."""
    @functools.wraps(fn)
    def wrapper(*args, config_file=None, **kwargs):
        if config_file is not None:
            if kwargs.get("config_path"):
                raise click.UsageError(f"the config is given twice ({config_file} and --config "
                                       f"{kwargs['config_path']}); give it once")
            kwargs["config_path"] = config_file
        return fn(*args, **kwargs)
    return click.argument("config_file", required=False, metavar="[CONFIG]")(wrapper)


def config_option(help: str):
    """``--config PATH``: a YAML config. Not checked by click: the library names a missing or
    unreadable file in one line, as it does for every file a command reads."""
    return click.option("--config", "config_path", metavar="PATH", help=help)


def set_option(fn):
    """``--set KEY=VALUE`` (repeatable): the overrides of a config's keys."""
    return click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                        help="Override a config key, e.g. --set optimizer.lr=0.05 (repeatable; VALUE is YAML).")(fn)


def import_option(fn):
    """``--import MODULE`` (repeatable): the layer classes of the user's module MODULE (a name
    importable from the current folder, or a .py file) are layer types while the command runs,
    named ``MODULE:Class``. Place it below ``user_errors``; the callback does not see it. An
    exception raised inside a layer of such a type becomes a UserCodeError naming the type."""
    @functools.wraps(fn)
    def wrapper(*args, imports=(), **kwargs):
        with imported_layers(imports):
            try:
                return fn(*args, **kwargs)
            except MLPManualError:
                raise
            except Exception as e:
                blamed = blame_user_layer(e)
                if blamed is None:
                    raise
                raise blamed from None
    return click.option("--import", "imports", multiple=True, metavar="MODULE",
                        help="Make the layer classes of your module MODULE (a name importable from the current "
                             "folder, or a .py file) layer types named MODULE:Class (repeatable).")(wrapper)


def max_elements_option(default: int):
    """``--max-elements``, shared by the commands that compare gradients with finite differences."""
    return click.option("--max-elements", type=click.IntRange(min=0), default=default, show_default=True,
                        help="Per tensor, check a seeded sample of this many entries plus one directional check "
                             "over all of them; 0 checks every entry.")
