"""Reading finished runs back for plots: what differs between their configs (legend labels),
the datasets they trained on, and the best epoch each recorded."""

import json
from pathlib import Path

from ..config.bounded_yaml import read_yaml
from ..datasets.load import dataset_label
from ..errors import ConfigError


def _flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _configs(run_dirs: list[Path]) -> list[dict]:
    """Each run's config.yaml, flattened to dotted keys; {} for a missing or unreadable one."""
    configs = []
    for d in run_dirs:
        path = Path(d) / "config.yaml"
        try:
            raw = read_yaml(path) if path.is_file() else {}
        except ConfigError:
            raw = {}
        configs.append(_flatten(raw if isinstance(raw, dict) else {}))
    return configs


def run_labels(run_dirs: list[Path]) -> list[str]:
    """A legend label per run from the config keys whose values differ, e.g. ``lr=0.1``.
    Keys are shortened to their last part when that stays unambiguous; when more than three
    keys differ, the run folders' names are used instead."""
    configs = _configs(run_dirs)
    keys = sorted({k for c in configs for k in c} - {"name"})
    differ = [k for k in keys if len({repr(c.get(k)) for c in configs}) > 1]
    short = {k: k.rsplit(".", 1)[-1] for k in differ}
    if len(set(short.values())) < len(short):
        short = {k: k for k in differ}
    if not differ or len(differ) > 3 or len(run_dirs) == 1:  # too many differences to read as a legend
        return [Path(d).name for d in run_dirs]
    return [", ".join(f"{short[k]}={c.get(k)}" for k in differ) for c in configs]


def run_datasets(run_dirs: list[Path]) -> str:
    """The datasets the runs trained on (``dataset_label``), in order, each once: ``moons``,
    ``digits, iris.csv``; ``unknown data`` when no config says."""
    names = dict.fromkeys(dataset_label(str(c["data.name"]), c.get("data.path"))
                          for c in _configs(run_dirs) if "data.name" in c)
    return ", ".join(names) or "unknown data"


def run_name(run_dir: Path) -> str:
    """The run's name as its plots were titled (``name`` of its config.yaml), else the folder's name."""
    name = _configs([run_dir])[0].get("name")
    return str(name) if name not in (None, "") else Path(run_dir).name


def best_epoch(run_dir: Path) -> tuple[int | None, bool]:
    """(best epoch, whether the model holds its weights) from a run's summary.json; (None, False)
    when it is missing, unreadable or from a run that recorded neither."""
    try:
        summary = json.loads((Path(run_dir) / "summary.json").read_text())
    except (OSError, ValueError):
        return None, False
    if not isinstance(summary, dict):
        return None, False
    epoch = summary.get("best_epoch")
    weights = summary.get("weights")
    restored = isinstance(weights, dict) and weights.get("source") == "best"
    return (epoch, restored) if isinstance(epoch, int) and not isinstance(epoch, bool) else (None, False)
