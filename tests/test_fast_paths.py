"""What the trainer computes differently from the core's plain forms, for speed
(mlp_manual/training/fast_paths.py), gives the same numbers bit for bit: the work-array
optimizers, the norm of the gradients, the backward that skips the data's gradient, and the
whole training loop."""

import numpy as np
import pytest

from mlp_manual import core
from mlp_manual.config import config_from_dict
from mlp_manual.losses import LOSSES
from mlp_manual.model import Model, build_model
from mlp_manual.optimizers import OPTIMIZERS, make_optimizer, state_arrays
from mlp_manual.training.experiment import training_plan
from mlp_manual.training.fast_paths import (
    FAST,
    backward_without_data_grad,
    fast_optimizer,
    grad_norm,
)
from mlp_manual.training.trainer import Trainer


def optimizer_config(**keys):
    return config_from_dict({"optimizer": keys}).optimizer


WORK_ARRAY_CASES = [{"name": "sgd"}, {"name": "sgd", "momentum": 0.9},
                    {"name": "sgd", "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
                    {"name": "sgd", "weight_decay": 0.01}, {"name": "rmsprop"}, {"name": "rmsprop", "weight_decay": 0.01},
                    {"name": "adam"}, {"name": "adam", "weight_decay": 0.01}, {"name": "adamw", "weight_decay": 0.1}]


@pytest.mark.parametrize("kw", WORK_ARRAY_CASES, ids=str)
def test_each_work_array_optimizer_equals_its_plain_form_bit_for_bit_in_float32(kw):
    o = optimizer_config(**kw)
    plain, fast = make_optimizer(o.name, o.options, o.weight_decay), fast_optimizer(o.name, o.options, o.weight_decay)
    assert type(fast) is FAST[type(plain)] and isinstance(fast, type(plain))
    rng = np.random.default_rng(0)
    a, b = (core.Linear(40, 30, rng=np.random.default_rng(1), dtype=np.float32) for _ in range(2))
    for layer in (a, b):
        layer.params["W"][...] = 0  # from zero, the first update is the parameter itself: no rounding hides it
    for lr in (0.1, 0.05, np.float64(0.02), 0.01):  # a numpy lr computes as a Python float
        for k in a.grads:
            a.grads[k] = rng.normal(size=a.params[k].shape).astype(np.float32)
            b.grads[k] = a.grads[k].copy()
        plain.step(Model([a]).parameters(), lr)
        fast.step(Model([b]).parameters(), lr)
        for k in a.params:
            assert a.params[k].dtype == np.float32 and np.array_equal(a.params[k], b.params[k]), k
    for key, value in state_arrays(plain).items():  # what a checkpoint holds: the same, and no work array
        assert np.array_equal(value, state_arrays(fast)[key]), key
    assert set(state_arrays(plain)) == set(state_arrays(fast))


def test_the_work_array_versions_are_of_optimizers_of_the_table():
    """Optional for a new optimizer (the trainer uses the plain one where there is none), but
    each one there is tested above against its plain form."""
    assert set(FAST) <= {t.cls for t in OPTIMIZERS.values()}
    assert set(FAST) == {OPTIMIZERS[kw["name"]].cls for kw in WORK_ARRAY_CASES}  # each one is tried above


def test_the_backward_without_the_datas_gradient_gives_the_same_grads(rng):
    for first in ({"type": "linear", "units": 5}, {"type": "layernorm"}):
        model = build_model([first, {"type": "tanh"}, {"type": "linear"}], 4, 3, np.random.default_rng(0),
                            np.float64)
        x, g = rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
        model.forward(x)
        model.backward(g)
        plain = {name: grad.copy() for name, _, grad in model.parameters()}
        model.forward(x)
        backward_without_data_grad(model, g)
        assert all(np.array_equal(grad, plain[name]) for name, _, grad in model.parameters())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_norm_of_all_gradients_by_vdot_is_the_cores_bit_for_bit(rng, dtype):
    grads = [rng.normal(size=s).astype(dtype) for s in [(784, 256), (256,), (256, 10), (10,), (3, 1, 2)]]
    assert grad_norm(grads) == core.grad_norm(grads)
    grads[1][5] = np.inf
    assert grad_norm(grads) == core.grad_norm(grads) == np.inf


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_the_trainer_trains_the_weights_the_core_loop_trains(optimizer):
    """core/train.py's loop and the trainer, from the same weights, data and generator: the same
    weights bit for bit after three epochs (80 rows in batches of 16: no batch of one row, which
    the trainer would join to the one before)."""
    cfg = config_from_dict({"dtype": "float64", "model": {"layers": [{"type": "linear", "units": 8}, "tanh",
                                                                     {"type": "linear"}]},
                            "optimizer": {"name": optimizer, "lr": 0.05, "clip_norm": 1.0},
                            "training": {"epochs": 3, "batch_size": 16, "early_stopping": {"patience": 0}}})
    data = np.random.default_rng(0)
    X, y = data.normal(size=(80, 2)), data.integers(0, 2, size=80)
    plain, fast = (build_model(cfg.model.layers, 2, 2, np.random.default_rng(1), np.float64) for _ in range(2))
    loss = LOSSES["softmax_cross_entropy"]
    o = cfg.optimizer
    shuffle = np.random.default_rng(2)
    history = core.train(plain, loss.fn, make_optimizer(o.name, o.options, o.weight_decay),
                         lambda: core.batches(X, y, 16, shuffle), epochs=3, lr=lambda step: 0.05, clip_norm=1.0)
    trainer = Trainer(fast, loss, training_plan(cfg), np.random.default_rng(2))
    trainer.fit(X, y)
    assert all(np.array_equal(p, fast.state()[name]) for name, p in plain.state().items())
    assert [row["train_loss"] for row in history] == trainer.history.columns["train_loss"]
