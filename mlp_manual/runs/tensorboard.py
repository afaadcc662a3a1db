"""A run's history as TensorBoard event files, so that ``tensorboard --logdir runs/`` draws and
compares any set of runs (sweep trials included). Written in plain Python: neither TensorFlow
nor TensorBoard is needed to write them.

``events.out.tfevents.mlp-manual`` in the run folder holds the curves:

- every metrics.csv column but ``epoch`` and ``seconds`` (``train_loss``, ``val_acc``, ``lr``,
  ...) as a scalar of the same name, with the epoch as its step;
- with diagnostics on, each parameter's gradient norm as ``grad_norm/layers.<i>.<key>``, with
  the optimizer step it was recorded at (counted from 1) as its step.

``kept/events.out.tfevents.mlp-manual`` is the run in TensorBoard's HPARAMS tab (a session),
a TensorBoard run of its own, ``<run>/kept``: the run's whole config (dotted keys, as ``--set``
names them) as its hyperparameters and, at the end, the metrics of the weights the run kept
(model.npz's: the best epoch's when early stopping restored them), with that epoch as their
step: its metrics.csv row and the test metrics as ``test_loss``, ``test_acc`` (``test_r2``,
...), then its status: success (completed, stopped early), failure (diverged) or unknown
(interrupted, pruned). HPARAMS shows a session's metrics as the last value of each scalar of
its run and the runs below it: in the run folder's own file those would be the last epoch's.

Both files are rewritten whole, atomically, when a run starts or resumes and when it ends; in
between, the epochs' records are appended to the curves as epochs end (at most once a second),
so that TensorBoard shows a run while it trains. The appended bytes are those the next rewrite
writes at the same place.

The event file's format, written by hand, is event_file.py's.
"""

import time
from pathlib import Path

from .. import files
from ..config.parse import named_sections
from ..config.yaml_file import config_to_dict
from ..errors import MachineError, machine_error
from ..results.compare import flatten
from ..training.trainer import batch_bounds
from .event_file import event, scalars, session_end, session_start

EVENTS_NAME = "events.out.tfevents.mlp-manual"
KEPT_EVENTS = f"kept/{EVENTS_NAME}"  # the HPARAMS session, in a folder of the run folder
APPEND_SECONDS = 1.0  # at most one append a second

