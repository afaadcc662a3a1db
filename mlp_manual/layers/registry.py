"""The layer registry: for every layer type, its config name, its class, the options a config
may set with their kinds and ranges, its width rule, and how it is built.

Config validation (``check_spec``), ``build_model`` (through ``build_layers``), the model-file
loader, the gradient checker's built-in suite and ``Model.spec`` all ask this table. A new
built-in layer type is its class, which names itself (``type_name`` and its options, in
layers/base.py), found here in the package's modules; ``register`` adds a type at run time,
and ``user_modules.declared_type`` makes the entry of a user's class from its constructor (``--import``). An
option of kind ``LAYER_LIST`` holds nested layer specs (a residual block's), checked, built and
described like the model's own.
"""

import importlib
import pkgutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from ..errors import ConfigError, LayerError, did_you_mean, short_repr, shown_key, what_was_raised
from ..options import Option, find_unknown_keys
from . import user_checks
from .base import Layer
from .options import KEEP, LAYER_LIST, MAX_NESTING, LayerList, Widths  # noqa: F401 (the kind of nested layers)


@dataclass(frozen=True)
class LayerType:
    """One layer type. ``options``: what a config may set besides widths, in the order messages
    list them; ``widths``: its width rule; ``wants``: which of ``rng`` and ``dtype`` its
    constructor takes; ``module``: the user's module that declared it (None for a built-in)."""

    name: str
    cls: type
    options: dict[str, Option] = field(default_factory=dict)
    widths: Widths = KEEP
    wants: tuple[str, ...] = ()
    module: str | None = None

    @property
    def config_options(self) -> dict[str, Option]:
        """Options a config spec may set: the width rule's own (``units``), then the type's."""
        return {**self.widths.options, **self.options}

    def make(self, kwargs: dict, rng, dtype):
        """The layer from constructor arguments (widths and options), handed rng and dtype if it
        wants them."""
        extra = {k: v for k, v in (("rng", rng), ("dtype", dtype)) if k in self.wants}
        if self.module is None:
            return self.cls(**kwargs, **extra)
        try:  # a user's constructor may raise anything; say so in one line
            layer = self.cls(**kwargs, **extra)
        except Exception as e:
            args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
            raise LayerError(f"{self.cls.__name__}({args}) raised {what_was_raised(e)}") from e
        user_checks.check_constructed(layer, self.widths.output(kwargs), kwargs.get(self.widths.input))
        return layer

    def build(self, spec: dict, width: int, rng, dtype, output_width: int | None = None,
              defaults: dict | None = None, where: str = "layer", vocab: int | None = None):
        """The layer a config spec (``{"type": "linear", "units": 8}``) describes, for ``width``
        input features. ``output_width`` goes to the model's last output-sizing layer;
        ``defaults`` are model-wide values (``init``) for options the spec omits, of this type
        and of the layers nested in it; ``vocab`` is the data's vocabulary size (text data).
        A ConfigError starts with ``where`` (``model.layers[1]``)."""
        options = {k: v for k, v in spec.items() if k != "type" and k not in self.widths.options}
        for k, v in options.items():
            if self.options[k].kind.holds_layers:  # inner layers: as wide at both ends as the block
                options[k] = build_layers(v, width, rng, dtype, width, defaults, f"{where}.{k}", nested=True)[0]
        filled = {k: v for k, v in (defaults or {}).items() if k in self.options and k not in options}
        try:
            kwargs = {**self.widths.kwargs(self.name, spec, width, output_width, vocab), **filled, **options}
            layer = self.make(kwargs, rng, dtype)
            if self.module is not None:
                self.check_config(layer, kwargs)
            layer.output_width(width)  # a block refuses a width its inner layers do not give back
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None
        except LayerError as e:
            raise ConfigError(f"{where} ({self.name}): {e}") from None
        return layer

    def check_config(self, layer, kwargs: dict) -> None:
        """LayerError unless ``layer.config()`` gives back the constructor arguments ``kwargs`` it
        was built with, and only arguments of this type, so that a saved model rebuilds it (a
        user's class may not; the built-ins' tests check theirs)."""
        config, known = layer.config(), {*self.widths.names, *self.options}
        if not set(config) <= known or any(k not in config or config[k] != v for k, v in kwargs.items()):
            raise LayerError(f"{type(layer).__name__}.config() returns {config!r}; it must return the constructor "
                             f"arguments the layer was built with, {kwargs!r}, from which a saved model rebuilds it")


