"""The sweep file: which config the trials start from, what they vary, what they are judged by,
and how the search runs.

    name: spirals-width              # the study's name (default: the file's stem)
    base: ../configs/spirals.yaml    # the config trials start from (or ``config:`` inline)
    objective: {metric: val_loss, direction: minimize}
    trials: 40                       # the study's budget over every worker and machine
    sampler: {name: tpe, seed: 0}    # tpe, random or grid
    pruner: {name: median, warmup_epochs: 5}   # median, hyperband or none
    space:
      optimizer.lr: {low: 1.0e-4, high: 0.3, log: true}
      model.layers.0.units: {choices: [16, 32, 64, 128]}
    storage: null                    # a journal file in the sweep folder, or a database URL
    stale_after: 60                  # seconds without a heartbeat before a trial is taken over

A trial's config is the base config with ``--set KEY=VALUE`` for each parameter of the space,
so every key ``--set`` accepts can be searched. Every key, range and choice is checked against
the config's declarations before any trial starts: ``load_sweep`` raises ConfigError naming the
file and the key.
"""

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Config
from ..config.bounded_yaml import read_yaml
from ..config.memory import check_memory
from ..config.yaml_file import config_from_document, paths_from_folder
from ..errors import (
    ConfigError,
    did_you_mean,
    reads_as_key,
    short_repr,
    shown_key,
    unknown_keys,
)
from ..losses import LOSSES
from ..options import FOLDER_NAME, find_unknown_keys, is_integer
from .search import PRUNERS, SAMPLERS
from .space import Param, grid_size
from .urls import database_url

# metric -> the direction that is better; test metrics are refused (``_objective``)
METRICS = {"val_loss": "minimize", "val_acc": "maximize", "train_loss": "minimize", "train_acc": "maximize"}
DIRECTIONS = ("minimize", "maximize")


TOP_KEYS = ("name", "base", "config", "objective", "trials", "sampler", "pruner", "space", "storage", "stale_after")


@dataclass(frozen=True)
class Choice:
    """A sampler or a pruner: its name and its options (every option, defaults filled in)."""

    name: str
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Sweep:
    """A validated sweep file."""

    path: Path
    name: str
    base: dict  # the base config's document, paths absolute (``config_from_document``)
    metric: str
    direction: str
    trials: int
    sampler: Choice
    pruner: Choice
    space: tuple[Param, ...]
    storage: str | None
    stale_after: float

    def trial_config(self, params: dict, name: str) -> Config:
        """The config of a trial with ``params`` (key -> value): the base with ``--set`` of each."""
        sets = [f"{key}={yaml_scalar(value)}" for key, value in params.items()] + [f"name={yaml_scalar(name)}"]
        return config_from_document(self.base, Path("."), f"{self.path} (trial {name})", sets)


