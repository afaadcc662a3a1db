"""Run folders side by side (``mlp-runs``): one row per run with its name, status, the config
values that differ between the runs, its best and test metrics, epochs and seconds; filtered,
sorted, and grouped with the mean and spread of each metric over the runs of a group (seeds).
"""

import math
import statistics
from pathlib import Path

from ..errors import ConfigError, DataError, did_you_mean, short_repr
from ..options import is_integer, is_number
from .compare import compact, differing_keys, load_summary, read_configs

METRICS = ("val_loss", "val_acc", "train_loss", "train_acc", "test_loss", "test_acc")
HIGHER_IS_BETTER = ("val_acc", "train_acc", "test_acc")


def find_runs(folders: list[Path]) -> list[Path]:
    """Every run folder (a folder with a config.yaml) at or under each of ``folders``, in order
    of path; ConfigError for a folder that does not exist or holds no run."""
    found: dict[Path, None] = {}
    for folder in folders:
        if not folder.is_dir():
            raise ConfigError(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
        runs = [folder] if (folder / "config.yaml").is_file() else \
            sorted({p.parent for p in folder.rglob("config.yaml")}, key=_natural)
        if not runs:
            raise ConfigError(f"{folder}: no run folders in it (a run folder holds a config.yaml)")
        found.update(dict.fromkeys(runs))
    return list(found)


def _natural(path: Path):
    """Sort key that puts trials/2 before trials/10."""
    return [(0, int(part), "") if part.isdecimal() else (1, 0, part) for part in path.parts]


def run_rows(run_dirs: list[Path]) -> tuple[list[dict], list[str], list[str]]:
    """(a row per run, the names of the parameter columns, a line per damaged run): run, name,
    status, each config key whose value differs between the runs (by its last part when that is
    unambiguous), the best epoch's metrics (val_loss, val_acc, or train_* without validation),
    test_loss and test_acc, epochs and seconds. A run without summary.json is ``unfinished``
    (running, or stopped before its end); one whose summary.json cannot be read or holds a value
    of the wrong type is ``damaged``, without metrics, and its line names the file and says why."""
    configs = read_configs(run_dirs)
    short = differing_keys(configs, reserved=("run", "name", "status", "runs", "epochs", "seconds", *METRICS))
    rows, damaged = [], []
    for run_dir, config in zip(run_dirs, configs):
        row = {"run": str(run_dir), "name": _cell(config.get("name", run_dir.name))}
        row.update({name: _cell(config.get(k)) for k, name in short.items()})
        path = run_dir / "summary.json"
        try:
            row.update(_summary_cells(load_summary(path), path))
        except DataError as e:
            row.update({"status": "damaged", **dict.fromkeys((*METRICS, "epochs", "seconds"))})
            damaged.append(str(e))
        rows.append(row)
    return rows, list(short.values()), damaged


def _summary_cells(summary: dict | None, path: Path) -> dict:
    """The status, metrics, epochs and seconds of a run's summary.json (None: there is none);
    DataError naming ``path`` for a value of another type than mlp-train writes."""
    if summary is None:
        return {"status": "unfinished", **dict.fromkeys((*METRICS, "epochs", "seconds"))}

    def value(parent: dict, key: str, where: str, test, kind: str):
        v = parent.get(key)
        if v is not None and not test(v):
            raise DataError(f"{path}: {where} is {short_repr(v)}, not {kind}")
        return v

    def section(key: str) -> dict:
        return value(summary, key, f'"{key}"', lambda v: isinstance(v, dict), "a mapping of metrics") or {}

    def number(parent: dict, key: str, where: str) -> float | None:
        v = value(parent, key, where, is_number, "a number")
        return None if v is None else float(v)

    best, test = section("best"), section("test")
    cells = {"status": value(summary, "status", '"status"', lambda v: isinstance(v, str), "a word") or "unfinished"}
    cells.update({k: number(best, k, f'"best.{k}"') for k in METRICS[:4]})
    cells.update({f"test_{k}": number(test, k, f'"test.{k}"') for k in ("loss", "acc")})
    cells["epochs"] = value(summary, "epochs_run", '"epochs_run"', is_integer, "a whole number")
    cells["seconds"] = number(summary, "wall_seconds", '"wall_seconds"')
    return cells


def _cell(value):
    """A config value in the table: a number or a word as itself, a list or a mapping in a few words."""
    return value if value is None or isinstance(value, (bool, int, float, str)) else compact(value)


def columns_of(rows: list[dict], params: list[str]) -> list[str]:
    """The columns to show: run, name, status, the parameters, the metrics some run has, epochs,
    seconds."""
    metrics = [m for m in METRICS if any(r.get(m) is not None for r in rows)]
    return ["run", "name", "status", *params, *metrics, "epochs", "seconds"]


def _column(key: str, columns: list[str], option: str) -> str:
    """``key`` as a column name: itself, or the column it is the last part of (``lr`` for
    ``optimizer.lr`` when that is the column); else ConfigError with a did-you-mean."""
    if key in columns:
        return key
    tails = [c for c in columns if c.rsplit(".", 1)[-1] == key.rsplit(".", 1)[-1]]
    if len(tails) == 1:
        return tails[0]
    raise ConfigError(f"{option} {key}: not a column of this table ({', '.join(columns)})" + did_you_mean(key, columns))


def filter_rows(rows: list[dict], columns: list[str], conditions: list[str]) -> list[dict]:
    """The rows where every ``KEY=VALUE`` condition holds: the cell as shown equals VALUE, or,
    for a number, equals it as a number."""
    for condition in conditions:
        key, sep, value = condition.partition("=")
        if not sep:
            raise ConfigError(f"--where {condition}: expected KEY=VALUE, e.g. --where status=completed")
        column = _column(key.strip(), columns, "--where")
        rows = [r for r in rows if _matches(r.get(column), value.strip())]
    return rows


def _matches(cell, value: str) -> bool:
    if cell is None:
        return value in ("", "-", "none", "null")
    if str(cell) == value:
        return True
    try:
        return float(cell) == float(value)
    except (TypeError, ValueError):
        return False


def sort_rows(rows: list[dict], columns: list[str], key: str | None, reverse: bool = False) -> list[dict]:
    """Rows sorted by ``key`` (default: the first of val_loss, train_loss shown), best first: up
    for a loss, down for an accuracy; numbers as numbers; runs without a value last."""
    if key is None:
        key = next((m for m in ("val_loss", "train_loss") if m in columns), "run")
    column = _column(key, columns, "--sort")
    descending = column in HIGHER_IS_BETTER or any(column == f"{m}_mean" for m in HIGHER_IS_BETTER)
    present = [r for r in rows if r.get(column) is not None]
    missing = [r for r in rows if r.get(column) is None]
    numeric = all(isinstance(r[column], (int, float)) for r in present)
    present.sort(key=lambda r: r[column] if numeric else str(r[column]), reverse=descending != reverse)
    return present + missing


def group_rows(rows: list[dict], columns: list[str], keys: list[str]) -> tuple[list[dict], list[str]]:
    """One row per combination of the values of ``keys`` (e.g. the learning rate): ``runs``, and
    the mean and the spread (sample standard deviation; 0 for one run) of each metric, epochs and
    seconds over the group's runs (its seeds). Returns (rows, columns)."""
    keys = [_column(k, columns, "--group-by") for k in keys]
    measured = [c for c in columns if c in (*METRICS, "epochs", "seconds")]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(str(r.get(k)) for k in keys), []).append(r)
    out = []
    for values, members in groups.items():
        row = dict(zip(keys, values))
        row["runs"] = len(members)
        for c in measured:
            found = [float(m[c]) for m in members if m.get(c) is not None and math.isfinite(float(m[c]))]
            row[f"{c}_mean"] = statistics.fmean(found) if found else None
            row[f"{c}_std"] = statistics.stdev(found) if len(found) > 1 else 0.0 if found else None
        out.append(row)
    return out, [*keys, "runs", *(f"{c}_{s}" for c in measured for s in ("mean", "std"))]