def build_layers(specs: list[dict], width: int, rng, dtype, output_width: int | None = None,
                 defaults: dict | None = None, where: str = "model.layers",
                 vocab: int | None = None, nested: bool = False) -> tuple[list, int]:
    """The layers checked config specs describe, ``width`` features flowing into the first; the
    last output-sizing one may leave its width to ``output_width``. ``vocab``: the size of the
    data's vocabulary when the data is text (the first layer then takes its indices); ``nested``:
    the layers are inside a block. Returns the layers and the width they give. Errors name
    ``<where>[<index>]``."""
    last = output_layer(specs)
    layers = []
    for i, spec in enumerate(specs):
        layer_type = _TYPES[spec["type"]]
        if layer_type.cls.takes_indices and (i > 0 or nested):
            raise ConfigError(f"{where}[{i}]: {layer_type.name} takes integer indices, which only the data gives: "
                              "it must be the model's first layer")
        layer = layer_type.build(spec, width, rng, dtype, output_width if i == last else None,
                                 defaults, f"{where}[{i}]", vocab if i == 0 else None)
        layers.append(layer)
        width = layer.output_width(width)
    return layers, width


_TYPES: dict[str, LayerType] = {}
LAYERS: Mapping[str, LayerType] = MappingProxyType(_TYPES)  # read-only, and always current


def register(layer_type: LayerType) -> LayerType:
    """Add a layer type: a ``Layer`` subclass whose name and class are new."""
    if not (isinstance(layer_type.cls, type) and issubclass(layer_type.cls, Layer)):
        raise LayerError(f"cannot register layer type {layer_type.name!r}: {layer_type.cls!r} is not a "
                         "subclass of mlp_manual.Layer")
    for known in _TYPES.values():
        if layer_type.name == known.name or layer_type.cls is known.cls:
            raise LayerError(f"cannot register layer type {layer_type.name!r}: {known.cls.__name__} "
                             f"is already registered as {known.name!r}")
    _TYPES[layer_type.name] = layer_type
    return layer_type


def unregister(name: str) -> None:
    """Remove the layer type ``name``."""
    del _TYPES[name]


def names_code(name) -> str | None:
    """For a type name ``MODULE:CLASS`` of which no type is registered, what to say of it: a config
    or a model file (perhaps one someone sent) that names it names code, which ``--import MODULE``
    would run; else None."""
    module, sep, cls_name = name.partition(":") if isinstance(name, str) else ("", "", "")
    if not (sep and module and cls_name) or name in _TYPES or any(t.module == module for t in _TYPES.values()):
        return None
    return (f"names code, the Python module {module}: import it with --import {module} only if that code "
            f"is yours or you trust it (importing runs it)")


def type_of(layer) -> LayerType | None:
    """The registered type whose class ``layer`` is an instance of (exactly), or None."""
    return next((t for t in _TYPES.values() if type(layer) is t.cls), None)


def layer_spec(layer) -> dict:
    """The JSON description of ``layer`` that rebuilds it: type name, then its ``config()``, the
    layers of an option that holds layers described in turn."""
    t = type_of(layer)
    config = {k: [layer_spec(inner) for inner in v] if t and k in t.options and t.options[k].kind.holds_layers
              else v for k, v in layer.config().items()}
    return {"type": t.name if t else type(layer).__name__, **config}


def input_width(layer) -> int | None:
    """The input features ``layer`` fixes: its width rule's input width, or for a block the
    first one its inner layers fix."""
    t = type_of(layer)
    if t is None:
        return None
    if t.widths.input:
        return layer.config()[t.widths.input]
    return next((w for w in map(input_width, layer.sublayers()) if w is not None), None)


