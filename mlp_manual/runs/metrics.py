"""metrics.csv, the per-epoch record of a run: written when a run finishes, read back by mlp-plot.

One row per epoch. Columns: epoch, lr, train_loss, train_acc (classification), val_loss,
val_acc (classification), seconds, then any others; the val_ cells are empty without a
validation set. Floats are written with 6 significant digits.
"""

import csv
import io
from pathlib import Path

from .. import files
from ..errors import ConfigError, DataError

METRIC_ORDER = ("epoch", "lr", "train_loss", "train_acc", "val_loss", "val_acc", "seconds")


def metrics_csv(history: dict) -> str:
    """metrics.csv text: one row per epoch, known columns first in a fixed order. ``val_loss``
    (and ``val_acc`` for classification) are always present, empty without a validation set."""
    history = dict(history)
    n = len(history.get("epoch", []))
    history.setdefault("epoch", [])
    history.setdefault("val_loss", [""] * n)
    if "train_acc" in history:
        history.setdefault("val_acc", [""] * n)
    keys = [k for k in METRIC_ORDER if k in history] + [k for k in history if k not in METRIC_ORDER]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(keys)
    for i in range(n):
        w.writerow([f"{history[k][i]:.6g}" if isinstance(history[k][i], float) else history[k][i] for k in keys])
    return buf.getvalue()


def write_metrics(run_dir: Path, history: dict) -> None:
    """Write ``history`` ({column: [value per epoch]}) to ``run_dir``/metrics.csv atomically."""
    files.write_text(Path(run_dir) / "metrics.csv", metrics_csv(history))


def read_metrics(run_dir: Path) -> dict[str, list]:
    """metrics.csv as {column: [values]}; empty cells become None. A file that is not one
    mlp-train wrote (no epoch column, ragged rows, text where numbers belong) is a DataError
    naming the line."""
    path = Path(run_dir) / "metrics.csv"
    if not path.is_file():
        raise ConfigError(f"{run_dir}: not a run folder (no metrics.csv)")
    try:
        with files.open_regular(path, "r", DataError, newline="", encoding="utf-8") as f:
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
