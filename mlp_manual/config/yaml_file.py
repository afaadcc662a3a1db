"""Config files: reading YAML into a Config, and writing a resolved Config back as YAML."""

import dataclasses
import os
from pathlib import Path

import yaml

from .bounded_yaml import read_yaml
from .parse import config_from_dict, plain
from .schema import Config


def load_config(path: str | os.PathLike, overrides=()) -> Config:
    """Read and validate a YAML config (within the bounds of ``bounded_yaml``); ``name``
    defaults to the file's stem."""
    path = Path(path)
    raw = read_yaml(path)
    if raw is None:  # an empty or comment-only file: every default
        raw = {}
    if isinstance(raw, dict) and "name" not in raw:
        raw = {"name": path.stem, **raw}
    return config_from_dict(raw, str(path), overrides)


def config_to_dict(cfg: Config) -> dict:
    """The fully resolved config as plain YAML-able types (tuples become lists)."""
    return plain(dataclasses.asdict(cfg))


def with_absolute_paths(cfg: Config) -> Config:
    """``cfg`` with its data file and folder paths made absolute against the current folder."""
    d = cfg.data
    fixed = {k: str(Path(v).resolve()) for k in ("path", "val_path", "test_path", "data_dir") if (v := getattr(d, k))}
    return dataclasses.replace(cfg, data=dataclasses.replace(d, **fixed))


def dump_config(cfg: Config) -> str:
    """YAML text of the resolved config; ``load_config`` of it gives back ``cfg``."""
    return yaml.safe_dump(config_to_dict(cfg), sort_keys=False)