def nested_specs(spec: dict) -> Iterator[tuple[str, list[dict]]]:
    """(option, specs) of each list of layers nested in the checked ``spec`` (a residual block's
    ``layers``). Such layers are built from the block's input width and must give it back
    (``LayerType.build``)."""
    for k, option in _TYPES[spec["type"]].options.items():
        if option.kind.holds_layers and k in spec:
            yield k, spec[k]


def all_specs(specs: list[dict]) -> Iterator[dict]:
    """Every checked spec of ``specs`` and, after each, those nested in it, depth first."""
    for spec in specs:
        yield spec
        for _, inner in nested_specs(spec):
            yield from all_specs(inner)


def output_layer(specs: list[dict]) -> int | None:
    """Index of the spec that may leave its width to the model's output width (the last linear)."""
    return max((i for i, s in enumerate(specs) if _TYPES[s["type"]].widths.takes_output_width), default=None)


def check_spec(spec, where: str) -> dict:
    """Normalise a config layer spec, ``relu`` or ``{type: linear, units: 8}``, to a checked
    dict; ConfigError names ``where`` (``model.layers[1]``) and the option at fault."""
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict) or "type" not in spec:
        raise ConfigError(f"{where} must be a layer name or a mapping with a 'type' key, got {short_repr(spec)}")
    t = spec["type"]
    if code := names_code(t):
        raise ConfigError(f"{where}: layer type {t!r} {code}")
    if not isinstance(t, str) or t not in _TYPES:
        raise ConfigError(f"{where}: unknown layer type {short_repr(t)}{did_you_mean(str(t), _TYPES)}; "
                          f"valid types: {', '.join(_TYPES)}")
    allowed = _TYPES[t].config_options
    for _, k, hint in find_unknown_keys({k: v for k, v in spec.items() if k != "type"}, allowed)[:1]:
        raise ConfigError(f"{where}: unknown option {shown_key(k)} for {t}{hint}; {t} takes: "
                          f"{', '.join(allowed) or 'no options'}")
    checked = dict(spec)
    for k, v in spec.items():
        if k == "type":
            continue
        checked[k] = allowed[k].validate(v, f"{where}.{k}")
        if allowed[k].kind.holds_layers:
            checked[k] = inner_specs(checked[k], f"{where}.{k}")
    return checked


def inner_specs(specs, where: str) -> list[dict]:
    """A block's inner layer specs, each checked (``check_spec``); ``where`` is the path to them,
    one [index] per enclosing list."""
    if where.count("[") > MAX_NESTING:
        raise ConfigError(f"{where}: blocks nest more than {MAX_NESTING} deep")
    return [check_spec(s, f"{where}[{j}]") for j, s in enumerate(specs)]


class _Classes(Mapping):
    """Config name -> class, a read-only view of the registry."""

    def __getitem__(self, name: str) -> type:
        return _TYPES[name].cls

    def __iter__(self) -> Iterator[str]:
        return iter(_TYPES)

    def __len__(self) -> int:
        return len(_TYPES)


LAYER_TYPES: Mapping[str, type] = _Classes()

def builtin_types() -> list[LayerType]:
    """The layer types of this package, by name: every ``Layer`` subclass in a module of
    ``mlp_manual/layers`` that names its type (``type_name``, with its options, width rule and
    wants beside it in the class), so that a new layer type is its module alone. The modules
    named ``user_*`` are not searched: they load and check users' layers, above this registry."""
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if not module.name.startswith("user_"):
            importlib.import_module(f"{__package__}.{module.name}")
    found, todo = [], [Layer]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if vars(cls).get("type_name") and cls.__module__.startswith(f"{__package__}."):
            found.append(LayerType(cls.type_name, cls, cls.type_options, cls.type_widths, cls.type_wants))
    return sorted(found, key=lambda t: t.name)


for _builtin in builtin_types():
    register(_builtin)
