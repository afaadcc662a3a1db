"""A run folder's state: creating and holding it (one run per folder), the files a run writes
there, and whether a run in it is complete or can be resumed.

summary.json is the last file a run writes: with a final status it marks a complete run.
"""

import errno
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from ..errors import ConfigError, ModelFileError, machine_error
from ..results.compare import read_summary
from ..training.trainer import Trainer
from .run_lock import LOCK_NAME, claim_run_dir
from .tensorboard import EVENTS_NAME, KEPT_EVENTS

# Every file a run writes, the one list of them: --overwrite removes exactly these from an earlier
# run. A new file goes here too; tests/test_run_files.py fails when a run writes one this lacks.
RUN_FILES = ("config.yaml", "metrics.csv", "summary.json", "model.npz", "checkpoint.npz", "loss.png",
             "accuracy.png", "decision_boundary.png", "diagnostics.csv", "grad_norms.png", "update_ratio.png",
             "activations.png", "lr_find.png", "confusion.png", "mistakes.png", "predictions.png", "fit.png",
             "samples.txt", EVENTS_NAME, KEPT_EVENTS)



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
        if e.errno in (errno.ENOTDIR, errno.EEXIST, errno.ENAMETOOLONG):  # the path given is wrong
            raise ConfigError(f"cannot create output folder {path}: {e.strerror}") from None
        raise machine_error(e, path, "create the output folder") from None  # a read-only or full disk
    with claim_run_dir(path):
        if any(p.name != LOCK_NAME for p in path.iterdir()):
            if not overwrite:
                raise ConfigError(f"output folder {path} is not empty; pass --overwrite to replace the run in it")
            for f in RUN_FILES:
                (path / f).unlink(missing_ok=True)
        yield path


FINAL_STATUSES = ("completed", "stopped_early")


def refuse_complete(run_dir: Path, trainer: Trainer, checkpointed: bool) -> None:
    """ConfigError when the run in ``run_dir`` is complete: its summary.json, written last, has
    a final status, and its training (restored into ``trainer``) is finished, or there is no
    checkpoint to say otherwise. ModelFileError when the checkpoint is past the config's epochs."""
    epochs = trainer.plan.epochs
    if checkpointed and epochs < epochs_done(trainer.epoch, trainer.position):
        raise ModelFileError(f"{run_dir / 'checkpoint.npz'}: the checkpoint is at epoch {trainer.epoch}, beyond the "
                             f"{epochs} epochs of {run_dir / 'config.yaml'}")
    summary = read_summary(run_dir / "summary.json")
    status = summary.get("status")
    if summary.get("unwritten"):  # figures it could not write: the resume draws them again
        return
    if status in FINAL_STATUSES and (trainer.finished or not checkpointed):
        if status == "stopped_early":
            raise ConfigError(f"{run_dir}: the run is complete (it stopped early); nothing to resume. To train on "
                              f"from its weights, start a new run with --init-from {run_dir / 'model.npz'}")
        raise ConfigError(f"{run_dir}: the run is complete (it ran all {epochs} epochs); nothing to resume. "
                          f"To train it longer, pass --epochs N with N > {epochs}")


def epochs_done(epoch: int, position) -> int:
    """Epochs a resumed run has behind it: an interrupted epoch is finished first."""
    return epoch + (1 if position is not None else 0)
