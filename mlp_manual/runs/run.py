"""A training run from start to finish: a new run, or a resumed one, in its folder.

The folder ends with config.yaml, metrics.csv, summary.json, model.npz, checkpoint.npz,
loss.png, accuracy.png (classification), decision_boundary.png (two input features),
confusion.png (classification with a test split), mistakes.png (image datasets),
predictions.png and fit.png (regression; fit with one input feature), samples.txt (text data),
and with diagnostics diagnostics.csv, grad_norms.png, update_ratio.png, activations.png
(folder.py, finish.py).

A run holds its folder (run_lock) while it writes there. Training ends with a checkpoint that
says so, and summary.json is the last file written: a run stopped at any moment resumes from
its checkpoint, and one whose training is complete but whose summary.json is missing or stale
writes only its final files again.
"""

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import files
from ..config import Config, dump_config, load_config, with_absolute_paths
from ..datasets.vocabulary import BOUNDARY
from ..devices import device
from ..errors import ConfigError, Terminated, TrainingDiverged, TrainingInterrupted
from ..process import signal_name
from ..readable import readable
from ..results.warm_start import warm_start
from ..training.diagnostics import Recorder
from ..training.experiment import Experiment, prepare, training_plan
from ..training.learning_check import Baseline, LearningCheck
from ..training.sanity import check_initial_loss
from ..training.trainer import StepCallback, Trainer
from .checkpoint import load_checkpoint, refuse_other_data, restore, save_checkpoint
from .epoch_log import EpochLog
from .finish import finish, load_plotting
from .folder import epochs_done, make_run_dir, refuse_complete
from .interruptions import ends_named, stop_on_signals
from .run_lock import claim_run_dir
from .run_warnings import collect_warnings
from .tensorboard import KEPT_EVENTS, RunEvents


def epoch_line(cfg: Config, row: dict) -> str:
    parts = [f"epoch {row['epoch']:>{len(str(cfg.training.epochs))}}/{cfg.training.epochs}",
             f"train_loss {readable(row['train_loss'])}"]
    parts += [f"{k} {readable(row[k])}" for k in ("train_acc", "val_loss", "val_acc") if k in row]
    parts += [f"lr {row['lr']:.3g}", f"{row['seconds']:.2f}s"]
    return "  ".join(parts)


def data_line(exp: Experiment) -> str:
    """The run's first line: the size of each split, the inputs, the parameters and the dtype."""
    cfg, d = exp.cfg, exp.data
    sizes = [0 if X is None else len(X) for X in (d.X_train, d.X_val, d.X_test)]
    if d.text:
        words = [0 if y is None else int((y == BOUNDARY).sum()) for y in (d.y_train, d.y_val, d.y_test)]
        data = (f"{sizes[0]:,} train / {sizes[1]:,} val / {sizes[2]:,} test examples (characters of "
                f"{words[0]:,} / {words[1]:,} / {words[2]:,} words), context {d.n_features}, "
                f"vocabulary {d.vocabulary.size}")
    else:
        data = f"{sizes[0]} train / {sizes[1]} val / {sizes[2]} test samples, {d.n_features} features"
    return f"{cfg.name}: {data}, {exp.model.n_params:,} parameters, {cfg.dtype}"


# Called with each epoch's row of metrics; returns why training should end there (a sweep pruning
# the run), or None to go on.
EpochWatch = Callable[[dict], str | None]


