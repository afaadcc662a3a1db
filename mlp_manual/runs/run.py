"""A training run from start to finish, and the run folder it leaves behind:

config.yaml, metrics.csv, summary.json, model.npz, checkpoint.npz, loss.png, accuracy.png
(classification), decision_boundary.png (two input features), confusion.png (classification
with a test split), mistakes.png (image datasets), predictions.png and fit.png (regression; fit
with one input feature), and with diagnostics diagnostics.csv, grad_norms.png, update_ratio.png,
activations.png.

A run holds its folder (run_lock) while it writes there. Training ends with a checkpoint that
says so, and summary.json is the last file written: a run stopped at any moment resumes from
its checkpoint, and one whose training is complete but whose summary.json is missing or stale
writes only its final files again.
"""

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from .. import files
from ..config import Config, dump_config, load_config, with_absolute_paths
from ..errors import ConfigError, ModelFileError, TrainingDiverged, TrainingInterrupted, TrainingWarning
from ..readable import readable
from ..training.diagnostics import Recorder
from ..training.evaluation import class_labels, model_outputs
from ..training.experiment import Experiment, prepare
from ..training.learning_check import Baseline, LearningCheck
from ..training.sanity import check_initial_loss
from ..training.trainer import StepCallback, Trainer, evaluate
from .checkpoint import load_checkpoint, restore, save_checkpoint
from .epoch_log import EpochLog
from .interruptions import ends_named, stop_on_sigint
from .metrics import write_metrics
from .model_file import save_model
from .model_info import ModelInfo
from .regression_plots import write_regression_plots
from .run_lock import LOCK_NAME, claim_run_dir
from .run_warnings import collect_warnings
from .warm_start import warm_start

RUN_FILES = ("config.yaml", "metrics.csv", "summary.json", "model.npz", "checkpoint.npz", "loss.png",
             "accuracy.png", "decision_boundary.png", "diagnostics.csv", "grad_norms.png", "update_ratio.png",
             "activations.png", "lr_find.png", "confusion.png", "mistakes.png", "predictions.png", "fit.png")


