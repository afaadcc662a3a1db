"""The end of a run in any state: model.npz, metrics.csv, the plots, samples.txt (text data) and
summary.json (written last), and the final line that says which weights the test metrics come from.
"""

import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .. import files
from ..errors import MachineError, TrainingWarning, what_was_raised
from ..predict.model_file import save_model
from ..predict.model_info import ModelInfo
from ..readable import readable
from ..training.evaluation import class_labels, evaluate, model_outputs
from ..training.experiment import Experiment
from ..training.learning_check import LearningCheck
from ..training.trainer import Trainer
from .interruptions import signals_held
from .metrics import write_metrics
from .regression_plots import write_regression_plots
from .run_warnings import collect_warnings

# Rows per chunk when the decision boundary's grid (90,000 points) is predicted. A 2-feature model
# is usually narrow, and a product as small as 256 x 32 x 32 stays on one BLAS thread; at the
# usual 2048 rows OpenBLAS splits each product across threads, and on a busy machine every one of
# them waits for a second core: moons' grid took 0.1-1.4 s at 2048 rows, 0.01 s at 256.
GRID_ROWS = 256


def load_plotting() -> None:
    """Import what drawing a run's figures needs (matplotlib), before training starts: a broken
    installation then fails at once, in one line, not after the training. Signals wait until the
    imports are done (``signals_held``)."""
    try:
        with signals_held():
            # what matplotlib loads only when it first draws: contourf's engine, PIL's image formats
            import contourpy  # noqa: F401
            import PIL.Image

            from ..plots import classes, curves, diagnostics, regression  # noqa: F401
            PIL.Image.preinit()
    except Exception as e:  # ImportError, or whatever a damaged matplotlib raises as it loads
        if isinstance(e.__cause__ or e.__context__, KeyboardInterrupt):  # not held (another thread)
            raise (e.__cause__ or e.__context__) from None
        raise MachineError(f"cannot draw the run's plots: matplotlib does not load ({what_was_raised(e)}); "
                           "reinstall it (pip install --force-reinstall matplotlib)") from None


class PlotFailures:
    """The figures of a run that could not be written, each with why: a run whose plots fail
    still writes its model, metrics and summary, and names what it could not draw."""

    def __init__(self):
        self.failed: list[tuple[str, str]] = []  # (file name, the one-line reason)

    @contextmanager
    def attempt(self, names: str):
        """Draw the figures ``names`` (``loss.png, accuracy.png``) in the ``with`` block; a failure
        is recorded, not raised. Ctrl-C, SIGTERM and SIGHUP wait until the figures are drawn and
        then end the run (a resume draws what is left): a KeyboardInterrupt raised inside
        matplotlib could come out as another error, and be taken for a failure of the figure."""
        try:
            with signals_held():
                yield
        except MachineError as e:  # a full disk, a folder gone: the file is named by the error
            self.failed.append((Path(e.path).name if e.path else names, str(e)))
        except Exception as e:  # matplotlib failing on this figure
            self.failed.append((names, f"cannot draw {names} ({what_was_raised(e)})"))

    def error(self) -> MachineError:
        """The error that ends a run with unwritten figures: the first failure, and what was written."""
        reason = self.failed[0][1]
        more = f"{len(self.failed) - 1} more figures too; " if len(self.failed) > 1 else ""
        return MachineError(f"{reason} ({more}model.npz, metrics.csv and summary.json are written)")


def write_plots(exp: Experiment, history: dict, run_dir: Path, best_epoch: int | None = None,
                restored: bool = False, failures: PlotFailures | None = None) -> None:
    """loss.png and accuracy.png (marking the ``best_epoch``, whose weights the model holds when
    ``restored``), decision_boundary.png and the class plots that fit the run. With
    ``failures``, a figure that cannot be written is recorded there and the others are drawn."""
    if not history.get("epoch"):
        return
    from ..plots import curves as plots

    failures = failures or PlotFailures()
    plots.plot_run_curves(history, run_dir, exp.cfg.name, best_epoch, restored, failures.attempt)
    if exp.loss.classification and exp.data.in_a_plane:
        def predict(X):
            with np.errstate(over="ignore", invalid="ignore"):  # the weights of a diverged run may overflow
                return exp.loss.predict(model_outputs(exp.model, X, batch_size=GRID_ROWS))
        with failures.attempt("decision_boundary.png"):
            plots.plot_decision_boundary(predict, exp.data.X_train, class_labels(exp.data.y_train),
                                         run_dir / "decision_boundary.png",
                                         f"{exp.cfg.name}: decision boundary (training points)",
                                         exp.data.class_names_or_numbers)
    if exp.loss.classification and exp.data.X_test is not None:
        with failures.attempt("confusion.png, mistakes.png"):
            write_class_plots(exp, run_dir)
    if not exp.loss.classification:
        with failures.attempt("predictions.png, fit.png"):
            write_regression_plots(exp, run_dir)



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



