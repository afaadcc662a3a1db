"""A training run from start to finish, and the run folder it leaves behind:

config.yaml, metrics.csv, summary.json, model.npz, checkpoint.npz, loss.png, accuracy.png
(classification), decision_boundary.png (two input features), confusion.png (classification
with a test split), mistakes.png (image datasets), and with diagnostics
diagnostics.csv, grad_norms.png, update_ratio.png, activations.png.
"""

import re
import signal
import time
from collections.abc import Callable
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from .. import files
from ..config import Config, dump_config, load_config, with_absolute_paths
from ..errors import ConfigError, TrainingDiverged, TrainingInterrupted, TrainingWarning
from ..training.diagnostics import Recorder
from ..training.evaluation import class_labels, model_outputs
from ..training.experiment import Experiment, prepare
from ..training.sanity import check_initial_loss
from ..training.trainer import Trainer, evaluate
from .checkpoint import load_checkpoint, restore, save_checkpoint
from .metrics import write_metrics
from .model_file import save_model
from .run_warnings import collect_warnings

RUN_FILES = ("config.yaml", "metrics.csv", "summary.json", "model.npz", "checkpoint.npz", "loss.png",
             "accuracy.png", "decision_boundary.png", "diagnostics.csv", "grad_norms.png", "update_ratio.png",
             "activations.png", "lr_find.png", "confusion.png", "mistakes.png")


def make_run_dir(out: str | None, name: str, overwrite: bool = False) -> Path:
    """Create the run folder: ``out``, or ``runs/<name>-<timestamp>``. A non-empty folder is
    refused unless ``overwrite``, in which case the files of an earlier run are removed.

    In the default folder, ``name`` keeps only letters, digits, ``.``, ``_`` and ``-`` (any
    other run of characters, a path separator included, becomes one ``-``), loses its leading
    dots and dashes, and is cut to 80 bytes, so the folder is always one new entry of ``runs/``.
    """
    if out is None:
        safe = re.sub(r"[^\w.-]+", "-", name).lstrip(".-").encode()[:80].decode(errors="ignore") or "run"
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        path = Path("runs") / f"{safe}-{stamp}"
        n = 1
        while path.exists():
            n += 1
            path = Path("runs") / f"{safe}-{stamp}-{n}"
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


def write_plots(exp: Experiment, history: dict, run_dir: Path) -> None:
    """loss.png, accuracy.png, decision_boundary.png and the class plots that fit the run."""
    if not history.get("epoch"):
        return
    from ..plots import curves as plots

    plots.plot_run_curves(history, run_dir, exp.cfg.name)
    if exp.loss.classification and exp.data.n_features == 2:
        def predict(X):
            return exp.loss.predict(model_outputs(exp.model, X))
        plots.plot_decision_boundary(predict, exp.data.X_train, class_labels(exp.data.y_train),
                                     run_dir / "decision_boundary.png",
                                     f"{exp.cfg.name}: decision boundary (training points)")
    if exp.loss.classification and exp.data.X_test is not None:
        write_class_plots(exp, run_dir)


def write_class_plots(exp: Experiment, run_dir: Path) -> None:
    """confusion.png of the test split, and for image datasets mistakes.png."""
    from ..plots import classes as plots_classes
    from ..training.evaluation import evaluate_classes

    d = exp.data
    result = evaluate_classes(exp.model, exp.loss, d.X_test, d.y_test, d.n_classes)
    names = d.class_names_or_numbers
    plots_classes.plot_confusion(result.confusion, names, run_dir / "confusion.png",
                                 f"{exp.cfg.name}: test accuracy {100 * result.accuracy:.2f}%")
    if d.image_shape is not None:
        plots_classes.plot_mistakes(d.X_test, result.y_true, result.y_pred, d.image_shape, names,
                                    run_dir / "mistakes.png", f"{exp.cfg.name}: misclassified test images")


@contextmanager
def stop_on_sigint(trainer: Trainer):
    """While training, Ctrl-C asks the trainer to stop after its current step (a second Ctrl-C
    stops at once)."""
    def handler(signum, frame):
        if trainer.stop_requested:
            raise KeyboardInterrupt
        trainer.stop_requested = True
    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def epoch_line(cfg: Config, row: dict) -> str:
    parts = [f"epoch {row['epoch']:>{len(str(cfg.training.epochs))}}/{cfg.training.epochs}",
             f"train_loss {row['train_loss']:.4f}"]
    parts += [f"{k} {row[k]:.4f}" for k in ("train_acc", "val_loss", "val_acc") if k in row]
    parts += [f"lr {row['lr']:.3g}", f"{row['seconds']:.2f}s"]
    return "  ".join(parts)


