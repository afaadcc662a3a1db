"""Early stopping on its own: improvement by more than min_delta, patience, which metric is
watched and in which direction, the best weights, and its checkpoint state."""

import json

import numpy as np
import pytest

from mlp_manual.errors import ConfigError
from mlp_manual.layers import Linear
from mlp_manual.model import Model
from mlp_manual.training.early_stopping import EarlyStopping, StopRule


def tiny_model(seed=0):
    return Model([Linear(2, 1, rng=np.random.default_rng(seed), dtype=np.float64)])


def feed(stopping, model, values, metric="val_loss", first_epoch=1):
    """One update per value, the model's weight set to the epoch number; returns the stop flags."""
    stops = []
    for epoch, value in enumerate(values, start=first_epoch):
        model.layers[0].params["W"][:] = epoch
        stops.append(stopping.update({"epoch": epoch, "train_loss": 9.0, metric: value}, model))
    return stops


def test_a_loss_must_fall_by_more_than_min_delta_and_patience_counts_the_epochs_without():
    stopping, model = EarlyStopping("val_loss", patience=2, min_delta=0.1), tiny_model()
    # 0.95 and 0.76 fall by less than 0.1 from the best so far (1.0, then 0.85)
    assert feed(stopping, model, [1.0, 0.95, 0.85, 0.8, 0.76]) == [False, False, False, False, True]
    assert stopping.best_epoch == 3 and stopping.best_metrics["val_loss"] == 0.85
    assert stopping.bad_epochs == 2 and stopping.stopped


def test_an_improvement_resets_the_count_of_bad_epochs():
    stopping, model = EarlyStopping("val_loss", patience=2), tiny_model()
    assert feed(stopping, model, [1.0, 1.0, 0.5, 0.6, 0.4, 0.7]) == [False, False, False, False, False, False]
    assert stopping.best_epoch == 5 and stopping.bad_epochs == 1


def test_an_accuracy_must_rise():
    stopping, model = EarlyStopping("val_acc", patience=1), tiny_model()
    assert feed(stopping, model, [0.5, 0.7, 0.6], metric="val_acc") == [False, False, True]
    assert stopping.best_epoch == 2 and stopping.best_value == -0.7


def test_without_validation_the_training_loss_is_watched():
    stopping, model = EarlyStopping("val_acc", patience=1), tiny_model()
    for epoch, loss in enumerate([0.9, 0.5, 0.7], start=1):
        stopping.update({"epoch": epoch, "train_loss": loss, "train_acc": 1 - loss}, model)
    assert stopping.watched({"train_loss": 0.7}) == "train_loss"
    assert stopping.best_epoch == 2 and stopping.stopped


def test_patience_zero_never_stops_but_keeps_the_best_epoch():
    stopping, model = EarlyStopping("val_loss", patience=0), tiny_model()
    assert not any(feed(stopping, model, [0.5, 0.6, 0.7, 0.8, 0.9]))
    assert stopping.best_epoch == 1 and stopping.bad_epochs == 4


@pytest.mark.parametrize("patience, restore_best, expected_w", [(2, True, 1.0), (2, False, 3.0), (0, True, 3.0)])
def test_restore_loads_a_copy_of_the_best_weights_only_when_asked(patience, restore_best, expected_w):
    stopping, model = EarlyStopping("val_loss", patience=patience, restore_best=restore_best), tiny_model()
    feed(stopping, model, [0.5, 0.6, 0.7])  # W = epoch number: the best epoch had W = 1
    stopping.restore(model)
    assert np.all(model.layers[0].params["W"] == expected_w)


@pytest.mark.parametrize("restore_best, kept", [(True, "weights restored"),
                                                 (False, "final weights kept (restore_best is false)")])
def test_the_stop_message_says_why_when_and_which_weights(restore_best, kept):
    stopping, model = EarlyStopping("val_loss", patience=2, min_delta=0.05, restore_best=restore_best), tiny_model()
    stops = feed(stopping, model, [0.5, 0.3, 0.29, 0.31])
    assert stops[-1] and stopping.restores is restore_best
    assert stopping.stop_message({"epoch": 4, "train_loss": 9.0, "val_loss": 0.31}) == (
        f"early stopping at epoch 4: val_loss has not improved by min_delta (0.05) for 2 epochs; best epoch 2, {kept}")
    assert stopping.stop_message({"epoch": 4, "train_loss": 9.0}).startswith("early stopping at epoch 4: train_loss ")


def test_a_val_acc_monitor_needs_a_loss_that_reports_accuracy():
    rule = StopRule(monitor="val_acc", patience=3, min_delta=0.01, restore_best=False)
    stopping = EarlyStopping.chosen(rule, classification=True)
    assert (stopping.monitor, stopping.patience, stopping.min_delta, stopping.restore_best) == ("val_acc", 3, 0.01, False)
    with pytest.raises(ConfigError, match="^training.early_stopping.monitor is val_acc, but this loss reports no "
                                          "accuracy; watch val_loss$"):
        EarlyStopping.chosen(rule, classification=False)


@pytest.mark.parametrize("epochs_before_save", [0, 2, 3])
def test_state_round_trip_continues_with_the_same_decisions(epochs_before_save):
    losses = [1.0, 0.8, 0.9, 0.85, 0.95, 0.9]  # best at epoch 2, patience runs out at epoch 5
    straight, model = EarlyStopping("val_loss", patience=3, min_delta=0.01), tiny_model()
    expected = feed(straight, model, losses)

    first = EarlyStopping("val_loss", patience=3, min_delta=0.01)
    stops = feed(first, model, losses[:epochs_before_save])
    meta, arrays = first.state()
    meta = json.loads(json.dumps(meta))  # as a checkpoint's __meta__ holds it
    assert all(ok(meta[key]) for key, (ok, _) in EarlyStopping.META_CHECKS.items())
    resumed = EarlyStopping("val_loss", patience=3, min_delta=0.01)
    resumed.load_state(meta, {k: v.copy() for k, v in arrays.items()})
    stops += feed(resumed, model, losses[epochs_before_save:], first_epoch=epochs_before_save + 1)
    assert stops == expected == [False, False, False, False, True, True]
    a, b = resumed, straight
    assert (a.best_epoch, a.best_value, a.bad_epochs, a.stopped) == (b.best_epoch, b.best_value, b.bad_epochs, b.stopped)
    assert a.best_metrics == b.best_metrics and a.best_weights.keys() == b.best_weights.keys()
    assert all(np.array_equal(a.best_weights[k], b.best_weights[k]) for k in a.best_weights)


def test_a_fresh_state_saves_no_best_epoch_and_loads_back_empty():
    meta, arrays = EarlyStopping().state()
    assert meta == {"best": None, "best_value": None, "bad_epochs": 0, "stopped_early": False} and arrays == {}
    stopping = EarlyStopping()
    stopping.load_state(meta, arrays)
    assert stopping.best_epoch is None and stopping.best_value == np.inf and stopping.best_weights == {}