@contextmanager
def make_run_dir(out: str | None, name: str, overwrite: bool = False) -> Iterator[Path]:
    """Create the run folder, ``out`` or ``runs/<name>-<timestamp>``, and hold it for the ``with``
    block (``claim_run_dir``). A non-empty folder is refused unless ``overwrite``, in which case
    the files of an earlier run are removed.

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
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"cannot create output folder {path}: {e.strerror}") from None
    with claim_run_dir(path):
        if any(p.name != LOCK_NAME for p in path.iterdir()):
            if not overwrite:
                raise ConfigError(f"output folder {path} is not empty; pass --overwrite to replace the run in it")
            for f in RUN_FILES:
                (path / f).unlink(missing_ok=True)
        yield path


def write_plots(exp: Experiment, history: dict, run_dir: Path, best_epoch: int | None = None,
                restored: bool = False) -> None:
    """loss.png and accuracy.png (marking the ``best_epoch``, whose weights the model holds when
    ``restored``), decision_boundary.png and the class plots that fit the run."""
    if not history.get("epoch"):
        return
    from ..plots import curves as plots

    plots.plot_run_curves(history, run_dir, exp.cfg.name, best_epoch, restored)
    if exp.loss.classification and exp.data.n_features == 2:
        def predict(X):
            return exp.loss.predict(model_outputs(exp.model, X))
        plots.plot_decision_boundary(predict, exp.data.X_train, class_labels(exp.data.y_train),
                                     run_dir / "decision_boundary.png",
                                     f"{exp.cfg.name}: decision boundary (training points)",
                                     exp.data.class_names_or_numbers)
    if exp.loss.classification and exp.data.X_test is not None:
        write_class_plots(exp, run_dir)
    if not exp.loss.classification:
        write_regression_plots(exp, run_dir)  # predictions.png, fit.png


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


def epoch_line(cfg: Config, row: dict) -> str:
    parts = [f"epoch {row['epoch']:>{len(str(cfg.training.epochs))}}/{cfg.training.epochs}",
             f"train_loss {readable(row['train_loss'])}"]
    parts += [f"{k} {readable(row[k])}" for k in ("train_acc", "val_loss", "val_acc") if k in row]
    parts += [f"lr {row['lr']:.3g}", f"{row['seconds']:.2f}s"]
    return "  ".join(parts)


def train_run(cfg: Config, out: str | None = None, overwrite: bool = False,
              echo: Callable[[str], None] = print, log_every: int = 1, on_step: StepCallback | None = None) -> dict:
    """Prepare, train, and write a new run folder (``out``, by default under runs/). Returns the
    summary (also in summary.json). ``cfg.model.init_from`` names a model file whose weights
    start the run. ``echo`` prints every ``log_every``-th epoch line (and the first and last);
    ``on_step`` is the trainer's.

    Raises TrainingDiverged (after saving the last finite weights) and TrainingInterrupted
    (Ctrl-C: after writing the checkpoint when training was under way), each with the
    ``run_dir`` for the caller to report; RunInUse when another process holds the folder.
    Emits a TrainingWarning when the initial loss or (with diagnostics) a gradient or a layer
    looks wrong.
    """
    started = time.perf_counter()
    exp = prepare(cfg)
    init_lines = warm_start(exp.model, exp.data, cfg.model.init_from) if cfg.model.init_from else []
    with make_run_dir(out, cfg.name, overwrite) as run_dir, ends_named(run_dir):
        # with absolute data paths, so that resume, mlp-eval and reruns work from anywhere
        files.write_text(run_dir / "config.yaml", dump_config(with_absolute_paths(cfg)))
        return run_in(exp, run_dir, started, EpochLog(echo, log_every, cfg.training.epochs), on_step,
                      init_lines=init_lines)


def resume_run(run_dir: str, echo: Callable[[str], None] = print, epochs: int | None = None,
               log_every: int = 1, on_step: StepCallback | None = None) -> dict:
    """Continue the run in ``run_dir`` with its saved config, like ``train_run``: from its
    checkpoint, from the first epoch when it was stopped before its first checkpoint, or, when
    its training is complete but summary.json (written last) is missing or stale, only the
    final files. ``epochs`` extends the run to that many epochs in total (its config.yaml is
    rewritten with the new total). A complete run is refused with ConfigError."""
    started = time.perf_counter()
    path = Path(run_dir)
    if not path.is_dir():
        raise ConfigError(f"{path}: not a run folder (no config.yaml)")
    with ends_named(path), claim_run_dir(path):
        if not (path / "config.yaml").is_file():
            raise ConfigError(f"{path}: not a run folder (no config.yaml)")
        saved = path / "checkpoint.npz"
        ckpt = load_checkpoint(saved) if saved.is_file() else None
        if epochs is not None and ckpt is not None:
            meta = ckpt["meta"]
            if epochs < epochs_done(meta["epoch"], meta["epoch_state"]):
                part = " and part of the next" if meta["epoch_state"] else ""
                raise ConfigError(f"{path}: the run has done {meta['epoch']} epochs{part}; --epochs {epochs} would "
                                  "end it before that")
        cfg = load_config(path / "config.yaml", [f"training.epochs={epochs}"] if epochs else [])
        exp = prepare(cfg)
        return run_in(exp, path, started, EpochLog(echo, log_every, cfg.training.epochs), on_step, resume=True,
                      ckpt=ckpt, extended=epochs is not None)


def run_in(exp: Experiment, run_dir: Path, started: float, echo: EpochLog, on_step: StepCallback | None = None,
           resume: bool = False, ckpt: dict | None = None, extended: bool = False, init_lines=()) -> dict:
    """Train in the claimed ``run_dir``, from the state of ``ckpt`` when given, and write the
    final files (``finish``). ``extended``: the resumed run's config has a new epoch total."""
    cfg, d = exp.cfg, exp.data
    recorder = Recorder(cfg.diagnostics) if cfg.diagnostics.enabled else None
    learning = LearningCheck(Baseline.measure(exp), cfg.optimizer.lr)  # before any checkpoint is loaded

    def on_epoch(row):
        echo.epoch(row["epoch"], epoch_line(cfg, row))
        learning.after_epoch(row)

    trainer = Trainer(exp.model, exp.loss, cfg, exp.train_rng, on_epoch, lambda: checkpoint(), recorder, on_step)

    def checkpoint():  # diagnostics first: rows past the checkpoint's step are dropped on resume
        if recorder:
            files.write_text(run_dir / "diagnostics.csv", recorder.csv())
        save_checkpoint(run_dir / "checkpoint.npz", trainer)

    if ckpt is not None:
        restore(trainer, ckpt, run_dir / "checkpoint.npz", len(d.X_train), validation=d.X_val is not None)
    if resume:
        refuse_complete(run_dir, trainer, ckpt is not None)
        (run_dir / "summary.json").unlink(missing_ok=True)  # stale from here on; written last
        if extended:
            files.write_text(run_dir / "config.yaml", dump_config(cfg))
    echo(f"{cfg.name}: {len(d.X_train)} train / {0 if d.X_val is None else len(d.X_val)} val / "
         f"{0 if d.X_test is None else len(d.X_test)} test samples, {d.n_features} features, "
         f"{exp.model.n_params:,} parameters, {cfg.dtype}")
    if ckpt is None:
        echo(exp.model.summary(d.n_features))
        for line in init_lines:
            echo(line)
        if cfg.model.init_from and not resume:
            echo(f"starting from the weights of {cfg.model.init_from}")
    else:
        if recorder and (run_dir / "diagnostics.csv").exists():
            recorder.load_csv((run_dir / "diagnostics.csv").read_text(), before_step=trainer.step_count)
        echo(f"finishing {run_dir}: training is complete, writing its final files" if trainer.finished else
             f"resuming {run_dir} after epoch {trainer.epoch}, step {trainer.step_count}, "
             f"to epoch {cfg.training.epochs}")
    with collect_warnings() as warned:
        try:
            if ckpt is None and not cfg.model.init_from:  # the check is for fresh weights
                check_initial_loss(exp)
            with stop_on_sigint(trainer):
                trainer.fit(d.X_train, d.y_train, d.X_val, d.y_val)
        except TrainingDiverged as e:
            finish(exp, trainer, run_dir, "diverged", started, echo, warned, str(e))
            raise
        except TrainingInterrupted:
            finish(exp, trainer, run_dir, "interrupted", started, echo, warned, "interrupted by the user (SIGINT)")
            raise
    if trainer.stop_requested:  # Ctrl-C after the last step: the finished training is saved, resume finishes it
        raise KeyboardInterrupt
    status, reason = "completed", None
    if trainer.early_stopping.stopped:
        status, reason = "stopped_early", trainer.early_stopping.stop_message(trainer.history.last())
        echo(reason)
    return finish(exp, trainer, run_dir, status, started, echo, warned, reason, learning)


