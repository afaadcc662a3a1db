"""The training loop end to end in the library: XOR for 20 seeds, reproducibility, early stopping."""

import numpy as np
import pytest

from mlp_manual.config import config_from_dict, load_config
from mlp_manual.errors import DataError
from mlp_manual.losses import LOSSES
from mlp_manual.model import build_model
from mlp_manual.training.epoch_position import EpochPosition
from mlp_manual.training.evaluation import evaluate
from mlp_manual.training.experiment import prepare, training_plan
from mlp_manual.training.trainer import Trainer, batch_bounds


def train(cfg):
    exp = prepare(cfg)
    d = exp.data
    trainer = Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng)
    trainer.fit(d.X_train, d.y_train, d.X_val, d.y_val)
    return exp, trainer


@pytest.mark.parametrize("seed", range(20))
def test_xor_config_reaches_full_training_accuracy_for_every_seed(seed):
    exp, _ = train(load_config("configs/xor.yaml", [f"seed={seed}"]))
    assert evaluate(exp.model, exp.loss, exp.data.X_train, exp.data.y_train)["acc"] == 1.0


def test_same_seed_same_weights_bit_for_bit_and_other_seed_differs():
    cfg = load_config("configs/moons.yaml", ["training.epochs=3"])
    a, b = train(cfg)[0].model.state(), train(cfg)[0].model.state()
    c = train(load_config("configs/moons.yaml", ["training.epochs=3", "seed=1"]))[0].model.state()
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not all(np.array_equal(a[k], c[k]) for k in a)


def test_early_stopping_stops_and_restores_the_best_weights():
    cfg = load_config("configs/moons.yaml", ["training.epochs=200", "optimizer.lr=0.05", "schedule.name=constant",
                                             "training.early_stopping.patience=3"])
    exp, trainer = train(cfg)
    history = trainer.history
    assert trainer.early_stopping.stopped and len(history["epoch"]) < 200
    best = trainer.early_stopping.best_epoch
    assert len(history["epoch"]) == best + 3
    assert history["val_loss"][best - 1] == min(history["val_loss"])
    d = exp.data
    assert np.isclose(evaluate(exp.model, exp.loss, d.X_val, d.y_val)["loss"], history["val_loss"][best - 1])


def test_float64_training_keeps_float64_everywhere():
    exp, _ = train(load_config("configs/sine.yaml", ["dtype=float64", "training.epochs=2"]))
    assert all(v.dtype == np.float64 for v in exp.model.state().values())
    assert exp.data.X_train.dtype == np.float64


def test_training_reduces_loss_for_every_optimizer_and_layer_kind():
    layers = "[{type: linear, units: 16}, batchnorm, gelu, dropout, {type: linear, units: 16}, layernorm, " \
             "leaky_relu, {type: linear, units: 8}, rmsnorm, sigmoid, {type: linear}]"
    for opt in ("sgd", "rmsprop", "adam", "adamw"):
        lr = 0.1 if opt == "sgd" else 0.01
        cfg = config_from_dict({"data": {"name": "blobs"}, "training": {"epochs": 15}},
                               "test", [f"optimizer.name={opt}", f"optimizer.lr={lr}", f"model.layers={layers}",
                                        "optimizer.weight_decay=1e-4", "optimizer.clip_norm=5",
                                        *(["optimizer.momentum=0.9"] if opt == "sgd" else [])])
        _, trainer = train(cfg)
        losses = trainer.history["train_loss"]
        assert losses[-1] < 0.5 * losses[0], opt


