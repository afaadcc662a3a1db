"""Run configuration: typed, frozen dataclasses loaded from YAML and validated.

Every key has a default; an unknown key, a wrong type or an out-of-range value raises
ConfigError naming the key and the file (or ``--set``). Nested keys are written with dots,
as in ``--set optimizer.lr=0.05``.
"""

import dataclasses
import difflib
import math
import os
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .errors import ConfigError
from .init import init_names

DATASET_NAMES = ("xor", "moons", "circles", "spirals", "blobs", "sine", "csv",
                 "digits", "mnist1d", "mnist", "fashion_mnist")
LOSS_NAMES = ("softmax_cross_entropy", "bce_with_logits", "mse")
OPTIMIZER_NAMES = ("sgd", "rmsprop", "adam", "adamw")
SCHEDULE_NAMES = ("constant", "step", "exponential", "cosine")


def _opt(default, *, check=None, must="", choices=None):
    """A field with a default and an optional range check or list of choices."""
    return field(default=default, metadata={"check": check, "must": must, "choices": choices})


positive = {"check": lambda v: v > 0, "must": "be > 0"}
non_negative = {"check": lambda v: v >= 0, "must": "be >= 0"}
fraction = {"check": lambda v: 0 <= v < 1, "must": "be in [0, 1)"}


@dataclass(frozen=True)
class DataConfig:
    name: str = _opt("xor", choices=DATASET_NAMES)
    n_samples: int = _opt(300, **positive)  # generated datasets
    noise: float = _opt(0.1, **non_negative)
    copies: int = _opt(1, **positive)  # xor: copies of the four points
    arms: int = _opt(3, check=lambda v: v >= 2, must="be >= 2")  # spirals
    centers: int = _opt(3, check=lambda v: v >= 2, must="be >= 2")  # blobs
    path: str | None = None  # csv file
    val_path: str | None = None  # csv: a validation file of the same layout (instead of val_fraction)
    test_path: str | None = None  # csv: a test file of the same layout (instead of test_fraction)
    target: int | str = -1  # csv: target column, index or header name
    header: bool = True  # csv: the first row holds column names
    delimiter: str = _opt(",", check=lambda v: len(v) == 1, must="be a single character")
    task: str = _opt("classification", choices=("classification", "regression"))  # csv
    val_fraction: float = _opt(0.2, **fraction)
    test_fraction: float = _opt(0.0, **fraction)
    preprocess: str = _opt("none", choices=("none", "scale", "standardize"))
    data_dir: str | None = None  # where mnist / fashion_mnist files live


@dataclass(frozen=True)
class ModelConfig:
    layers: tuple = ({"type": "linear", "units": 16}, {"type": "relu"}, {"type": "linear"})
    init: str = _opt("he_uniform", choices=tuple(init_names()))
    init_from: str | None = None  # a trained model.npz whose weights start the run (mlp-train --init-from)


@dataclass(frozen=True)
class OptimizerConfig:
    name: str = _opt("adam", choices=OPTIMIZER_NAMES)
    lr: float = _opt(0.001, **positive)
    momentum: float = _opt(0.0, **fraction)  # sgd
    nesterov: bool = False  # sgd
    beta1: float = _opt(0.9, **fraction)  # adam, adamw
    beta2: float = _opt(0.999, **fraction)  # adam, adamw
    rho: float = _opt(0.9, **fraction)  # rmsprop
    eps: float = _opt(1e-8, **positive)
    weight_decay: float = _opt(0.0, **non_negative)
    clip_norm: float | None = _opt(None, **positive)
    accumulate: int = _opt(1, **positive)


@dataclass(frozen=True)
class ScheduleConfig:
    name: str = _opt("constant", choices=SCHEDULE_NAMES)
    step_size: int = _opt(10, **positive)  # step: epochs between decays
    gamma: float = _opt(0.1, check=lambda v: 0 < v <= 1, must="be in (0, 1]")  # step, exponential
    warmup_epochs: float = _opt(0.0, **non_negative)  # cosine
    min_lr: float = _opt(0.0, **non_negative)  # cosine


@dataclass(frozen=True)
class EarlyStoppingConfig:
    patience: int = _opt(0, **non_negative)  # epochs without improvement; 0 turns it off
    min_delta: float = _opt(0.0, **non_negative)
    monitor: str = _opt("val_loss", choices=("val_loss", "val_acc"))
    restore_best: bool = True


@dataclass(frozen=True)
class TrainingConfig:
    epochs: int = _opt(100, **positive)
    batch_size: int = _opt(32, **positive)
    shuffle: bool = True
    early_stopping: EarlyStoppingConfig = EarlyStoppingConfig()
    checkpoint_every: int = _opt(1, **non_negative)  # epochs between checkpoints; 0 turns them off


