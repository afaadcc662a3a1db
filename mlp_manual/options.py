"""The one vocabulary of options: the kind of value an option holds, its range and its help.

Every choosable thing declares its options with it, in the module that implements it: layer
types (``layers/registry.py``), optimizers (``optimizers.py``), schedules (``schedules.py``),
datasets (``datasets/synthetic.py``, ``csvfile.py``, ``text.py``, listed by ``load.LOADERS``).
One validator reads the declarations, for configs and ``--set`` (``config/parse.py``) and for
model files; the config reference is written from them. A failure is a ConfigError naming the
key, as in ``optimizer.momentum must be in [0, 1), got 1.5``.
"""

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .errors import ConfigError, closest, did_you_mean, short_repr, shown_key


class Kind:
    """The type of value an option holds. ``accepts`` tests a value; ``check`` returns it as the
    thing takes it or raises ConfigError: ``<where> must be <described>, got <value>``.
    ``holds_layers``: the value is a list of layer specs, which are built into layers."""

    holds_layers = False

    def __init__(self, described: str, accepts: Callable[[object], bool]):
        self.described, self.accepts = described, accepts

    def check(self, value, where: str):
        if not self.accepts(value):
            raise ConfigError(f"{where} must be {self.described}, got {short_repr(value)}")
        return value


class OneOf(Kind):
    """A name from the list ``names()`` gives when asked."""

    def __init__(self, names: Callable[[], list[str]]):
        super().__init__("a name", lambda v: isinstance(v, str) and v in names())
        self.names = names

    def check(self, value, where: str):
        if not self.accepts(value):
            raise ConfigError(f"{where} must be one of {', '.join(self.names())}; got {short_repr(value)}"
                              + (did_you_mean(value, self.names()) if isinstance(value, str) else ""))
        return value


def is_integer(v, low: int | None = None) -> bool:
    """An int that is not a bool (YAML's true is an int to Python), at least ``low`` when given."""
    return isinstance(v, int) and not isinstance(v, bool) and (low is None or v >= low)


