"""Config files: reading YAML into a Config, and writing a resolved Config back as YAML."""

import dataclasses
import os
from pathlib import Path

import yaml

from .bounded_yaml import read_yaml
from .parse import config_from_dict, plain
from .schema import Config, LossConfig, keys_that_apply


def load_config(path: str | os.PathLike, overrides=()) -> Config:
    """Read and validate a YAML config (within the bounds of ``bounded_yaml``); ``name``
    defaults to the file's stem."""
    path = Path(path)
    raw = read_yaml(path)
    if raw is None:  # an empty or comment-only file: every default
        raw = {}
    if isinstance(raw, dict) and "name" not in raw:
        raw = {"name": path.stem, **raw}
    return config_from_document(raw, path.parent, str(path), overrides)


def config_from_document(raw, folder: Path, source: str, overrides=()) -> Config:
    """Validate a config document whose relative file paths are relative to ``folder``."""
    return config_from_dict(paths_from_folder(raw, folder), source, overrides)


DATA_PATHS = ("path", "val_path", "test_path", "data_dir")  # the keys of ``data`` that name files or folders


def paths_from_folder(raw, folder: Path):
    """``raw`` with every relative path among its ``data`` keys and ``model.init_from`` read from
    ``folder``, the config file's; ``--set`` values, applied later, stay relative to the current folder."""
    if not isinstance(raw, dict):
        return raw
    for section, keys in (("data", DATA_PATHS), ("model", ("init_from",))):
        part = raw.get(section)
        if isinstance(part, dict):
            moved = {k: str(folder / v) for k in keys if isinstance(v := part.get(k), str) and v
                     and not Path(v).is_absolute()}
            raw = {**raw, section: {**part, **moved}}
    return raw


def config_to_dict(cfg: Config) -> dict:
    """The fully resolved config as plain YAML-able types (tuples become lists), with only the
    keys that apply to its choices (``keys_that_apply``: a names dataset has no ``noise``); a
    loss with the settings made beside its name, or with none as the name alone (loss: mse)."""
    raw = plain(dataclasses.asdict(cfg))
    for section in ("optimizer", "schedule"):  # a chosen thing's options sit flat beside the section's keys
        raw[section].update(raw[section].pop("options"))
    defaults = {f.name: f.default for f in dataclasses.fields(LossConfig)}
    raw["loss"] = {k: v for k, v in raw["loss"].items() if k == "name" or v != defaults[k]}  # the settings made
    if len(raw["loss"]) == 1:
        raw["loss"] = cfg.loss.name
    return keys_that_apply(raw)


def with_absolute_paths(cfg: Config) -> Config:
    """``cfg`` with its data file and folder paths and ``model.init_from`` made absolute against
    the current folder."""
    d, m = cfg.data, cfg.model
    fixed = {k: str(Path(v).resolve()) for k in DATA_PATHS if (v := getattr(d, k))}
    model = dataclasses.replace(m, init_from=str(Path(m.init_from).resolve())) if m.init_from else m
    return dataclasses.replace(cfg, data=dataclasses.replace(d, **fixed), model=model).read_from(cfg.source)


def dump_config(cfg: Config) -> str:
    """YAML text of the resolved config; ``load_config`` of it gives back ``cfg``."""
    return yaml.safe_dump(config_to_dict(cfg), sort_keys=False)
