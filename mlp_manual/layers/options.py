"""The width rules of the layer registry (its options are written in ``mlp_manual/options.py``'s
vocabulary, as every choosable thing's are).

An option a config sets on a layer is checked first by its kind (the type of value it holds),
then by its range; a failure is a ConfigError that names the key, as in
``model.layers[1].p must be in [0, 1), got 1.5``. A width rule names the constructor arguments
that are widths and says how they follow from the width flowing into the layer: widths are
never written in a config (the data and the layer before fix them), only stored in model files.
"""

from typing import ClassVar

from ..core.init import init_names
from ..errors import ConfigError
from ..options import COUNT, Kind, OneOf, Option

INIT = OneOf(init_names)  # a weight initialiser's name


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

    def width_after(self, layer, width: int) -> int:
        """The features ``layer`` (of a built-in type with this rule) gives for ``width`` in."""
        return width


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

    def width_after(self, layer, width):
        return layer.out_features


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

    def width_after(self, layer, width):
        return layer.context * layer.dim


KEEP, FEATURES, UNITS, TABLE = KeepWidth(), FeaturesWidth(), UnitsWidth(), TableWidth()


MAX_NESTING = 16  # blocks inside blocks: deeper than any model needs, far from Python's recursion limit


class LayerList(Kind):
    """Nested layer specs (the inner layers of a block). The registry checks each as a spec of
    its own (``registry.check_spec``), as deep as MAX_NESTING."""

    holds_layers = True

    def __init__(self):
        super().__init__("a list of layers", lambda v: isinstance(v, (list, tuple)))


LAYER_LIST = LayerList()