def finish(run, status: str, started: float, warned: list[TrainingWarning], reason: str | None = None,
           learning: LearningCheck | None = None) -> dict:
    """Write model.npz, metrics.csv, the run's TensorBoard events, plots and summary.json for
    ``run``, the hooks of run.py (its experiment, trainer, folder, lines and events; run.py imports
    this module, not the other way round), in any final ``status``, ended
    for ``reason``; ``warned`` holds the TrainingWarnings the run raised. With ``learning``,
    warn first when the weights the run keeps have not learned."""
    exp, trainer, run_dir, echo = run.exp, run.trainer, run.run_dir, run.echo
    history = trainer.history.columns
    weights = kept_weights(trainer, status)
    if learning and history.get("epoch"):
        with collect_warnings() as late:
            learning.at_end(trainer.history.row(weights["epoch"]), weights_label(weights), history["train_loss"])
        warned = [*warned, *late]
    save_model(exp.model, run_dir / "model.npz", extra={"config_name": exp.cfg.name},
               info=ModelInfo.from_dataset(exp.data, exp.cfg.loss.name, exp.split))
    write_metrics(run_dir, history)
    summary = _summary(exp, trainer, status, reason, weights)
    summary["warnings"] = [{"kind": w.kind, "message": str(w)} for w in warned]
    run.events.rewrite(history, trainer.recorder.rows if trainer.recorder else [], status, summary.get("test"),
                       weights["epoch"])
    failures = PlotFailures()
    write_plots(exp, history, run_dir, trainer.early_stopping.best_epoch, weights["source"] == "best", failures)
    _write_diagnostics(exp, trainer, run_dir, failures)
    if failures.failed:  # a resume draws them again (folder.refuse_complete)
        summary["unwritten"] = [name for name, _ in failures.failed]
    if exp.data.text and status in ("completed", "stopped_early"):
        write_samples(exp, run_dir, echo)
    summary["wall_seconds"] = round(time.perf_counter() - started, 3)
    summary["run_dir"] = str(run_dir)
    files.write_json(run_dir / "summary.json", summary)
    if status in ("completed", "stopped_early"):
        echo(final_line(summary, run_dir, exp.cfg.training.early_stopping.monitor))
        if failures.failed:
            raise failures.error()
    else:
        for _, reason in failures.failed:  # the run ends on its own error (diverged, interrupted)
            echo(reason)
    return summary


def _summary(exp: Experiment, trainer: Trainer, status: str, reason: str | None, weights: dict) -> dict:
    """What summary.json says of the training: how it ended, its best and last metrics, the
    weights model.npz keeps and, but for a run that diverged, their test metrics."""
    history, stopping = trainer.history.columns, trainer.early_stopping
    summary = {
        "name": exp.cfg.name,
        "seed": exp.cfg.seed,
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
    d = exp.data
    if d.X_test is not None and status != "diverged":
        summary["test"] = evaluate(exp.model, exp.loss, d.X_test, d.y_test)
    return summary


def _write_diagnostics(exp: Experiment, trainer: Trainer, run_dir: Path, failures: PlotFailures) -> None:
    """diagnostics.csv and its figures, for a run that recorded diagnostics."""
    if not (trainer.recorder and trainer.recorder.rows):
        return
    from ..plots import diagnostics as plots_diagnostics
    files.write_text(run_dir / "diagnostics.csv", trainer.recorder.csv())
    with failures.attempt("grad_norms.png, update_ratio.png, activations.png"):
        plots_diagnostics.plot_diagnostics(trainer.recorder.rows, run_dir, exp.cfg.name,
                                           [spec["type"] for spec in exp.model.spec()])


SAMPLES = 20  # items in samples.txt
SAMPLES_SHOWN = 5  # of them, printed at the end of the run


def write_samples(exp: Experiment, run_dir: Path, echo) -> None:
    """samples.txt: SAMPLES items the trained text model generates (seed: the run's, temperature 1),
    the first SAMPLES_SHOWN of them printed."""
    from ..predict.sample import generate

    items = [item.text for item in generate(exp.model, exp.data.vocabulary, SAMPLES, seed=exp.cfg.seed)]
    files.write_text(run_dir / "samples.txt", "".join(f"{text}\n" for text in items))
    echo(f"samples (seed {exp.cfg.seed}, temperature 1; all {SAMPLES} in samples.txt, more with mlp-sample): "
         + ", ".join(items[:SAMPLES_SHOWN]))



def kept_weights(trainer: Trainer, status: str) -> dict:
    """Which weights the model holds at the end: {"source": "best", "epoch": best epoch} when early
    stopping restored them, else {"source": "final", "epoch": the last completed epoch}."""
    stopping = trainer.early_stopping
    if status in ("completed", "stopped_early", "pruned") and stopping.restores:  # fit restored them
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
