"""From a parsed YAML document to a Config: type coercion, range and choice checks, and
``--set`` overrides applied before the final check.

Every error is a ConfigError naming the key and the file (or ``--set``). Nested keys are
written with dots, as in ``--set optimizer.lr=0.05``.
"""

import dataclasses
import typing

import yaml

from ..datasets.load import LOADERS
from ..errors import ConfigError, short_repr, short_text, unknown_keys
from ..options import find_unknown_keys, validate_options
from .bounded_yaml import LimitExceeded, load_bounded
from .schema import Config, DataConfig, declared_keys, options_registry, other_choices_keys, section_choices


def _build(cls, raw, where: str, source: str):
    """Validate a dict against dataclass ``cls`` and construct it."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: {where or 'the config'} must be a mapping of keys to values, "
                          f"got {short_repr(raw)}")
    hints = typing.get_type_hints(cls)
    prefix = f"{where}." if where else ""
    values = {}  # unknown keys were refused before (``_refuse_unknown_keys``)
    for f in dataclasses.fields(cls):
        if "options_of" in f.metadata:
            values[f.name] = _chosen_options(cls, raw, values, prefix, source)
            continue
        if f.name not in raw:
            continue
        key = prefix + f.name
        if dataclasses.is_dataclass(hints[f.name]):  # a section inside this one
            values[f.name] = _build(hints[f.name], raw[f.name], key, source)
            continue
        try:
            values[f.name] = f.metadata["option"].validate(raw[f.name], key)
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None
    if cls is DataConfig:
        _check_dataset_keys(raw, values, prefix, source)
    return cls(**values)


def _refuse_other_choices(cls, raw: dict, chosen: str, value_of, prefix: str, source: str) -> None:
    """ConfigError for a key of ``raw`` (section ``cls``, naming ``chosen``) that is an option of
    some other thing only (``other_choices_keys``), unless its value (``value_of(key)``) is the
    default of every thing that declares it, as files written by earlier versions hold every key."""
    things, others = section_choices(cls), other_choices_keys(cls, chosen)
    for key in (k for k in raw if k in others):
        owners = [n for n, thing in things.items() if key in getattr(thing, "options", {})]
        if any(things[n].options[key].default != value_of(key) for n in owners):
            raise ConfigError(f"{source}: {prefix}{key} is an option of {_listed(owners)}, not of {chosen} "
                              f"({prefix}name)")


def _chosen_options(cls, raw: dict, values: dict, prefix: str, source: str) -> dict:
    """The options of the thing section ``cls`` names (``values["name"]``, else its default),
    from the keys of ``raw`` that are not the section's own; ConfigError for a key that is an
    option of another choice only."""
    registry = options_registry(cls)
    chosen = values.get("name", next(f.default for f in dataclasses.fields(cls) if f.name == "name"))
    _refuse_other_choices(cls, raw, chosen, raw.get, prefix, source)
    given = {k: v for k, v in raw.items() if k in registry[chosen].options}
    try:
        return validate_options(given, registry[chosen].options, prefix, chosen)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None


def _forget_other_choices(cls, section: dict, name: str) -> None:
    """Drop from ``section`` the keys that the thing ``--set`` now names does not take: options
    the file wrote for the thing it named (a cosine schedule's warmup_epochs, when --set
    schedule.name=constant), which are the file's, not a mistake of the command line."""
    for key in other_choices_keys(cls, name) & set(section):
        del section[key]


def _check_dataset_keys(raw: dict, values: dict, prefix: str, source: str) -> None:
    """ConfigError for a data key that the named dataset does not read (data.arms of moons)."""
    _refuse_other_choices(DataConfig, raw, values.get("name", DataConfig.name), values.get, prefix, source)