def yaml_scalar(value) -> str:
    """``value`` written as a YAML scalar that reads back as the same value (1e-05 as 1.0e-05)."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, float):
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else text
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def load_sweep(path: str | Path) -> Sweep:
    """Read and check the sweep file ``path``; ConfigError for any mistake, naming the key."""
    path = Path(path)
    raw = read_yaml(path, "sweep")
    if not isinstance(raw, dict):  # its text is not shown: a file that is not a sweep file may hold secrets
        raise ConfigError(f"{path}: a sweep file is a mapping of keys (name, base, objective, space, ...), "
                          f"got {type(raw).__name__}")
    _refuse_unknown(raw, TOP_KEYS, path)
    try:  # sweeps/<name>, and the study's name
        name = FOLDER_NAME.check(raw.get("name", path.stem), "name")
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    base = _base(raw, path)
    metric, direction = _objective(raw.get("objective"), path)
    trials = raw.get("trials")  # null: the whole grid, or 20
    if trials is not None and not is_integer(trials, 1):
        raise ConfigError(f"{path}: trials must be an integer >= 1, got {short_repr(trials)}")
    sampler = _choice(raw.get("sampler"), "sampler", SAMPLERS, "tpe", path)
    pruner = _choice(raw.get("pruner"), "pruner", PRUNERS, "median", path)
    space = _space(raw.get("space"), path, base)
    storage = raw.get("storage")
    if storage is not None and (not isinstance(storage, str) or not storage.strip()):
        raise ConfigError(f"{path}: storage must be a database URL or null, got {short_repr(storage)}")
    if storage is not None and "://" in storage:
        try:
            database_url(storage)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None
    stale_after = raw.get("stale_after", 60)
    if isinstance(stale_after, bool) or not isinstance(stale_after, (int, float)) or not 1 <= stale_after <= 86400:
        raise ConfigError(f"{path}: stale_after must be a number of seconds between 1 and 86400, "
                          f"got {short_repr(stale_after)}")
    sweep = Sweep(path, name.strip(), base, metric, direction, trials or 20, sampler, pruner, space, storage,
                  float(stale_after))
    _check_metric(sweep)
    if sampler.name == "grid":
        size = grid_size(space, path)
        if trials is None:
            sweep = dataclasses.replace(sweep, trials=size)
    return sweep


def _base(raw: dict, path: Path) -> dict:
    """The base config's document: ``base:`` a config file (relative to the sweep file) or
    ``config:`` inline; checked as a config."""
    if ("base" in raw) == ("config" in raw):
        raise ConfigError(f"{path}: give the config trials start from as base: FILE or config: {{...}} "
                          "(one of them)")
    if "base" in raw:
        base_path = raw["base"]
        if not isinstance(base_path, str) or not base_path:
            raise ConfigError(f"{path}: base must be the path of a config file, got {short_repr(base_path)}")
        base_path = path.parent / base_path
        document = read_yaml(base_path)
        document = {} if document is None else document
        if isinstance(document, dict):
            document = {"name": base_path.stem, **document}
        folder, source = base_path.parent, str(base_path)
    else:
        document, folder, source = raw["config"], path.parent, f"{path}: config"
        document = {} if document is None else document
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: the config must be a mapping of sections, got {type(document).__name__}")
    config_from_document(document, folder, source)  # every mistake of the base itself, first
    return absolute_document(document, folder)


def absolute_document(document: dict, folder: Path) -> dict:
    """``document`` with its relative file paths made absolute against ``folder``."""
    return paths_from_folder(document, folder.resolve())


def _objective(raw, path: Path) -> tuple[str, str]:
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: objective must be a mapping like {{metric: val_loss, direction: minimize}}, "
                          f"got {short_repr(raw)}")
    _refuse_unknown(raw, ("metric", "direction"), path, "objective.")
    metric = raw.get("metric", "val_loss")
    if isinstance(metric, str) and metric.startswith("test_"):
        raise ConfigError(f"{path}: objective.metric {metric} would choose the parameters on the test split, which "
                          f"then no longer tests them; use {metric.replace('test_', 'val_')} (the test metrics of "
                          "every trial are still in its summary.json and in mlp-sweep status --csv)")
    if not isinstance(metric, str) or metric not in METRICS:
        raise ConfigError(f"{path}: objective.metric must be one of {', '.join(METRICS)}; got {short_repr(metric)}"
                          + _hint(metric, METRICS))
    direction = raw.get("direction", METRICS[metric])
    if direction not in DIRECTIONS:
        raise ConfigError(f"{path}: objective.direction must be minimize or maximize, got {short_repr(direction)}"
                          + _hint(direction, DIRECTIONS))
    return metric, direction


def _choice(raw, section: str, table: dict, default: str, path: Path) -> Choice:
    """A sampler or pruner section: its name from ``table``, and only that name's options."""
    raw = {"name": default} if raw is None else raw
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: {section} must be a mapping like {{name: {default}}}, got {short_repr(raw)}")
    name = raw.get("name", default)
    if not isinstance(name, str) or name not in table:
        raise ConfigError(f"{path}: {section}.name must be one of {', '.join(table)}; got {short_repr(name)}"
                          + _hint(name, table))
    for _, key, hint in find_unknown_keys(raw, {"name": None, **table[name]})[:1]:
        others = [n for n, opts in table.items() if key in opts]
        whose = f" (it is an option of {' and '.join(others)})" if others else hint
        raise ConfigError(f"{path}: unknown option {shown_key(key, f'{section}.')} for the {name} {section} "
                          f"(its options: {', '.join(table[name]) or 'none'}){whose}")
    options = {}
    for key, value in raw.items():
        if key == "name":
            continue
        try:
            options[key] = table[name][key].validate(value, f"{section}.{key}")
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None
    return Choice(name, {key: options.get(key, option.default) for key, option in table[name].items()})


