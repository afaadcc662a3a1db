"""Reading finished runs back: their summary.json, what differs between their configs (legend
labels, mlp-runs columns), the datasets they trained on, and the best epoch each recorded."""

import json
from pathlib import Path

from ..config.bounded_yaml import read_yaml
from ..config.parse import named_sections
from ..config.schema import keys_that_apply
from ..datasets.load import dataset_label
from ..errors import ConfigError, DataError, short_repr, short_text
from ..files import open_regular
from ..options import is_integer


def flatten(d: dict, prefix: str = "") -> dict:
    """A nested config dict as {dotted key: value}, the keys as ``--set`` names them."""
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def read_configs(run_dirs: list[Path]) -> list[dict]:
    """Each run's config.yaml, flattened to dotted keys; {} for a missing or unreadable one. Only
    the keys that apply to the run's choices (``keys_that_apply``), also of a config.yaml that
    holds every key: a names run has no ``data.noise``, not the default it never used."""
    configs = []
    for d in run_dirs:
        path = Path(d) / "config.yaml"
        try:
            raw = read_yaml(path) if path.is_file() else {}
        except ConfigError:
            raw = {}
        configs.append(flatten(keys_that_apply(named_sections(raw)) if isinstance(raw, dict) else {}))
    return configs


MAX_LABEL = 32  # characters of a legend label; longer descriptions go to the caption
MAX_CAPTION_VALUE = 160  # characters of one run's description in the caption


def differing_keys(configs: list[dict], reserved=()) -> dict[str, str]:
    """{dotted key: its short name} for each config key (but ``name``) whose value differs between
    the flattened ``configs`` that hold it: a key that applies to some runs only (an option of
    one dataset, optimizer or schedule) differs when it differs between those, not because the
    others lack it, as their ``data.name`` (or ``optimizer.name``, ...) already says. The short
    name is the key's last part (``lr``) when the last parts are unambiguous and none is
    ``reserved``, else the whole key."""
    keys = sorted({k for c in configs for k in c} - {"name"})
    differ = [k for k in keys if len({repr(c[k]) for c in configs if k in c}) > 1]
    short = {k: k.rsplit(".", 1)[-1] for k in differ}
    if len(set(short.values())) < len(short) or set(short.values()) & set(reserved):
        short = {k: k for k in differ}
    return short


def run_labels(run_dirs: list[Path]) -> list[str]:
    """A legend label per run, from what differs between the runs' configs (``run_legend``)."""
    return run_legend(run_dirs)[0]


def run_legend(run_dirs: list[Path]) -> tuple[list[str], str | None]:
    """(a legend label per run, a caption or None): the labels name the config keys whose values
    differ, in a few words (``lr=0.1``; a list of layers as its types and widths, ``layers=[linear
    64, relu, linear]``); keys are shortened to their last part when that stays unambiguous. A
    label longer than MAX_LABEL is cut, or, when cut labels would not tell the runs apart,
    replaced by the depth of the model (``17 layers``) or by ``run 1``, ``run 2``; the caption
    then gives each run's full description. With nothing that differs, or one run, or more than
    three keys differing, the labels are the run folders' names."""
    configs = read_configs(run_dirs)
    short = differing_keys(configs)
    differ = list(short)
    if not differ or len(differ) > 3 or len(run_dirs) == 1:  # too many differences to read as a legend
        return [Path(d).name for d in run_dirs], None
    full = [", ".join(f"{short[k]}={compact(c.get(k))}" for k in differ) for c in configs]
    if all(len(label) <= MAX_LABEL for label in full):
        return full, None
    labels = [label if len(label) <= MAX_LABEL else label[:MAX_LABEL - 3] + "..." for label in full]
    if len(set(labels)) < len(labels):
        depths = [f"{len(c['model.layers'])} layers" if isinstance(c.get("model.layers"), list) else None
                  for c in configs]
        distinct = None not in depths and len(set(depths)) == len(depths)
        labels = depths if distinct else [f"run {i + 1}" for i in range(len(configs))]
    caption = "\n".join(f"{label}: {Path(d).name}: {_cut(text, MAX_CAPTION_VALUE)}"
                         for label, d, text in zip(labels, run_dirs, full))
    return labels, caption


def compact(value) -> str:
    """A config value in a few words: a layer spec as its type and width (``linear 64``), a list
    of them in brackets, anything else as YAML would write it."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(compact(v) for v in value) + "]"
    if isinstance(value, dict) and "type" in value:
        width = value.get("units", value.get("dim", value.get("p")))
        inner = f" {compact(value['layers'])}" if "layers" in value else ""
        return f"{value['type']}{'' if width is None else f' {width}'}{inner}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {compact(v)}" for k, v in value.items()) + "}"
    return str(value)


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 3] + "..."


def run_datasets(run_dirs: list[Path]) -> str:
    """The datasets the runs trained on (``dataset_label``), in order, each once: ``moons``,
    ``digits, iris.csv``; ``unknown data`` when no config says."""
    names = dict.fromkeys(dataset_label(str(c["data.name"]), c.get("data.path"))
                          for c in read_configs(run_dirs) if "data.name" in c)
    return ", ".join(names) or "unknown data"


def run_name(run_dir: Path) -> str:
    """The run's name as its plots were titled (``name`` of its config.yaml), else the folder's name."""
    name = read_configs([run_dir])[0].get("name")
    return str(name) if name not in (None, "") else Path(run_dir).name


def best_epoch(run_dir: Path) -> tuple[int | None, bool]:
    """(best epoch, whether the model holds its weights) from a run's summary.json; (None, False)
    when it is missing, unreadable or from a run that recorded neither."""
    summary = read_summary(Path(run_dir) / "summary.json")
    epoch = summary.get("best_epoch")
    weights = summary.get("weights")
    restored = isinstance(weights, dict) and weights.get("source") == "best"
    return (epoch, restored) if is_integer(epoch) else (None, False)


MAX_SUMMARY_BYTES = 1_000_000  # a summary.json is about 1 kB


def read_summary(path: Path) -> dict:
    """A summary.json's contents, {} when it is missing or not a summary."""
    try:
        return load_summary(path) or {}
    except DataError:
        return {}


def load_summary(path: Path) -> dict | None:
    """A summary.json's contents; None when there is no such file; DataError, naming the file
    and saying briefly why, when it is not a regular file, cannot be read, or is not a JSON
    object of at most MAX_SUMMARY_BYTES."""
    try:
        with open_regular(path, "rb") as f:
            data = f.read(MAX_SUMMARY_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DataError(f"{path}: cannot read it ({e.strerror or e})") from None
    if len(data) > MAX_SUMMARY_BYTES:
        raise DataError(f"{path}: more than {MAX_SUMMARY_BYTES:,} bytes, not a summary")
    try:
        summary = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None
    except ValueError as e:
        raise DataError(f"{path}: not JSON ({short_text(str(e))})") from None
    except RecursionError:
        raise DataError(f"{path}: not a summary (nested too deeply)") from None
    if not isinstance(summary, dict):
        raise DataError(f"{path}: holds {type(summary).__name__} {short_repr(summary)}, not a JSON object")
    return summary