class RunEvents:
    """The event file of the run in ``run_dir`` with config ``cfg``, whose epochs have
    ``steps_per_epoch`` optimizer steps. Wall times count from ``start``, the time the run was
    created (its config.yaml's), plus the history's seconds, so a rewrite repeats them exactly."""

    def __init__(self, run_dir: Path, cfg, steps_per_epoch: int, start: float):
        self.path = Path(run_dir) / EVENTS_NAME
        self.kept_path = Path(run_dir) / KEPT_EVENTS
        self.cfg, self.steps_per_epoch, self.start = cfg, steps_per_epoch, start
        self.appending = True  # until an append fails: the rewrite at the end reports a failing disk
        self.encoded: list[bytes] = []  # each epoch's records as written, index = epoch's row in the history
        self.rows_read = 0  # diagnostics rows already in ``encoded``
        self.on_disk = 0  # epochs of ``encoded`` in the file
        self.elapsed = 0.0  # the seconds of the epochs in ``encoded``
        self.last_write = time.monotonic()

    @classmethod
    def of(cls, exp, run_dir: Path) -> "RunEvents":
        """The event file of the run of Experiment ``exp`` in ``run_dir``."""
        steps = len(batch_bounds(len(exp.data.X_train), exp.cfg.training.batch_size))
        try:
            start = (Path(run_dir) / "config.yaml").stat().st_mtime  # when the run was created
        except OSError:
            start = time.time()
        return cls(run_dir, exp.cfg, steps, start)

    def head(self) -> bytes:
        return event(self.start, 0, file_version="brain.Event:2")

    def session(self, history: dict, status: str | None, test: dict | None, kept_epoch: int | None) -> bytes:
        """The HPARAMS session: the config as hyperparameters and, once the run has ended with
        ``status``, the metrics of the weights of epoch ``kept_epoch`` (its history row and
        ``test``) and the end."""
        hparams = flatten(named_sections(config_to_dict(self.cfg)))
        data = self.head() + event(self.start, 0, session_start(hparams, self.start))
        if not status:
            return data
        wall = self.start + self.elapsed  # the seconds of every encoded epoch
        epochs = [int(e) for e in history.get("epoch", [])]
        kept = {}
        if kept_epoch in epochs:
            row = epochs.index(kept_epoch)
            kept = {k: v[row] for k, v in history.items() if k not in ("epoch", "seconds")}
        kept.update({f"test_{k}": v for k, v in (test or {}).items()})
        step = kept_epoch or 0
        return data + (event(wall, step, scalars(kept)) if kept else b"") + event(wall, step, session_end(status, wall))

    def epoch_blocks(self, history: dict, rows: list, first: int, elapsed: float) -> tuple[list[bytes], float]:
        """The records of each of the history's epochs from index ``first`` on, each epoch with
        the gradient norms recorded during it (``rows``: a diagnostics Recorder's rows, in the
        order recorded; those of earlier epochs may be left out), and the seconds of the epochs
        up to the last (``elapsed``: those before ``first``; summed one epoch at a time, so the
        wall times are the same however the epochs are encoded)."""
        norms: dict[int, dict[str, float]] = {}  # optimizer step (from 0) -> {tag: norm}
        for step, _, tensor, stat, value in rows:
            if stat == "grad_norm":
                norms.setdefault(step, {})[f"grad_norm/{tensor}"] = value
        blocks = []
        for i in range(first, len(history.get("epoch", []))):
            epoch = int(history["epoch"][i])
            elapsed += history["seconds"][i]
            wall = self.start + elapsed
            values = {k: v[i] for k, v in history.items() if k not in ("epoch", "seconds")}
            block = [event(wall, epoch, scalars(values))]
            for step in sorted(s for s in norms if (s // self.steps_per_epoch) + 1 == epoch):
                block.append(event(wall, step + 1, scalars(norms[step])))
            blocks.append(b"".join(block))
        return blocks, elapsed

    def epoch_records(self, history: dict, rows: list) -> list[bytes]:
        """Each epoch's records; those encoded before are kept (during a run the history and
        the diagnostics rows only grow), and only the rows not yet read are read."""
        epochs = history.get("epoch", [])
        if len(self.encoded) > len(epochs):  # another history: start again
            self.encoded, self.rows_read, self.on_disk, self.elapsed = [], 0, 0, 0.0
        last_step = int(epochs[-1]) * self.steps_per_epoch if epochs else 0  # steps before the next epoch
        new = rows[self.rows_read:]
        ready = next((k for k, r in enumerate(new) if r[0] >= last_step), len(new))  # rows of later epochs wait
        blocks, self.elapsed = self.epoch_blocks(history, new[:ready], len(self.encoded), self.elapsed)
        self.encoded += blocks
        self.rows_read += ready
        return self.encoded

    def rewrite(self, history: dict, rows: list, status: str | None = None, test: dict | None = None,
                kept_epoch: int | None = None) -> None:
        """Write both files whole: the curves of every epoch, and the session, which once the run
        has ended with ``status`` holds the metrics of the weights of epoch ``kept_epoch`` (the
        last one's unless given) and ``test``, the test metrics of those weights."""
        files.write_bytes(self.path, self.head() + b"".join(self.epoch_records(history, rows)))
        self.appending, self.on_disk, self.last_write = True, len(self.encoded), time.monotonic()
        if kept_epoch is None and history.get("epoch"):
            kept_epoch = int(history["epoch"][-1])
        try:
            self.kept_path.parent.mkdir(exist_ok=True)
        except OSError as e:
            raise machine_error(e, self.kept_path.parent, "create") from None
        files.write_bytes(self.kept_path, self.session(history, status, test, kept_epoch))

    def append_epoch(self, history: dict, rows: list) -> None:
        """Add the last epoch of ``history``: its records are appended to the file with those of
        the epochs before it not yet there, once APPEND_SECONDS have passed since the last
        write (TensorBoard itself looks for new data every 5 s), so that short epochs cost one
        write, not one each. Best effort: the run goes on if the file cannot be written (the
        rewrite at the end names what fails), and appends stop until then."""
        self.epoch_records(history, rows)
        if not self.appending or time.monotonic() - self.last_write < APPEND_SECONDS:
            return
        try:
            files.append_bytes(self.path, b"".join(self.encoded[self.on_disk:]))
            self.on_disk, self.last_write = len(self.encoded), time.monotonic()
        except (MachineError, OSError):
            self.appending = False