def _space(raw, path: Path, base: dict) -> tuple[Param, ...]:
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"{path}: space must map at least one config key to its range or choices, e.g. "
                          "optimizer.lr: {low: 1.0e-4, high: 0.3, log: true}")
    for key in raw:
        if not reads_as_key(key):
            raise ConfigError(f"{path}: space {shown_key(key)} is not a config key such as optimizer.lr")
    params = tuple(_param(key, value, path) for key, value in raw.items())
    for p in params:  # every value a trial can get, against the config's own checks and this machine's memory
        for value in (p.choices or (p.low, p.high)):
            try:
                cfg = config_from_document(base, Path("."), "the base config", [f"{p.key}={yaml_scalar(value)}"])
                check_memory(cfg)
            except ConfigError as e:
                raise ConfigError(f"{path}: space {p.key}: {e}") from None
    return params


def _param(key: str, raw, path: Path) -> Param:
    where = f"{path}: space {key}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: give a range {{low: L, high: H}} or {{choices: [...]}}, got {short_repr(raw)}")
    _refuse_unknown(raw, ("low", "high", "log", "step", "choices"), where)
    if "choices" in raw:
        if set(raw) != {"choices"}:
            raise ConfigError(f"{where}: choices take no low, high, log or step")
        choices = raw["choices"]
        if not isinstance(choices, list) or not choices:
            raise ConfigError(f"{where}: choices must be a non-empty list, got {short_repr(choices)}")
        for c in choices:
            if not (c is None or isinstance(c, (bool, int, float, str))):
                raise ConfigError(f"{where}: each choice must be a number, a string, true, false or null, "
                                  f"got {short_repr(c)}")
        if len(set(map(repr, choices))) != len(choices):
            raise ConfigError(f"{where}: the choices repeat a value")
        return Param(key, choices=tuple(choices))
    low, high, log, step = raw.get("low"), raw.get("high"), raw.get("log", False), raw.get("step")
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ConfigError(f"{where}: {name} must be a number, got {short_repr(v)}")
    if not low < high:
        raise ConfigError(f"{where}: low ({low}) must be below high ({high})")
    if not isinstance(log, bool):
        raise ConfigError(f"{where}: log must be true or false, got {short_repr(log)}")
    if log and low <= 0:
        raise ConfigError(f"{where}: a log range needs low > 0, got {low}")
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not step > 0:
            raise ConfigError(f"{where}: step must be a number > 0, got {short_repr(step)}")
        if log:
            raise ConfigError(f"{where}: a range takes log or step, not both")
    p = Param(key, low, high, log, step)
    if not p.integer:
        p = Param(key, float(low), float(high), log, None if step is None else float(step))
    return p


def _hint(value, options) -> str:
    """The did-you-mean of a value written as text (a list holding a right name is shown as it is)."""
    return did_you_mean(value, options) if isinstance(value, str) else ""


def _refuse_unknown(raw: dict, known: tuple, where, prefix: str = "") -> None:
    """ConfigError naming the keys of ``raw`` that are not ``known`` (each as ``prefix + key``)."""
    found = find_unknown_keys(raw, dict.fromkeys(known), prefix)
    if found:
        raise ConfigError(f"{where}: {unknown_keys(found)}")


def _check_metric(sweep: Sweep) -> None:
    """The objective's metric must be one the base config's runs report."""
    cfg = config_from_document(sweep.base, Path("."), str(sweep.path))
    d = cfg.data
    if sweep.metric.startswith("val_") and d.val_fraction == 0 and not d.val_path:
        raise ConfigError(f"{sweep.path}: objective.metric {sweep.metric} needs a validation split, and the base "
                          "config has none (data.val_fraction is 0); set data.val_fraction or use train_loss")
    if sweep.metric.endswith("_acc") and not LOSSES[cfg.loss.name].classification:
        raise ConfigError(f"{sweep.path}: objective.metric {sweep.metric} is measured for classification, and the "
                          f"base config's loss is {cfg.loss.name}; use {sweep.metric.replace('_acc', '_loss')}")
    reshaping = [p.key for p in sweep.space if p.key.startswith(("loss.label_smoothing", "loss.class_weights"))]
    if sweep.metric.endswith("_loss") and reshaping:  # they change what a loss value means
        raise ConfigError(f"{sweep.path}: objective.metric {sweep.metric} cannot compare trials that search "
                          f"{reshaping[0]}: it changes the loss itself (a smoothed loss cannot go as low as a plain "
                          f"one); use {sweep.metric.replace('_loss', '_acc')}")
