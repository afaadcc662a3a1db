"""A training run from start to finish, and the run folder it leaves behind:

config.yaml, metrics.csv, summary.json, model.npz, loss.png, accuracy.png (classification),
decision_boundary.png (two input features).
"""

import csv
import io
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np

from . import files
from .config import Config, dump_config
from .errors import ConfigError
from .experiment import Experiment, prepare
from .model_file import save_model
from .trainer import Trainer, evaluate

RUN_FILES = ("config.yaml", "metrics.csv", "summary.json", "model.npz", "loss.png", "accuracy.png",
             "decision_boundary.png")
METRIC_ORDER = ("epoch", "lr", "train_loss", "train_acc", "val_loss", "val_acc", "seconds")


def make_run_dir(out: str | None, name: str, overwrite: bool = False) -> Path:
    """Create the run folder: ``out``, or ``runs/<name>-<timestamp>``. A non-empty folder is
    refused unless ``overwrite``, in which case the files of an earlier run are removed."""
    if out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        path = Path("runs") / f"{name}-{stamp}"
        n = 1
        while path.exists():
            n += 1
            path = Path("runs") / f"{name}-{stamp}-{n}"
    else:
        path = Path(out)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"output folder {path} exists and is a file")
    if path.is_dir() and any(path.iterdir()):
        if not overwrite:
            raise ConfigError(f"output folder {path} is not empty; pass --overwrite to replace the run in it")
        for f in RUN_FILES:
            (path / f).unlink(missing_ok=True)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"cannot create output folder {path}: {e.strerror}") from None
    return path


def metrics_csv(history: dict) -> str:
    """metrics.csv text: one row per epoch, known columns first in a fixed order. ``val_loss``
    (and ``val_acc`` for classification) are always present, empty without a validation set."""
    history = dict(history)
    history.setdefault("val_loss", [""] * len(history["epoch"]))
    if "train_acc" in history:
        history.setdefault("val_acc", [""] * len(history["epoch"]))
    keys = [k for k in METRIC_ORDER if k in history] + [k for k in history if k not in METRIC_ORDER]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(keys)
    for i in range(len(history["epoch"])):
        w.writerow([f"{history[k][i]:.6g}" if isinstance(history[k][i], float) else history[k][i] for k in keys])
    return buf.getvalue()


def write_plots(exp: Experiment, history: dict, run_dir: Path) -> None:
    from . import plots

    plots.plot_curves(history, "loss", run_dir / "loss.png", f"{exp.cfg.name}: loss")
    if exp.loss.classification:
        plots.plot_curves(history, "acc", run_dir / "accuracy.png", f"{exp.cfg.name}: accuracy")
        if exp.data.n_features == 2:
            def predict(X):
                exp.model.eval()
                out = exp.model.forward(X)
                return exp.loss.predict(out)
            y = exp.data.y_train if exp.data.y_train.ndim == 1 else exp.data.y_train[:, 0]
            plots.plot_decision_boundary(predict, exp.data.X_train, y.astype(int), run_dir / "decision_boundary.png",
                                         f"{exp.cfg.name}: decision boundary (training points)")


def train_run(cfg: Config, out: str | None = None, overwrite: bool = False,
              echo: Callable[[str], None] = print) -> dict:
    """Prepare, train, and write the run folder. Returns the summary (also in summary.json)."""
    started = time.perf_counter()
    exp = prepare(cfg)
    run_dir = make_run_dir(out, cfg.name, overwrite)
    files.write_text(run_dir / "config.yaml", dump_config(cfg))
    d = exp.data
    echo(f"{cfg.name}: {len(d.X_train)} train / {0 if d.X_val is None else len(d.X_val)} val / "
         f"{0 if d.X_test is None else len(d.X_test)} test samples, {d.n_features} features, "
         f"{exp.model.n_params:,} parameters, {cfg.dtype}")

    def on_epoch(row):
        parts = [f"epoch {row['epoch']:>{len(str(cfg.training.epochs))}}/{cfg.training.epochs}",
                 f"train_loss {row['train_loss']:.4f}"]
        parts += [f"{k} {row[k]:.4f}" for k in ("train_acc", "val_loss", "val_acc") if k in row]
        parts += [f"lr {row['lr']:.3g}", f"{row['seconds']:.2f}s"]
        echo("  ".join(parts))

    trainer = Trainer(exp.model, exp.loss, cfg, exp.train_rng, on_epoch)
    history = trainer.fit(d.X_train, d.y_train, d.X_val, d.y_val).columns
    save_model(exp.model, run_dir / "model.npz", extra={"config_name": cfg.name, "n_classes": d.n_classes,
                                                        "loss": cfg.loss})
    files.write_text(run_dir / "metrics.csv", metrics_csv(history))
    best = trainer.best
    summary = {
        "name": cfg.name,
        "seed": cfg.seed,
        "epochs_run": len(history["epoch"]),
        "stopped_early": trainer.stopped_early,
        "best_epoch": best["epoch"],
        "best": {k: v for k, v in best["metrics"].items() if k not in ("epoch", "seconds")},
        "final": {k: v[-1] for k, v in history.items() if k not in ("epoch", "seconds")},
        "n_params": exp.model.n_params,
    }
    if d.X_test is not None:
        summary["test"] = evaluate(exp.model, exp.loss, d.X_test, d.y_test)
    write_plots(exp, history, run_dir)
    summary["wall_seconds"] = round(time.perf_counter() - started, 3)
    summary["run_dir"] = str(run_dir)
    files.write_json(run_dir / "summary.json", summary)
    monitor = next(k for k in ("val_loss", "train_loss") if k in best["metrics"])
    acc = next((k for k in ("val_acc", "train_acc") if k in best["metrics"]), None)
    line = f"best {monitor} {best['metrics'][monitor]:.4f} at epoch {best['epoch']}"
    if acc:
        line += f" ({acc} {best['metrics'][acc]:.4f})"
    if "test" in summary:
        line += "; test " + ", ".join(f"{k} {v:.4f}" for k, v in summary["test"].items())
    echo(f"{line}; run folder: {run_dir}")
    return summary