def train_run(cfg: Config, out: str | None = None, overwrite: bool = False,
              echo: Callable[[str], None] = print, log_every: int | None = 1, on_step: StepCallback | None = None,
              watch: EpochWatch | None = None) -> dict:
    """Prepare, train, and write a new run folder (``out``, by default under runs/). Returns the
    summary (also in summary.json). ``cfg.model.init_from`` names a model file whose weights
    start the run. ``echo`` prints every ``log_every``-th epoch line (and the first and last);
    ``on_step`` is the trainer's; ``watch`` may end the training after an epoch (status
    "pruned", its reason in summary.json).

    Raises TrainingDiverged (after saving the last finite weights) and TrainingInterrupted
    (Ctrl-C: after writing the checkpoint when training was under way), each with the
    ``run_dir`` for the caller to report; RunInUse when another process holds the folder.
    Emits a TrainingWarning when the initial loss or (with diagnostics) a gradient or a layer
    looks wrong.
    """
    started = time.perf_counter()
    device(cfg.device).namespace()  # a device that cannot be used fails before anything is loaded or written
    exp = prepare(cfg)
    init_lines = warm_start(exp.model, exp.data, cfg.model.init_from) if cfg.model.init_from else []
    with make_run_dir(out, cfg.name, overwrite) as run_dir, ends_named(run_dir):
        # with absolute data paths, so that resume, mlp-eval and reruns work from anywhere
        files.write_text(run_dir / "config.yaml", dump_config(with_absolute_paths(cfg)))
        return run_in(exp, run_dir, started, EpochLog(echo, log_every, cfg.training.epochs),
                      Start(init_lines=tuple(init_lines)), on_step, watch)


def resume_run(run_dir: str, echo: Callable[[str], None] = print, epochs: int | None = None,
               log_every: int | None = 1, on_step: StepCallback | None = None,
               watch: EpochWatch | None = None) -> dict:
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
        for folder in (path, (path / KEPT_EVENTS).parent):  # what writes cut short by a kill left behind
            files.remove_temporary_files(folder)
        saved = path / "checkpoint.npz"
        ckpt = load_checkpoint(saved) if saved.is_file() else None
        if epochs is not None and ckpt is not None:
            meta = ckpt["meta"]
            if epochs < epochs_done(meta["epoch"], meta["epoch_state"]):
                part = " and part of the next" if meta["epoch_state"] else ""
                raise ConfigError(f"{path}: the run has done {meta['epoch']} epochs{part}; --epochs {epochs} would "
                                  "end it before that")
        cfg = load_config(path / "config.yaml", [f"training.epochs={epochs}"] if epochs else [])
        device(cfg.device).namespace()  # the device this resume asks for, before anything is written
        exp = prepare(cfg)
        if ckpt is not None:
            refuse_other_data(ckpt, exp.split, saved)
        return run_in(exp, path, started, EpochLog(echo, log_every, cfg.training.epochs),
                      Start(ckpt, resume=True, extended=epochs is not None), on_step, watch)


@dataclass(frozen=True)
class Start:
    """How a run begins in its folder: fresh, or from the state of ``ckpt``; ``resume``: an
    existing run folder goes on; ``extended``: its config has a new epoch total;
    ``init_lines``: what a warm start (model.init_from) reported."""

    ckpt: dict | None = None
    resume: bool = False
    extended: bool = False
    init_lines: tuple = ()


class RunHooks:
    """What the trainer calls in a run: after each epoch (its line, the events, the learning
    check, a sweep's watch) and at each checkpoint (diagnostics.csv first: rows past the
    checkpoint's step are dropped on resume; then checkpoint.npz)."""

    def __init__(self, exp: Experiment, run_dir: Path, echo: EpochLog, events: RunEvents,
                 learning: LearningCheck, watch: EpochWatch | None):
        self.exp, self.run_dir, self.echo, self.events = exp, run_dir, echo, events
        self.learning, self.watch = learning, watch
        self.trainer: Trainer | None = None  # the trainer these hooks serve, set once it is made

    def epoch(self, row: dict) -> None:
        self.echo.epoch(row["epoch"], epoch_line(self.exp.cfg, row))
        recorder = self.trainer.recorder
        self.events.append_epoch(self.trainer.history.columns, recorder.rows if recorder else [])
        self.learning.after_epoch(row)
        if self.watch is not None:
            self.trainer.halted = self.watch(row)

    def checkpoint(self) -> None:
        if self.trainer.recorder:
            files.write_text(self.run_dir / "diagnostics.csv", self.trainer.recorder.csv())
        save_checkpoint(self.run_dir / "checkpoint.npz", self.trainer, self.exp.split)