@dataclass(frozen=True)
class DiagnosticsConfig:
    enabled: bool = False
    every: int = _opt(0, **non_negative)  # steps between records; 0 means once per epoch
    vanishing: float = _opt(1e-7, **positive)  # grad norm / weight norm below this is VANISHING
    explode_factor: float = _opt(10.0, check=lambda v: v > 1, must="be > 1")  # jump over the running median
    max_grad_norm: float | None = _opt(None, **positive)  # a grad norm above this is EXPLODING
    dead_fraction: float = _opt(0.5, check=lambda v: 0 < v <= 1, must="be in (0, 1]")


@dataclass(frozen=True)
class Config:
    name: str = "run"
    seed: int = _opt(0, **non_negative)
    dtype: str = _opt("float32", choices=("float32", "float64"))
    data: DataConfig = DataConfig()
    model: ModelConfig = ModelConfig()
    loss: str = _opt("softmax_cross_entropy", choices=LOSS_NAMES)
    optimizer: OptimizerConfig = OptimizerConfig()
    schedule: ScheduleConfig = ScheduleConfig()
    training: TrainingConfig = TrainingConfig()
    diagnostics: DiagnosticsConfig = DiagnosticsConfig()


def _suggest(word: str, options, prefix: str = "") -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean '{prefix}{close[0]}'?)" if close else ""


def _type_name(tp) -> str:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp) if a is not type(None))
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false",
            tuple: "a list"}.get(tp, getattr(tp, "__name__", str(tp)))


_SCIENTIFIC = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _coerce(value, tp, key: str, source: str):
    """Check ``value`` against the annotation ``tp``; return it in canonical form."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return _coerce(value, a, key, source)
            except ConfigError:
                pass
        raise ConfigError(f"{source}: {key} must be {_type_name(tp)}, got {value!r}")
    if dataclasses.is_dataclass(tp):
        return _build(tp, value, key, source)
    if tp is float and isinstance(value, str) and _SCIENTIFIC.fullmatch(value.strip()):
        value = float(value)  # YAML 1.1 reads 1e-3 (no dot) as a string
    ok = {bool: isinstance(value, bool),
          int: isinstance(value, int) and not isinstance(value, bool),
          float: isinstance(value, (int, float)) and not isinstance(value, bool),
          str: isinstance(value, str),
          tuple: isinstance(value, (list, tuple))}[tp]
    if not ok:
        raise ConfigError(f"{source}: {key} must be {_type_name(tp)}, got {value!r}")
    if tp is float and not math.isfinite(value):
        raise ConfigError(f"{source}: {key} must be a finite number, got {value!r}")
    return float(value) if tp is float else tuple(value) if tp is tuple else value


def _build(cls, raw, where: str, source: str):
    """Validate a dict against dataclass ``cls`` and construct it."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: {where or 'the config'} must be a mapping of keys to values, got {raw!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    prefix = f"{where}." if where else ""
    for k in raw:
        if k not in names:
            raise ConfigError(f"{source}: unknown key '{prefix}{k}'" + _suggest(str(k), names, prefix))
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            continue
        key = prefix + f.name
        v = _coerce(raw[f.name], hints[f.name], key, source)
        meta = f.metadata
        if meta.get("choices") and v not in meta["choices"]:
            raise ConfigError(f"{source}: {key} must be one of {', '.join(meta['choices'])}; "
                              f"got {v!r}" + _suggest(str(v), meta["choices"]))
        if meta.get("check") and v is not None and not meta["check"](v):
            raise ConfigError(f"{source}: {key} must {meta['must']}, got {v!r}")
        if key == "model.layers":
            v = tuple(_layer_spec(s, f"model.layers[{i}]", source) for i, s in enumerate(v))
        values[f.name] = v
    return cls(**values)


def _layer_spec(spec, where: str, source: str) -> dict:
    """Normalise ``relu`` or ``{type: linear, units: 8}`` to a checked dict."""
    from .layers import LAYER_TYPES
    from .model import layer_options

    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict) or "type" not in spec:
        raise ConfigError(f"{source}: {where} must be a layer name or a mapping with a 'type' key, got {spec!r}")
    t = spec["type"]
    if not isinstance(t, str) or t not in LAYER_TYPES:
        raise ConfigError(f"{source}: {where}: unknown layer type {t!r}{_suggest(str(t), LAYER_TYPES)}; "
                          f"valid types: {', '.join(LAYER_TYPES)}")
    allowed = layer_options(t)
    for k, v in spec.items():
        if k == "type":
            continue
        if k not in allowed:
            raise ConfigError(f"{source}: {where}: unknown option '{k}' for {t}{_suggest(str(k), allowed)}; "
                              f"{t} takes: {', '.join(allowed) or 'no options'}")
        if k == "units" and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ConfigError(f"{source}: {where}.units must be a positive integer, got {v!r}")
        if k == "init" and v not in init_names():
            raise ConfigError(f"{source}: {where}.init must be one of {', '.join(init_names())}; got {v!r}")
        if k in ("p", "slope", "eps", "momentum") and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise ConfigError(f"{source}: {where}.{k} must be a number, got {v!r}")
        if k == "p" and not 0 <= v < 1:
            raise ConfigError(f"{source}: {where}.p must be in [0, 1), got {v!r}")
        if k == "eps" and not 0 < v < math.inf:
            raise ConfigError(f"{source}: {where}.eps must be > 0, got {v!r}")
        if k == "momentum" and not 0 <= v <= 1:
            raise ConfigError(f"{source}: {where}.momentum must be in [0, 1], got {v!r}")
        if k == "slope" and not math.isfinite(v):
            raise ConfigError(f"{source}: {where}.slope must be a finite number, got {v!r}")
        if k == "bias" and not isinstance(v, bool):
            raise ConfigError(f"{source}: {where}.bias must be true or false, got {v!r}")
    return dict(spec)