FINAL_STATUSES = ("completed", "stopped_early")


def refuse_complete(run_dir: Path, trainer: Trainer, checkpointed: bool) -> None:
    """ConfigError when the run in ``run_dir`` is complete: its summary.json, written last, has
    a final status, and its training (restored into ``trainer``) is finished, or there is no
    checkpoint to say otherwise. ModelFileError when the checkpoint is past the config's epochs."""
    epochs = trainer.cfg.training.epochs
    if checkpointed and epochs < epochs_done(trainer.epoch, trainer.position):
        raise ModelFileError(f"{run_dir / 'checkpoint.npz'}: the checkpoint is at epoch {trainer.epoch}, beyond the "
                             f"{epochs} epochs of {run_dir / 'config.yaml'}")
    status = summary_status(run_dir / "summary.json")
    if status in FINAL_STATUSES and (trainer.finished or not checkpointed):
        if status == "stopped_early":
            raise ConfigError(f"{run_dir}: the run is complete (it stopped early); nothing to resume. To train on "
                              f"from its weights, start a new run with --init-from {run_dir / 'model.npz'}")
        raise ConfigError(f"{run_dir}: the run is complete (it ran all {epochs} epochs); nothing to resume. "
                          f"To train it longer, pass --epochs N with N > {epochs}")


