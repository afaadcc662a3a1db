"""What differs between the configs of finished runs, as legend labels."""

from pathlib import Path

from ..config.bounded_yaml import read_yaml
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


def run_labels(run_dirs: list[Path]) -> list[str]:
    """A legend label per run from the config keys whose values differ, e.g. ``lr=0.1``.
    Keys are shortened to their last part when that stays unambiguous; when more than three
    keys differ, the run folders' names are used instead."""
    configs = []
    for d in run_dirs:
        path = Path(d) / "config.yaml"
        try:
            raw = read_yaml(path) if path.is_file() else {}
        except ConfigError:
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