def parse_override(text: str) -> tuple[list[str], object]:
    """``optimizer.lr=0.05`` -> (["optimizer", "lr"], 0.05); the value is a YAML scalar."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE, e.g. optimizer.lr=0.05")
    try:
        parsed = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError as e:
        raise ConfigError(f"--set {text!r}: the value is not valid YAML ({str(e).splitlines()[0]})") from None
    return key.strip().split("."), parsed


def _apply_override(raw: dict, path: list[str], value, text: str) -> None:
    cls, node = Config, raw
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        where = ".".join(path[:depth + 1])
        if isinstance(node, list):
            if not (part.isascii() and part.isdecimal()) or int(part) >= len(node):
                raise ConfigError(f"--set {text!r}: {where} is not an index into a list of {len(node)}")
            if last:
                node[int(part)] = value
                return
            if isinstance(node[int(part)], str):
                node[int(part)] = {"type": node[int(part)]}
            node = node[int(part)]
            if not isinstance(node, dict):
                raise ConfigError(f"--set {text!r}: {where} is {node!r}, not a layer")
            continue
        if cls is None:  # inside a layer spec: keys are checked when the spec is validated
            if last:
                node[part] = value
                return
            raise ConfigError(f"--set {text!r}: {where} is not a section")
        names = [f.name for f in dataclasses.fields(cls)]
        if part not in names:
            raise ConfigError(f"--set {text!r}: unknown key '{where}'"
                              + _suggest(part, names, where.rpartition(".")[0] + "." if depth else ""))
        if last:
            node[part] = value
            return
        tp = typing.get_type_hints(cls)[part]
        child = node.get(part)
        if dataclasses.is_dataclass(tp):
            if not isinstance(child, dict):
                child = node[part] = {}
            cls, node = tp, child
        elif tp is tuple:
            if child is None:
                child = node[part] = [dict(s) for s in getattr(cls(), part)]
            if not isinstance(child, list):
                raise ConfigError(f"--set {text!r}: {where} is {child!r}, not a list")
            cls, node = None, child
        else:
            raise ConfigError(f"--set {text!r}: {'.'.join(path[:depth + 1])} is a value, not a section")


def config_from_dict(raw, source: str = "config", overrides=()) -> Config:
    """Validate a parsed YAML document (plus ``--set`` overrides) into a Config."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a mapping of sections, got {type(raw).__name__}")
    raw = yaml.safe_load(yaml.safe_dump(raw))  # a deep copy that overrides can change
    if not overrides:
        return _build(Config, raw, "", source)
    _build(Config, raw, "", source)  # errors in the file are reported against the file
    for text in overrides:
        path, value = parse_override(text)
        _apply_override(raw, path, value, text)
    return _build(Config, raw, "", f"{source} with --set {' '.join(overrides)}")


def load_config(path: str | os.PathLike, overrides=()) -> Config:
    """Read and validate a YAML config; ``name`` defaults to the file's stem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config ({e})") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
    if isinstance(raw, dict) and "name" not in raw:
        raw = {"name": path.stem, **raw}
    return config_from_dict(raw, str(path), overrides)


def config_to_dict(cfg: Config) -> dict:
    """The fully resolved config as plain YAML-able types (tuples become lists)."""
    def plain(v):
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v
    return plain(dataclasses.asdict(cfg))


def with_absolute_paths(cfg: Config) -> Config:
    """``cfg`` with its data file and folder paths and ``model.init_from`` made absolute against the
    current folder."""
    d, m = cfg.data, cfg.model
    fixed = {k: str(Path(v).resolve()) for k in ("path", "val_path", "test_path", "data_dir") if (v := getattr(d, k))}
    model = dataclasses.replace(m, init_from=str(Path(m.init_from).resolve())) if m.init_from else m
    return dataclasses.replace(cfg, data=dataclasses.replace(d, **fixed), model=model)


def dump_config(cfg: Config) -> str:
    """YAML text of the resolved config; ``load_config`` of it gives back ``cfg``."""
    return yaml.safe_dump(config_to_dict(cfg), sort_keys=False)