def epochs_done(epoch: int, position) -> int:
    """Epochs a resumed run has behind it: an interrupted epoch is finished first."""
    return epoch + (1 if position is not None else 0)


def summary_status(path: Path) -> str | None:
    """The ``status`` of a summary.json, None when it is missing or not a summary."""
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.loads(f.read(1_000_000))
    except (OSError, ValueError, RecursionError):
        return None
    return summary.get("status") if isinstance(summary, dict) else None


def finish(exp: Experiment, trainer: Trainer, run_dir: Path, status: str, started: float, echo,
           warned: list[TrainingWarning], reason: str | None = None, learning: LearningCheck | None = None) -> dict:
    """Write model.npz, metrics.csv, plots and summary.json for a run in any final state;
    ``warned`` holds the TrainingWarnings the run raised. With ``learning``, warn first when the
    weights the run keeps have not learned."""
    cfg, d = exp.cfg, exp.data
    history = trainer.history.columns
    weights = kept_weights(trainer, status)
    if learning and history.get("epoch"):
        with collect_warnings() as late:
            learning.at_end(trainer.history.row(weights["epoch"]), weights_label(weights))
        warned = [*warned, *late]
    save_model(exp.model, run_dir / "model.npz", extra={"config_name": cfg.name},
               info=ModelInfo.from_dataset(d, cfg.loss))
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
        "weights": weights,
    }
    if d.X_test is not None and status != "diverged":
        summary["test"] = evaluate(exp.model, exp.loss, d.X_test, d.y_test)
    summary["warnings"] = [{"kind": w.kind, "message": str(w)} for w in warned]
    write_plots(exp, history, run_dir, stopping.best_epoch, weights["source"] == "best")
    if trainer.recorder and trainer.recorder.rows:
        from ..plots import diagnostics as plots_diagnostics
        files.write_text(run_dir / "diagnostics.csv", trainer.recorder.csv())
        plots_diagnostics.plot_diagnostics(trainer.recorder.rows, run_dir, cfg.name,
                                           [spec["type"] for spec in exp.model.spec()])
    summary["wall_seconds"] = round(time.perf_counter() - started, 3)
    summary["run_dir"] = str(run_dir)
    files.write_json(run_dir / "summary.json", summary)
    if status in ("completed", "stopped_early"):
        echo(final_line(summary, run_dir, cfg.training.early_stopping.monitor))
    return summary


def kept_weights(trainer: Trainer, status: str) -> dict:
    """Which weights the model holds at the end: {"source": "best", "epoch": best epoch} when early
    stopping restored them, else {"source": "final", "epoch": the last completed epoch}."""
    stopping = trainer.early_stopping
    if status in ("completed", "stopped_early") and stopping.restores:
        return {"source": "best", "epoch": stopping.best_epoch}
    return {"source": "final", "epoch": trainer.epoch}


def weights_label(weights: dict) -> str:
    """``weights of epoch 25`` (restored best weights) or ``final weights, epoch 100``."""
    if weights["source"] == "best":
        return f"weights of epoch {weights['epoch']}"
    return f"final weights, epoch {weights['epoch']}"


def final_line(summary: dict, run_dir: Path, monitor: str) -> str:
    """The last line of a run: the best epoch by the monitored metric, then the test metrics or
    else what model.npz holds, each with the epoch of its weights."""
    best = summary["best"]
    if monitor not in best:  # without a validation set the training loss is watched
        monitor = "train_loss"
    line = f"best {monitor} {readable(best[monitor])} at epoch {summary['best_epoch']}"
    other = [k for k in ("val_loss", "val_acc", "train_acc") if k in best and k != monitor]
    if other:
        line += f" ({other[0]} {readable(best[other[0]])})"
    weights = weights_label(summary["weights"])
    if "test" in summary:
        line += f"; test ({weights}): " + ", ".join(f"{k} {readable(v)}" for k, v in summary["test"].items())
    else:
        line += f"; model.npz holds the {weights}"
    return f"{line}; run folder: {run_dir}"