def is_number(v) -> bool:
    """An int or a float that is not a bool."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


SCIENTIFIC = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


class Number(Kind):
    """A number: an int or a float, not a bool; with ``as_float`` taken as a float (so that
    ``noise: 0`` is written back, and logged, as 0.0 like ``noise: 0.1``); with ``finite``, not
    an infinity or nan. A string in scientific notation is read as the number it writes (YAML 1.1
    reads ``1e-3``, without a dot, as a string)."""

    def __init__(self, as_float: bool = False, finite: bool = False):
        super().__init__("a number", is_number)
        self.as_float, self.finite = as_float, finite

    def check(self, value, where: str):
        if isinstance(value, str) and SCIENTIFIC.fullmatch(value.strip()):
            value = float(value)
        value = super().check(value, where)
        if self.finite and not math.isfinite(value):
            raise ConfigError(f"{where} must be a finite number, got {short_repr(value)}")
        return float(value) if self.as_float else value


class OrNone(Kind):
    """A value of ``kind``, or null (None), which no range check sees."""

    def __init__(self, kind: Kind):
        super().__init__(kind.described, lambda v: v is None or kind.accepts(v))
        self.kind = kind

    def check(self, value, where: str):
        return None if value is None else self.kind.check(value, where)


class Items(Kind):
    """A list whose every item ``item(value, "<where>[i]")`` checks (and may rewrite); taken as a
    tuple. ``or_none``: null is taken too (as None)."""

    def __init__(self, described: str, item: Callable[[object, str], object], or_none: bool = False):
        super().__init__(described, lambda v: (or_none and v is None) or isinstance(v, (list, tuple)))
        self.item = item

    def check(self, value, where: str):
        value = super().check(value, where)
        return None if value is None else tuple(self.item(v, f"{where}[{i}]") for i, v in enumerate(value))


NUMBER = Number()
FLOAT = Number(as_float=True)  # a number that is a float whatever was written (a rate, a noise level)
REAL = Number(as_float=True, finite=True)  # a finite float: a config's own rates, fractions and seconds
BOOL = Kind("true or false", lambda v: isinstance(v, bool))
COUNT = Kind("a positive integer", lambda v: is_integer(v, 1))
INTEGER = Kind("an integer", is_integer)
TEXT = Kind("a string", lambda v: isinstance(v, str))
PATH = Kind("a file path or null", lambda v: v is None or isinstance(v, str))
SCALAR = Kind("a number, a string, true or false, or null", lambda v: v is None or isinstance(v, (int, float, str)))

# Names become folders (runs/<name>-<time>, sweeps/<name>) and lines of files (best.yaml's
# header, the rows of mlp-runs and mlp-sweep status): "." and ".." would be folders that exist
# already, a NUL ends a path early, and a line break (or any control character) breaks a line;
# a direction override (U+202E and its kin) would show a name backwards on screen.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def is_name(v, one_folder: bool = False) -> bool:
    """Whether ``v`` may name a run, a sweep or a study: a string, not ``.`` or ``..``, without
    line breaks, NUL or other control characters; with ``one_folder`` (it becomes one folder, as
    a sweep's name does), not empty and without ``/`` either."""
    if not isinstance(v, str) or v.strip() in (".", "..") or CONTROL.search(v):
        return False
    return not one_folder or (bool(v.strip()) and "/" not in v)


NAME = Kind("text without line breaks or other control characters, and not . or ..", is_name)
FOLDER_NAME = Kind("text without '/', line breaks or other control characters, and not empty, . or ..",
                   lambda v: is_name(v, one_folder=True))


@dataclass(frozen=True)
class Option:
    """One option: its kind; its default (what a config that leaves it out gets, and an example
    in messages); a range ``check`` whose words ``must`` end "<key> must ..."; and ``help``,
    one line for the reference."""

    kind: Kind
    default: object = None
    check: Callable[[object], bool] | None = None
    must: str = ""
    help: str = ""

    def validate(self, value, where: str):
        """``value`` as the thing takes it, or ConfigError naming ``where``."""
        taken = self.kind.check(value, where)
        if not self.in_range(taken):  # the message shows the value as it was written
            raise ConfigError(f"{where} must {self.must}, got {short_repr(value)}")
        return taken

    def in_range(self, value) -> bool:
        """Whether a value of the right kind passes the range check."""
        return self.check is None or value is None or self.check(value)


def option_like(default) -> Option | None:
    """The option a constructor argument with this ``default`` is: true or false for a bool, an
    integer for an int, a finite number for a float, a string for a str, any scalar for None;
    None for a default of any other type (a config cannot write it)."""
    if isinstance(default, bool):
        return Option(BOOL, default)
    if isinstance(default, int):
        return Option(INTEGER, default)
    if isinstance(default, float):
        return Option(NUMBER, default, math.isfinite, "be a finite number")
    if isinstance(default, str):
        return Option(TEXT, default)
    return Option(SCALAR) if default is None else None


# Ranges, as (check, must) pairs for an Option: Option(INTEGER, 1, *POSITIVE).
POSITIVE = (lambda v: 0 < v < math.inf, "be > 0")
NOT_NEGATIVE = (lambda v: 0 <= v < math.inf, "be >= 0")
FRACTION = (lambda v: 0 <= v < 1, "be in [0, 1)")


def positive(default: float, help: str = "") -> Option:
    """A number > 0 and finite, such as a normalisation's eps."""
    return Option(FLOAT, default, *POSITIVE, help)


def fraction(default: float, help: str = "") -> Option:
    """A number in [0, 1), such as a momentum or a decay rate of a running average."""
    return Option(FLOAT, default, *FRACTION, help)


def declares(options: dict[str, Option]):
    """Mark a loader function with the options it reads (``fn.options``), beside the keys every
    dataset has: a config that names another dataset may not set them."""
    def mark(fn):
        fn.options = options
        return fn
    return mark


def choice(names: tuple[str, ...], default: str, help: str = "") -> Option:
    """One of ``names``."""
    return Option(OneOf(lambda: list(names)), default, help=help)


def validate_options(given: dict, declared: dict[str, Option], where: str, owner: str) -> dict:
    """Every declared option's value: ``given``'s, checked, else its default. ``where`` is the
    dotted prefix of the keys in messages (``optimizer.``); ``owner`` names what declares them
    (``sgd``). ConfigError for an option it does not declare, with did-you-mean."""
    for _, key, hint in find_unknown_keys(given, declared)[:1]:
        raise ConfigError(f"unknown option {shown_key(key)} for {owner}" + (hint or (
            f" (it takes {', '.join(declared)})" if declared else " (it takes none)")))
    return {key: option.validate(given[key], f"{where}{key}") if key in given else option.default
            for key, option in declared.items()}


def find_unknown_keys(document, declared: Mapping, prefix: str = "",
                      tree: Mapping | None = None) -> list[tuple[str, object, str]]:
    """Each key of ``document`` (a mapping read from a file) that ``declared`` does not declare,
    as (the dotted prefix of its section, the key, its did-you-mean or ""), in the order written;
    ``errors.unknown_keys`` makes them a message. ``declared`` maps each key to its declaration
    (an Option, or anything); a declaration that is itself a mapping declares a section, whose
    keys are looked at in turn (``prefix`` + ``key.``). The did-you-mean is the closest key of
    the same section; with ``tree``, the whole declaration of which ``declared`` is a section,
    first a key of another section of that name (``epochs`` -> ``training.epochs``, when no
    other section has an ``epochs``), and failing the section's, a close one of another."""
    if not isinstance(document, Mapping):
        return []
    found = []
    for key, value in document.items():
        if key not in declared:
            found.append((prefix, key, _hint(str(key), declared, prefix, tree)))
        elif isinstance(declared[key], Mapping):
            found += find_unknown_keys(value, declared[key], f"{prefix}{key}.", tree)
    return found


def _hint(word: str, declared: Mapping, prefix: str, tree: Mapping | None) -> str:
    """The did-you-mean of ``find_unknown_keys``. Keys of other sections are compared by their
    last part, which must be unique in ``tree`` for one to be suggested."""
    elsewhere = {}
    if tree is not None:
        by_last: dict[str, list[str]] = {}
        for key in _dotted(tree):
            by_last.setdefault(key.rpartition(".")[2], []).append(key)
        elsewhere = {last: keys[0] for last, keys in by_last.items() if len(keys) == 1}
    if word in elsewhere:
        return f" (did you mean '{elsewhere[word]}'?)"
    hint = did_you_mean(word, declared, prefix)
    if hint or not elsewhere:
        return hint
    close = closest(word, elsewhere, cutoff=0.8)
    return f" (did you mean '{elsewhere[close]}'?)" if close else ""


def _dotted(tree: Mapping, prefix: str = "") -> list[str]:
    """Every key of a declaration tree and of its sections, dotted (``training.epochs``)."""
    keys = []
    for key, declaration in tree.items():
        keys.append(prefix + key)
        if isinstance(declaration, Mapping):
            keys += _dotted(declaration, f"{prefix}{key}.")
    return keys
