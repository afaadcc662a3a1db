"""Reading finished run folders back: their metrics and what differs between their configs."""

import csv
from pathlib import Path

import yaml

from ..errors import ConfigError, DataError


def read_metrics(run_dir: Path) -> dict[str, list]:
    """metrics.csv as {column: [values]}; empty cells become None. A file that is not one
    mlp-train wrote (no epoch column, ragged rows, text where numbers belong) is a DataError
    naming the line."""
    path = Path(run_dir) / "metrics.csv"
    if not path.is_file():
        raise ConfigError(f"{run_dir}: not a run folder (no metrics.csv)")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise DataError(f"{path}: cannot read the metrics ({e})") from None
    if not rows or "epoch" not in rows[0]:
        raise DataError(f"{path}: not a metrics file (its first line has no 'epoch' column)")
    header, rows = rows[0], rows[1:]
    if len(set(header)) != len(header):
        raise DataError(f"{path}: not a metrics file (repeated column names in its first line)")
    if not rows:
        raise ConfigError(f"{path}: holds no epochs")
    columns = {k: [] for k in header}
    for line, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise DataError(f"{path}: line {line} has {len(row)} cells, expected {len(header)}")
        for k, cell in zip(header, row):
            try:
                columns[k].append(float(cell) if cell != "" else None)
            except ValueError:
                raise DataError(f"{path}: line {line}, column {k}: {cell!r} is not a number") from None
    return columns


def _flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def run_labels(run_dirs: list[Path]) -> list[str]:
    """A legend label per run from the config keys whose values differ, e.g. ``lr=0.1``.
    Keys are shortened to their last part when that stays unambiguous; when more than three
    keys differ, the run folders' names are used instead."""
    configs = []
    for d in run_dirs:
        path = Path(d) / "config.yaml"
        try:
            raw = yaml.safe_load(path.read_text()) if path.is_file() else {}
        except yaml.YAMLError:
            raw = {}
        configs.append(_flatten(raw if isinstance(raw, dict) else {}))
    keys = sorted({k for c in configs for k in c} - {"name"})
    differ = [k for k in keys if len({repr(c.get(k)) for c in configs}) > 1]
    short = {k: k.rsplit(".", 1)[-1] for k in differ}
    if len(set(short.values())) < len(short):
        short = {k: k for k in differ}
    if not differ or len(differ) > 3 or len(run_dirs) == 1:  # too many differences to read as a legend
        return [Path(d).name for d in run_dirs]
    return [", ".join(f"{short[k]}={c.get(k)}" for k in differ) for c in configs]
