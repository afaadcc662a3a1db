"""The registry of layer types by config name: the built-in rows of the table (types.py), and
the types registered at run time (``register``; a user's module with ``--import``, through
``user_modules.declared_type``). Config validation (``check_spec``), building
(``build_layers``, ``build_layer``), the model-file loader (``make_layer``) and ``Model.spec``
ask it. An option of kind ``LAYER_LIST`` holds nested layer specs (a residual block's), checked,
built and described like the model's own.
"""

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from ..core import Layer
from ..errors import ConfigError, LayerError, did_you_mean, short_repr, shown_key, what_was_raised
from ..options import find_unknown_keys
from . import user_checks
from .options import MAX_NESTING
from .types import BUILTINS, LayerType

__all__ = ["LayerType", "LAYERS", "LAYER_TYPES", "Build", "register", "unregister", "build_layers", "build_layer",
           "make_layer", "type_of", "output_width", "check_spec"]


def make_layer(layer_type: LayerType, kwargs: dict, rng, dtype):
    """The layer of ``layer_type`` from constructor arguments (widths and options), handed rng and
    dtype if it wants them."""
    extra = {k: v for k, v in (("rng", rng), ("dtype", dtype)) if k in layer_type.wants}
    if layer_type.module is None:
        return layer_type.cls(**kwargs, **extra)
    try:  # a user's constructor may raise anything; say so in one line
        layer = layer_type.cls(**kwargs, **extra)
    except Exception as e:
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        raise LayerError(f"{layer_type.cls.__name__}({args}) raised {what_was_raised(e)}") from e
    user_checks.check_constructed(layer, layer_type.widths.output(kwargs), kwargs.get(layer_type.widths.input))
    return layer


@dataclass(frozen=True)
class Build:
    """What the layers of a model are built with: the generator their weights are drawn from,
    their dtype, model-wide values for options a spec omits (``init``), and the size of the
    data's vocabulary (text data: the rows of a first embedding's table)."""

    rng: object
    dtype: object = np.float32
    defaults: dict = field(default_factory=dict)
    vocab: int | None = None


def build_layer(layer_type: LayerType, spec: dict, width: int, how: Build, output: int | None = None,
                where: str = "layer"):
    """The layer a config spec (``{"type": "linear", "units": 8}``) of ``layer_type`` describes,
    for ``width`` input features, built as ``how`` says; ``output`` (the width the loss needs)
    goes to the model's last output-sizing layer. A ConfigError starts with ``where``
    (``model.layers[1]``)."""
    options = {k: v for k, v in spec.items() if k != "type" and k not in layer_type.widths.options}
    for k, v in options.items():
        if layer_type.options[k].kind.holds_layers:  # inner layers: as wide at both ends as the block
            options[k] = build_layers(v, width, replace(how, vocab=None), width, f"{where}.{k}", nested=True)[0]
    filled = {k: v for k, v in how.defaults.items() if k in layer_type.options and k not in options}
    try:
        kwargs = {**layer_type.widths.kwargs(layer_type.name, spec, width, output, how.vocab), **filled, **options}
        layer = make_layer(layer_type, kwargs, how.rng, how.dtype)
        if layer_type.module is not None:
            check_config(layer_type, layer, kwargs)
        output_width(layer, width)  # a block refuses a width its inner layers do not give back
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None
    except LayerError as e:
        raise ConfigError(f"{where} ({layer_type.name}): {e}") from None
    return layer


def check_config(layer_type: LayerType, layer, kwargs: dict) -> None:
    """LayerError unless ``layer.config()`` gives back the constructor arguments ``kwargs`` it was
    built with, and only arguments of this type, so that a saved model rebuilds it (a user's
    class may not; the built-ins' tests check theirs)."""
    config, known = layer.config(), {*layer_type.widths.names, *layer_type.options}
    if not set(config) <= known or any(k not in config or config[k] != v for k, v in kwargs.items()):
        raise LayerError(f"{type(layer).__name__}.config() returns {config!r}; it must return the constructor "
                         f"arguments the layer was built with, {kwargs!r}, from which a saved model rebuilds it")


def output_width(layer, width: int) -> int:
    """The features ``layer`` gives for ``width`` in: its type's width rule says, a user's layer
    its own ``output_width`` when it has one, and a block its inner layers, which must give the
    width back (LayerError otherwise)."""
    inner = layer.sublayers()
    if inner:
        out = width
        for sub in inner:
            out = output_width(sub, out)
        if out != width:
            raise LayerError(f"the inner layers map {width} features to {out}; out = x + f(x) needs f(x) as wide "
                             f"as x: give the last inner layer {width} units (or leave its units out)")
        return width
    t = type_of(layer)
    if t is not None and t.module is None:
        return t.widths.width_after(layer, width)
    own = getattr(layer, "output_width", None)
    return own(width) if own is not None else width


def build_layers(specs: list[dict], width: int, how: Build, output: int | None = None,
                 where: str = "model.layers", nested: bool = False) -> tuple[list, int]:
    """The layers checked config specs describe, ``width`` features flowing into the first, built
    as ``how`` says (its vocabulary is the first layer's); the last output-sizing one may leave its
    width to ``output``. ``nested``: the layers are inside a block. Returns the layers and the
    width they give. Errors name ``<where>[<index>]``."""
    last = output_layer(specs)
    layers = []
    for i, spec in enumerate(specs):
        layer_type = _TYPES[spec["type"]]
        if layer_type.takes_indices and (i > 0 or nested):
            raise ConfigError(f"{where}[{i}]: {layer_type.name} takes integer indices, which only the data gives: "
                              "it must be the model's first layer")
        layer = build_layer(layer_type, spec, width, how if i == 0 else replace(how, vocab=None),
                            output if i == last else None, f"{where}[{i}]")
        layers.append(layer)
        width = output_width(layer, width)
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


def row_of(layer) -> LayerType:
    """The row of ``layer``'s type: its registered type's, or for a layer of a class no type names
    (a user's layer built by hand in a script) one read from the class: its formulas (its
    ``forward_formula`` and ``backward_formulas``, or its ``# fwd:`` comments) and what its class
    attributes say, and no other part."""
    t = type_of(layer)
    return t if t is not None else _unregistered(type(layer))


@functools.lru_cache(maxsize=None)
def _unregistered(cls: type) -> LayerType:
    return LayerType(cls.__name__, cls, modes_differ=getattr(cls, "modes_differ", False),
                     min_train_rows=getattr(cls, "min_train_rows", 1), takes_indices=getattr(cls, "takes_indices", False))


def units_of(layer):
    """What diagnostics count in ``layer``'s output (types.Units: dead or saturated units), or None."""
    return row_of(layer).units


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

for _builtin in BUILTINS.values():
    register(_builtin)
