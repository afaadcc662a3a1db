"""The vocabulary of the layer registry: option kinds, options, and width rules.

An option a config sets on a layer is checked first by its kind (the type of value it holds),
then by its range; a failure is a ConfigError that names the key, as in
``model.layers[1].p must be in [0, 1), got 1.5``. A width rule names the constructor arguments
that are widths and says how they follow from the width flowing into the layer: widths are
never written in a config (the data and the layer before fix them), only stored in model files.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from ..errors import ConfigError, short_repr
from ..init import init_names


class Kind:
    """The type of value an option holds. ``accepts`` tests a value; ``check`` returns it as the
    layer takes it or raises ConfigError: ``<where> must be <described>, got <value>``.
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
        super().__init__("one of the names", lambda v: isinstance(v, str) and v in names())
        self.names = names

    def check(self, value, where: str):
        if not self.accepts(value):
            raise ConfigError(f"{where} must be one of {', '.join(self.names())}; got {short_repr(value)}")
        return value


NUMBER = Kind("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
BOOL = Kind("true or false", lambda v: isinstance(v, bool))
COUNT = Kind("a positive integer", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1)
INTEGER = Kind("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
TEXT = Kind("a string", lambda v: isinstance(v, str))
SCALAR = Kind("a number, a string, true or false, or null", lambda v: v is None or isinstance(v, (int, float, str)))
INIT = OneOf(init_names)


@dataclass(frozen=True)
class Option:
    """One option of a layer type: its kind; the constructor's default, which a model-file error
    shows as an example; and a range ``check`` whose words ``must`` end "<key> must ...".
    """

    kind: Kind
    default: object = None
    check: Callable[[object], bool] | None = None
    must: str = ""

    def validate(self, value, where: str):
        """``value`` as the layer takes it, or ConfigError naming ``where``."""
        value = self.kind.check(value, where)
        if not self.in_range(value):
            raise ConfigError(f"{where} must {self.must}, got {short_repr(value)}")
        return value

    def in_range(self, value) -> bool:
        """Whether a value of the right kind passes the range check."""
        return self.check is None or self.check(value)


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


def positive(default: float) -> Option:
    """A number > 0 and finite, such as a normalisation's eps."""
    return Option(NUMBER, default, lambda v: 0 < v < math.inf, "be > 0")


class Widths:
    """A width rule. ``names``: the constructor arguments that are widths; ``input``: the one that
    is the input width, if any; ``options``: config options the rule reads itself; ``kwargs``:
    the width arguments of a layer that ``width`` features flow into. ``unsized``: the widths
    that size none of the layer's arrays (an embedding's context), which a model file cannot
    check against its arrays."""

    names: tuple[str, ...] = ()
    input: str | None = None
    options: ClassVar[dict[str, Option]] = {}
    unsized: tuple[str, ...] = ()
    takes_output_width = False  # the last such layer of a model may leave its width to the loss

    def kwargs(self, type_name: str, spec: dict, width: int, output_width: int | None,
               vocab: int | None = None) -> dict:
        """Width arguments; ``output_width`` is given to the model's last output-sizing layer only;
        ``vocab`` is the size of the data's vocabulary (text data), None for numbers."""
        return {}

    def output(self, kwargs: dict) -> int | None:
        """The output width a layer built with the width arguments ``kwargs`` must give, when the
        rule fixes one (``out_features``); None when the layer decides."""
        return None


class KeepWidth(Widths):
    """Elementwise layers: no width arguments; the output is as wide as the input."""


class FeaturesWidth(Widths):
    """Normalisation layers: ``features`` is the width flowing in."""

    names = ("features",)
    input = "features"

    def kwargs(self, type_name, spec, width, output_width, vocab=None):
        return {"features": width}


class UnitsWidth(Widths):
    """Linear layers: ``in_features`` is the width flowing in, ``out_features`` the option
    ``units``, which the model's last such layer may omit to get the loss's output width."""

    names = ("in_features", "out_features")
    input = "in_features"
    options: ClassVar[dict[str, Option]] = {"units": Option(COUNT)}
    takes_output_width = True

    def kwargs(self, type_name, spec, width, output_width, vocab=None):
        units = spec.get("units")
        if units is None:
            if output_width is None:
                raise ConfigError(f"{type_name} needs 'units' (only the last {type_name} may omit it)")
            units = output_width
        return {"in_features": width, "out_features": units}

    def output(self, kwargs):
        return kwargs["out_features"]


class TableWidth(Widths):
    """Embedding tables: ``vocab`` rows, one per token of the data's vocabulary; ``context`` is
    the width flowing in (indices per row); ``dim`` the option of that name, the columns of the
    table. The output is ``context * dim`` wide."""

    names = ("vocab", "context", "dim")
    input = "context"
    options: ClassVar[dict[str, Option]] = {"dim": Option(COUNT)}
    unsized = ("context",)

    def kwargs(self, type_name, spec, width, output_width, vocab=None):
        if vocab is None:
            raise ConfigError(f"{type_name} looks up characters: it needs a text dataset (data.name names or "
                              "text), whose vocabulary sets the rows of its table")
        if "dim" not in spec:
            raise ConfigError(f"{type_name} needs 'dim', the size of each character's vector (e.g. dim: 10)")
        return {"vocab": vocab, "context": width, "dim": spec["dim"]}


KEEP, FEATURES, UNITS, TABLE = KeepWidth(), FeaturesWidth(), UnitsWidth(), TableWidth()