def _listed(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def parse_override(text: str) -> tuple[list[str], object]:
    """``optimizer.lr=0.05`` -> (["optimizer", "lr"], 0.05); the value is a YAML scalar."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {short_repr(text)}: expected KEY=VALUE, e.g. optimizer.lr=0.05")
    try:
        parsed = load_bounded(value) if value.strip() else None
    except LimitExceeded as e:
        raise ConfigError(f"--set {short_repr(text)}: the value breaks a limit ({e.problem})") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"--set {short_repr(text)}: the value is not valid YAML ({str(e).splitlines()[0]})") from None
    return key.strip().split("."), parsed


def _apply_override(raw: dict, path: list[str], value, text: str) -> None:
    written = value
    for part in reversed(path):  # the key as a document, {"optimizer": {"lrr": value}}, for the unknown keys
        written = {part: written}
    for prefix, key, hint in find_unknown_keys(written, declared_keys(), tree=declared_keys())[:1]:
        raise ConfigError(f"--set {short_repr(text)}: unknown key '{prefix}{key}'{hint}")
    cls, node = Config, raw
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        where = ".".join(path[:depth + 1])
        if isinstance(node, list):
            if not (part.isascii() and part.isdecimal()) or int(part) >= len(node):
                raise ConfigError(f"--set {short_repr(text)}: {where} is not an index into a list of {len(node)}")
            if last:
                node[int(part)] = value
                return
            if isinstance(node[int(part)], str):
                node[int(part)] = {"type": node[int(part)]}
            node = node[int(part)]
            if not isinstance(node, dict):
                raise ConfigError(f"--set {short_repr(text)}: {where} is {short_repr(node)}, not a layer")
            continue
        if cls is None:  # inside a layer spec: keys are checked when the spec is validated
            if last:
                node[part] = value
                return
            if not isinstance(node.get(part), list):  # only a block's inner layers lie deeper
                raise ConfigError(f"--set {short_repr(text)}: {where} is not a section")
            node = node[part]
            continue
        if last:
            if part == "name" and isinstance(value, str):
                _forget_other_choices(cls, node, value)
            node[part] = value
            return
        tp = typing.get_type_hints(cls).get(part)
        child = node.get(part)
        if dataclasses.is_dataclass(tp):
            if not isinstance(child, dict):
                child = node[part] = {}
            cls, node = tp, child
        elif tp is tuple:
            if child is None:
                child = node[part] = [dict(s) for s in getattr(cls(), part)]
            if not isinstance(child, list):
                raise ConfigError(f"--set {short_repr(text)}: {where} is {short_repr(child)}, not a list")
            cls, node = None, child
        else:
            raise ConfigError(f"--set {short_repr(text)}: {'.'.join(path[:depth + 1])} is a value, not a section")


def plain(value):
    """A deep copy of a document in plain YAML types: dicts, and lists for lists and tuples."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def with_dataset_defaults(raw: dict) -> dict:
    """``raw`` with the defaults of the dataset its ``data.name`` names (a text dataset's 80/10/10
    split, ``config_defaults`` of its loader) for the data keys it does not set."""
    data = raw.get("data")
    data = {} if data is None else data
    name = data.get("name", DataConfig.name) if isinstance(data, dict) else None
    defaults = getattr(LOADERS.get(name) if isinstance(name, str) else None, "config_defaults", None)
    return {**raw, "data": {**defaults, **data}} if defaults else raw


def config_from_dict(raw, source: str = "config", overrides=()) -> Config:
    """Validate a parsed YAML document (plus ``--set`` overrides) into a Config."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a mapping of sections, got {type(raw).__name__}")
    raw = named_sections(plain(raw))  # a copy that overrides can change
    _refuse_unknown_keys(raw, source)  # every unknown key of the file at once
    if overrides:  # before validation: a --set may fix a value of the file
        for text in overrides:
            path, value = parse_override(text)
            _apply_override(raw, path, value, text)
            raw = named_sections(raw)
        source = f"{source} with --set {short_text(' '.join(overrides))}"
        _refuse_unknown_keys(raw, source)  # a --set value may be a section: --set 'training={epochz: 1}'
    return _build(Config, with_dataset_defaults(raw), "", source).read_from(source)


NAMED_SECTIONS = ("loss",)  # sections a name alone may stand for: loss: mse is loss: {name: mse}


def named_sections(raw: dict) -> dict:
    """``raw`` with a name given for a whole named section written as the section."""
    return {k: {"name": v} if k in NAMED_SECTIONS and isinstance(v, str) else v for k, v in raw.items()}


def _refuse_unknown_keys(raw: dict, source: str) -> None:
    """ConfigError naming every unknown key of ``raw`` and of its sections, each with its
    did-you-mean (``options.find_unknown_keys``)."""
    found = find_unknown_keys(raw, declared_keys(), tree=declared_keys())
    if found:
        raise ConfigError(f"{source}: {unknown_keys(found)}")
