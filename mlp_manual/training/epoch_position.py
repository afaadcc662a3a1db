"""Where training stands inside an epoch, so that an interrupted epoch resumes bit for bit.

N = training samples. Saved in checkpoints as the ``__meta__`` key ``epoch_state`` (null
between epochs) and the array ``epoch_order``.
"""

from dataclasses import dataclass

import numpy as np

from .state_checks import is_count, is_number


@dataclass
class EpochPosition:
    """The epoch's batch order, the next batch to train on, and the sums of the batches done."""

    order: np.ndarray  # (N,) training rows in the order the epoch's batches take them
    next_batch: int = 0
    loss_sum: float = 0.0  # sum over the batches done of batch mean loss * batch rows
    correct: int = 0  # correct predictions in the batches done
    seconds: float = 0.0  # time spent in the epoch before it was interrupted

    META_CHECKS = {
        "epoch_state": (lambda v: v is None or (isinstance(v, dict) and is_count(v.get("next_batch"))
                                                and is_number(v.get("loss_sum")) and is_count(v.get("correct"))
                                                and is_number(v.get("seconds"))), "null or an epoch position"),
    }

    def add_batch(self, loss: float, rows: int, correct: int) -> None:
        """Count a trained batch of ``rows`` rows with mean ``loss`` and ``correct`` right predictions."""
        self.next_batch += 1
        self.loss_sum += loss * rows
        self.correct += correct

    def train_metrics(self, classification: bool) -> dict:
        """train_loss (and train_acc for classification) over the whole epoch."""
        n = len(self.order)
        return {"train_loss": self.loss_sum / n, **({"train_acc": self.correct / n} if classification else {})}

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(checkpoint ``__meta__`` entries, checkpoint arrays) of this position."""
        meta = {"next_batch": self.next_batch, "loss_sum": self.loss_sum, "correct": self.correct,
                "seconds": self.seconds}
        return {"epoch_state": meta}, {"epoch_order": self.order}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray], n_rows: int | None = None,
                   batches: list[tuple[int, int]] | None = None) -> "EpochPosition | None":
        """Inverse of ``state``, from a checkpoint whose ``meta`` passed ``META_CHECKS``; None when
        it was written between epochs. Raises ValueError when the saved order is not one over
        ``n_rows`` training rows (any number of them when None), or when the position does not
        fit the epoch's ``batches`` ((start, stop) rows of each, as ``batch_bounds`` gives them):
        a next batch beyond the last, more correct predictions than rows done, a negative sum."""
        if meta["epoch_state"] is None:
            if "epoch_order" in arrays:
                raise ValueError("the checkpoint has a batch order but no position inside an epoch")
            return None
        order = arrays.get("epoch_order")
        if (order is None or order.ndim != 1 or order.dtype.kind not in "iu"
                or (n_rows is not None and not np.array_equal(np.sort(order), np.arange(n_rows)))):
            raise ValueError("the checkpoint's batch order does not fit the run's training data")
        saved = meta["epoch_state"]
        if batches is not None:
            done = batches[saved["next_batch"] - 1][1] if 0 < saved["next_batch"] <= len(batches) else 0
            if saved["next_batch"] > len(batches):
                raise ValueError(f"the position inside the epoch is batch {saved['next_batch']}, but an epoch "
                                 f"has {len(batches)} batches")
            if saved["correct"] > done:
                raise ValueError(f"the position inside the epoch counts {saved['correct']} correct predictions "
                                 f"in {done} rows")
        if saved["loss_sum"] < 0 or saved["seconds"] < 0:
            raise ValueError("the position inside the epoch has a negative loss sum or time")
        return cls(order, saved["next_batch"], saved["loss_sum"], saved["correct"], saved["seconds"])
