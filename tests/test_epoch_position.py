"""The position inside an epoch: its sums, and its checkpoint state, which must round-trip exactly
and refuse a batch order that does not fit the training data."""

import json

import numpy as np
import pytest

from mlp_manual.training.epoch_position import EpochPosition


def test_batches_add_up_to_the_epoch_metrics():
    position = EpochPosition(np.arange(10))
    position.add_batch(0.5, 4, 3)
    position.add_batch(0.25, 6, 5)
    assert position.next_batch == 2 and position.loss_sum == 0.5 * 4 + 0.25 * 6 and position.correct == 8
    assert position.train_metrics(classification=True) == {"train_loss": 0.35, "train_acc": 0.8}
    assert position.train_metrics(classification=False) == {"train_loss": 0.35}


def test_state_round_trips_exactly_through_json_and_arrays():
    position = EpochPosition(np.random.default_rng(0).permutation(7), seconds=0.125)
    position.add_batch(0.1 + 0.2, 3, 2)  # a sum that is not short in decimal
    meta, arrays = position.state()
    assert set(meta) == {"epoch_state"} and set(arrays) == {"epoch_order"}
    meta = json.loads(json.dumps(meta))  # as a checkpoint's __meta__ holds it
    assert all(ok(meta[key]) for key, (ok, _) in EpochPosition.META_CHECKS.items())
    back = EpochPosition.from_state(meta, {k: v.copy() for k, v in arrays.items()}, n_rows=7)
    assert np.array_equal(back.order, position.order)
    assert (back.next_batch, back.loss_sum, back.correct, back.seconds) == (1, position.loss_sum, 2, 0.125)


def test_a_checkpoint_written_between_epochs_has_no_position():
    assert EpochPosition.from_state({"epoch_state": None}, {}, n_rows=7) is None


@pytest.mark.parametrize("order", [None, np.array([0, 1, 2, 2]), np.arange(5), np.arange(4.0),
                                   np.arange(4).reshape(2, 2)])
def test_a_batch_order_that_does_not_fit_the_data_is_refused(order):
    meta = {"epoch_state": {"next_batch": 1, "loss_sum": 0.0, "correct": 0, "seconds": 0.0}}
    arrays = {} if order is None else {"epoch_order": order}
    with pytest.raises(ValueError, match="^the checkpoint's batch order does not fit the run's training data$"):
        EpochPosition.from_state(meta, arrays, n_rows=4)


@pytest.mark.parametrize("value, ok", [
    (None, True),
    ({"next_batch": 2, "loss_sum": 1.5, "correct": 3, "seconds": 0.1}, True),
    ({"next_batch": -1, "loss_sum": 1.5, "correct": 3, "seconds": 0.1}, False),
    ({"next_batch": 2, "loss_sum": 10 ** 400, "correct": 3, "seconds": 0.1}, False),
    ({"next_batch": 2, "loss_sum": 1.5, "correct": True, "seconds": 0.1}, False),
    ({"next_batch": 2, "loss_sum": 1.5, "correct": 3}, False),
    ([2, 1.5, 3, 0.1], False),
])
def test_meta_check_of_the_saved_position(value, ok):
    check, _ = EpochPosition.META_CHECKS["epoch_state"]
    assert check(value) is ok