def train_run(cfg: Config, out: str | None = None, overwrite: bool = False,
              echo: Callable[[str], None] = print, resume: bool = False) -> dict:
    """Prepare, train, and write the run folder; with ``resume``, continue the run in folder
    ``out`` from its checkpoint. Returns the summary (also in summary.json).

    Raises TrainingDiverged (after saving the last finite weights) and TrainingInterrupted
    (after writing the checkpoint) for the caller to report. Emits a TrainingWarning when the
    initial loss or (with diagnostics) a gradient or a layer looks wrong.
    """
    started = time.perf_counter()
    exp = prepare(cfg)
    run_dir = Path(out) if resume else make_run_dir(out, cfg.name, overwrite)
    ckpt = load_checkpoint(run_dir / "checkpoint.npz") if resume else None
    if not resume:  # with absolute data paths, so that resume, mlp-eval and reruns work from anywhere
        files.write_text(run_dir / "config.yaml", dump_config(with_absolute_paths(cfg)))
    d = exp.data
    recorder = Recorder(cfg.diagnostics) if cfg.diagnostics.enabled else None
    trainer = Trainer(exp.model, exp.loss, cfg, exp.train_rng, lambda row: echo(epoch_line(cfg, row)),
                      lambda: checkpoint(), recorder)

    def checkpoint():
        save_checkpoint(run_dir / "checkpoint.npz", trainer)
        if recorder:
            files.write_text(run_dir / "diagnostics.csv", recorder.csv())

    if resume:
        restore(trainer, ckpt, run_dir / "checkpoint.npz", len(d.X_train), validation=d.X_val is not None)
        stopped = trainer.early_stopping.stopped
        if stopped or (trainer.epoch >= cfg.training.epochs and trainer.position is None):
            why = "it stopped early" if stopped else f"it ran all {cfg.training.epochs} epochs"
            raise ConfigError(f"{run_dir}: the run is complete ({why}); nothing to resume")
    echo(f"{cfg.name}: {len(d.X_train)} train / {0 if d.X_val is None else len(d.X_val)} val / "
         f"{0 if d.X_test is None else len(d.X_test)} test samples, {d.n_features} features, "
         f"{exp.model.n_params:,} parameters, {cfg.dtype}")
    if resume:
        if recorder and (run_dir / "diagnostics.csv").exists():
            recorder.load_csv((run_dir / "diagnostics.csv").read_text(), before_step=trainer.step_count)
        echo(f"resuming {run_dir} after epoch {trainer.epoch}, step {trainer.step_count}")
    else:
        echo(exp.model.summary(d.n_features))
    status = "completed"
    with collect_warnings() as warned:
        try:
            if not resume:
                check_initial_loss(exp)
            with stop_on_sigint(trainer):
                trainer.fit(d.X_train, d.y_train, d.X_val, d.y_val)
            if trainer.early_stopping.stopped:
                status = "stopped_early"
        except TrainingDiverged as e:
            e.run_dir = run_dir
            finish(exp, trainer, run_dir, "diverged", started, echo, warned, str(e))
            raise
        except TrainingInterrupted as e:
            e.run_dir = run_dir
            finish(exp, trainer, run_dir, "interrupted", started, echo, warned, "interrupted by the user (SIGINT)")
            raise
    return finish(exp, trainer, run_dir, status, started, echo, warned)


def finish(exp: Experiment, trainer: Trainer, run_dir: Path, status: str, started: float, echo,
           warned: list[TrainingWarning], reason: str | None = None) -> dict:
    """Write model.npz, metrics.csv, plots and summary.json for a run in any final state;
    ``warned`` holds the TrainingWarnings the run raised."""
    cfg, d = exp.cfg, exp.data
    history = trainer.history.columns
    save_model(exp.model, run_dir / "model.npz", extra={"config_name": cfg.name, "n_classes": d.n_classes,
                                                        "loss": cfg.loss})
    write_metrics(run_dir, history)
    stopping = trainer.early_stopping
    summary = {
        "name": cfg.name,
        "seed": cfg.seed,
        "status": status,
        "stop_reason": reason,
        "epochs_run": len(history.get("epoch", [])),
        "steps": trainer.step_count,
        "stopped_early": stopping.stopped,
        "best_epoch": stopping.best_epoch,
        "best": {k: v for k, v in stopping.best_metrics.items() if k not in ("epoch", "seconds")},
        "final": {k: v[-1] for k, v in history.items() if k not in ("epoch", "seconds")},
        "n_params": exp.model.n_params,
    }
    if d.X_test is not None and status != "diverged":
        summary["test"] = evaluate(exp.model, exp.loss, d.X_test, d.y_test)
    write_plots(exp, history, run_dir)
    if trainer.recorder and trainer.recorder.rows:
        from ..plots import diagnostics as plots_diagnostics
        files.write_text(run_dir / "diagnostics.csv", trainer.recorder.csv())
        plots_diagnostics.plot_diagnostics(trainer.recorder.rows, run_dir, cfg.name)
    summary["wall_seconds"] = round(time.perf_counter() - started, 3)
    summary["run_dir"] = str(run_dir)
    files.write_json(run_dir / "summary.json", summary)
    if status in ("completed", "stopped_early"):
        echo(final_line(summary, run_dir, cfg.training.early_stopping.monitor))
    return summary


def final_line(summary: dict, run_dir: Path, monitor: str) -> str:
    """The last line of a run: the best epoch by the monitored metric, then test metrics."""
    best = summary["best"]
    if monitor not in best:  # without a validation set the training loss is watched
        monitor = "train_loss"
    line = f"best {monitor} {best[monitor]:.4f} at epoch {summary['best_epoch']}"
    other = [k for k in ("val_loss", "val_acc", "train_acc") if k in best and k != monitor]
    if other:
        line += f" ({other[0]} {best[other[0]]:.4f})"
    if "test" in summary:
        line += "; test " + ", ".join(f"{k} {v:.4f}" for k, v in summary["test"].items())
    return f"{line}; run folder: {run_dir}"


def resume_run(run_dir: str, echo: Callable[[str], None] = print) -> dict:
    """Continue the run in ``run_dir`` with its saved config from its checkpoint."""
    path = Path(run_dir)
    if not (path / "config.yaml").is_file():
        raise ConfigError(f"{path}: not a run folder (no config.yaml)")
    if not (path / "checkpoint.npz").is_file():
        raise ConfigError(f"{path}: has no checkpoint.npz to resume from (was training.checkpoint_every 0?)")
    return train_run(load_config(path / "config.yaml"), str(path), echo=echo, resume=True)