def test_batch_bounds_never_leave_a_batch_of_one():
    assert batch_bounds(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert batch_bounds(9, 4) == [(0, 4), (4, 9)]
    assert batch_bounds(1, 4) == [(0, 1)]


def test_sgd_training_matches_a_straightforward_reference_to_float32_rounding():
    """Three epochs of plain SGD through Trainer.fit against the textbook computation in float64,
    from the same initial weights and the same batch order."""
    layers = [{"type": "linear", "units": 16}, "relu", {"type": "linear", "units": 16}, "relu", {"type": "linear"}]
    cfg = config_from_dict({"model": {"layers": layers}, "optimizer": {"name": "sgd", "lr": 0.1},
                            "schedule": {"name": "constant"}, "training": {"epochs": 3, "batch_size": 8}}, "test")
    data = np.random.default_rng(5)
    X, y = data.normal(size=(43, 6)).astype(np.float32), data.integers(0, 3, 43)
    model = build_model(list(cfg.model.layers), 6, 3, np.random.default_rng(11))
    params = [[layer.params[k].astype(np.float64) for k in ("W", "b")] for layer in model.layers[::2]]
    Trainer(model, LOSSES["softmax_cross_entropy"], training_plan(cfg), np.random.default_rng(12)).fit(X, y)

    order_rng = np.random.default_rng(12)
    for _ in range(3):
        order = order_rng.permutation(len(X))
        for lo, hi in batch_bounds(len(X), 8):
            xb, yb = X[order[lo:hi]].astype(np.float64), y[order[lo:hi]]
            acts = [xb]
            for i, (W, b) in enumerate(params):
                z = acts[-1] @ W + b
                acts.append(np.maximum(z, 0) if i < 2 else z)
            p = np.exp(acts[-1] - acts[-1].max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            dz = (p - np.eye(3)[yb]) / len(xb)
            for i in reversed(range(3)):
                W, b = params[i]
                dW, db, dh = acts[i].T @ dz, dz.sum(axis=0), dz @ W.T
                W -= 0.1 * dW
                b -= 0.1 * db
                dz = dh * (acts[i] > 0)
    for layer, (W, b) in zip(model.layers[::2], params):
        assert np.allclose(layer.params["W"], W, rtol=1e-5, atol=1e-6)
        assert np.allclose(layer.params["b"], b, rtol=1e-5, atol=1e-6)


def test_fit_rejects_empty_data_and_a_batch_order_for_other_data():
    cfg = load_config("configs/xor.yaml")
    exp = prepare(cfg)
    trainer = Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng)
    with pytest.raises(DataError, match="^there are no training samples$"):
        trainer.fit(exp.data.X_train[:0], exp.data.y_train[:0])
    trainer.position = EpochPosition(np.arange(7), next_batch=1)
    with pytest.raises(DataError, match=r"^the interrupted epoch's batch order covers 7 samples, "
                                        r"the training data has 4$"):
        trainer.fit(exp.data.X_train, exp.data.y_train)


def test_on_step_reports_every_step_and_the_epoch_loss_so_far_without_changing_training():
    cfg = load_config("configs/moons.yaml", ["training.epochs=2", "training.batch_size=50"])
    calls = []
    exp = prepare(cfg)
    d = exp.data
    trainer = Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng, on_step=lambda *args: calls.append(args))
    trainer.fit(d.X_train, d.y_train, d.X_val, d.y_val)
    steps = len(batch_bounds(len(d.X_train), 50))
    assert [c[:3] for c in calls] == [(e, k, steps) for e in (1, 2) for k in range(1, steps + 1)]
    ends = [loss for epoch, done, _, loss in calls if done == steps]
    assert ends == pytest.approx(trainer.history["train_loss"], rel=1e-12)
    plain = train(cfg)[0].model.state()
    assert all(np.array_equal(plain[k], v) for k, v in exp.model.state().items())


class TickingClock:
    """Stands in for the trainer's ``time``: every reading is one second after the previous."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        self.now += 1.0
        return self.now


def checkpoints_taken(overrides, monkeypatch):
    """(epoch, next batch or None) of every checkpoint a moons run of 3 epochs asks for, with a
    clock on which each reading is a second later; and the run's steps per epoch."""
    monkeypatch.setattr("mlp_manual.training.trainer.time", TickingClock())
    cfg = load_config("configs/moons.yaml", ["training.epochs=3", "training.batch_size=64", *overrides])
    exp = prepare(cfg)
    taken = []
    trainer = Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng, on_checkpoint=lambda: taken.append(
        (trainer.epoch, trainer.position and trainer.position.next_batch)))
    trainer.fit(exp.data.X_train, exp.data.y_train, exp.data.X_val, exp.data.y_val)
    return taken, len(batch_bounds(len(exp.data.X_train), 64))


def test_checkpoints_by_time_come_after_steps_and_epochs_once_the_time_has_passed(monkeypatch):
    taken, steps = checkpoints_taken(["training.checkpoint_seconds=0.5"], monkeypatch)
    inside = [(epoch, batch) for epoch in range(3) for batch in range(1, steps + 1)]
    assert steps > 1 and [c for c in taken if c[1] is not None] == inside
    assert [c for c in taken if c[1] is None] == [(1, None), (2, None), (3, None)]
    taken, _ = checkpoints_taken(["training.checkpoint_seconds=1000"], monkeypatch)
    assert taken == [(3, None)]  # the end of training is always saved


def test_checkpoint_every_adds_epochs_and_the_last_one_is_always_saved(monkeypatch):
    taken, _ = checkpoints_taken(["training.checkpoint_seconds=0", "training.checkpoint_every=2"], monkeypatch)
    assert taken == [(2, None), (3, None)]
    taken, _ = checkpoints_taken(["training.checkpoint_seconds=0", "training.checkpoint_every=0"], monkeypatch)
    assert taken == [(3, None)]


def test_a_finished_trainer_trains_no_further():
    cfg = load_config("configs/moons.yaml", ["training.epochs=2"])
    exp, trainer = train(cfg)
    assert trainer.finished and trainer.step_count > 0
    before, steps = exp.model.state(), trainer.step_count
    trainer.fit(exp.data.X_train, exp.data.y_train, exp.data.X_val, exp.data.y_val)
    after = exp.model.state()
    assert trainer.step_count == steps and all(np.array_equal(before[k], after[k]) for k in before)