def run_in(exp: Experiment, run_dir: Path, started: float, echo: EpochLog, start: Start,
           on_step: StepCallback | None = None, watch: EpochWatch | None = None) -> dict:
    """Train in the claimed ``run_dir`` as ``start`` says, and write the final files (``finish``);
    ``watch`` is ``train_run``'s."""
    cfg = exp.cfg
    load_plotting()  # a broken matplotlib fails now, not after the training
    recorder = Recorder(cfg.diagnostics) if cfg.diagnostics.enabled else None
    learning = LearningCheck(Baseline.measure(exp), cfg.optimizer.lr, exp)  # before any checkpoint is loaded
    events = RunEvents.of(exp, run_dir)
    hooks = RunHooks(exp, run_dir, echo, events, learning, watch)
    trainer = hooks.trainer = Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng, hooks.epoch,
                                      hooks.checkpoint, recorder, on_step)
    _begin(exp, trainer, run_dir, start, echo)
    events.rewrite(trainer.history.columns, recorder.rows if recorder else [])
    with collect_warnings() as warned:
        try:
            if start.ckpt is None and not cfg.model.init_from:  # the check is for fresh weights
                check_initial_loss(exp)
            with stop_on_signals(trainer) as request:
                trainer.fit(exp.data.X_train, exp.data.y_train, exp.data.X_val, exp.data.y_val, exp.augment)
        except TrainingDiverged as e:
            finish(hooks, "diverged", started, warned, str(e))
            raise
        except TrainingInterrupted as e:
            e.signum = request.signum
            finish(hooks, "interrupted", started, warned, f"interrupted by {signal_name(e.signum)}")
            raise
    if trainer.stop_requested:  # a signal after the last step: the finished training is saved, resume finishes it
        raise KeyboardInterrupt if request.signum == signal.SIGINT else Terminated(request.signum)
    status, reason = "completed", None
    if trainer.halted is not None:
        status, reason = "pruned", trainer.halted
    elif trainer.early_stopping.stopped:
        status, reason = "stopped_early", trainer.early_stopping.stop_message(trainer.history.last())
        echo(reason)
    return finish(hooks, status, started, warned, reason, learning)


def _begin(exp: Experiment, trainer: Trainer, run_dir: Path, start: Start, echo: EpochLog) -> None:
    """Restore the checkpoint of ``start`` into ``trainer``; for a resumed run refuse a complete
    one and retire its stale summary.json; say what the run starts from."""
    cfg, d = exp.cfg, exp.data
    if start.ckpt is not None:
        restore(trainer, start.ckpt, run_dir / "checkpoint.npz", len(d.X_train), validation=d.X_val is not None)
    if start.resume:
        refuse_complete(run_dir, trainer, start.ckpt is not None)
        (run_dir / "summary.json").unlink(missing_ok=True)  # stale from here on; written last
        if start.extended:
            files.write_text(run_dir / "config.yaml", dump_config(cfg))
    echo(data_line(exp))
    if start.ckpt is None:
        echo(exp.model.summary(d.n_features))
        for line in start.init_lines:
            echo(line)
        if cfg.model.init_from and not start.resume:
            echo(f"starting from the weights of {cfg.model.init_from}")
        return
    if trainer.recorder and (run_dir / "diagnostics.csv").exists():
        with files.open_regular(run_dir / "diagnostics.csv", "r", ConfigError, encoding="utf-8") as f:
            trainer.recorder.load_csv(f.read(), before_step=trainer.step_count)
    echo(f"finishing {run_dir}: training is complete, writing its final files" if trainer.finished else
         f"resuming {run_dir} after epoch {trainer.epoch}, step {trainer.step_count}, to epoch {cfg.training.epochs}")
