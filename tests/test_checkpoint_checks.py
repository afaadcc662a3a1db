"""A checkpoint is refused at resume, before anything changes, unless every field fits the
others and the run's config; what is accepted resumes exactly."""

import copy
from pathlib import Path

import numpy as np
import pytest

from mlp_manual.config import load_config
from mlp_manual.errors import ModelFileError
from mlp_manual.optimizers import make_optimizer, row_of, state_arrays, used_slots
from mlp_manual.runs.checkpoint import load_checkpoint, restore, save_checkpoint
from mlp_manual.training.experiment import prepare, training_plan
from mlp_manual.training.trainer import Trainer

FILES = Path(__file__).parent / "bad_inputs" / "files"
XOR = load_config(FILES / "xor.yaml", ["training.epochs=4"])  # 4 rows, one batch per epoch
CKPT = load_checkpoint(FILES / "xor-checkpoint.npz")  # after epoch 2 of 4


def fresh_trainer():
    exp = prepare(XOR)
    return exp, Trainer(exp.model, exp.loss, training_plan(XOR), exp.train_rng)


def damaged(meta=None, arrays=None, drop=()):
    ckpt = copy.deepcopy(CKPT)
    ckpt["meta"].update(meta or {})
    ckpt["arrays"].update(arrays or {})
    for k in drop:
        del ckpt["arrays"][k]
    return ckpt


H = CKPT["meta"]["history"]
POSITION = {"next_batch": 1, "loss_sum": 2.5, "correct": 2, "seconds": 0.1}


@pytest.mark.parametrize("ckpt, problem", [
    (damaged(drop=["optim/m/layers.0.W"]), "the optimizer state optim/m/layers.0.W is missing"),
    (damaged(arrays={"optim/v/layers.0.W": -np.ones((2, 8), np.float32)}),
     "optim/v/layers.0.W, a running average of squares, has negative entries"),
    (damaged(arrays={"optim/m/layers.0.W": np.zeros((2, 8))}), "optim/m/layers.0.W is not finite float32"),
    (damaged(arrays={"optim/t": np.array(3)}), "the optimizer's step count optim/t is 3, the checkpoint's step 2"),
    (damaged({"history": {**H, "train_loss": H["train_loss"][:1]}}), "history column train_loss has 1 entries"),
    (damaged({"history": {k: v * 2 for k, v in H.items()}}), "history column epoch has 4 entries for 2 epochs"),
    (damaged({"history": {**H, "lr": ["fast", "slow"]}}), "history column lr holds ['fast', 'slow'], not numbers"),
    (damaged({"history": {**H, "val_loss": [0.1, 0.1]}}), ("history columns ['epoch', 'lr', 'train_loss', 'train_acc', "
                                                            "'seconds', 'val_loss'], expected")),
    (damaged({"epoch": 9}), "epoch 9, but the run's config has 4 epochs"),
    (damaged({"step": 3}, {"optim/t": np.array(3)}), "step 3, but 2 epochs of 1 batches make 2"),
    (damaged({"best": {**CKPT["meta"]["best"], "epoch": 5}}), "best epoch 5 is not one of the 2 epochs run"),
    (damaged({"best_value": 0.5}), "best value 0.5 is not the train_loss of the best epoch"),
    (damaged({"best": {"epoch": 2, "metrics": {k: "low" for k in H}}}),
     "the best epoch's metrics are not those of epoch 2 in the history"),
    (damaged({"bad_epochs": 1}), "1 epochs without improvement, but the best epoch 2 is 0 epochs back"),
    (damaged({"step": 7, "epoch_state": {**POSITION, "next_batch": 5}}, {"optim/t": np.array(7),
                                                                           "epoch_order": np.arange(4)}),
     "the position inside the epoch is batch 5, but an epoch has 1 batches"),
    (damaged({"step": 3, "epoch_state": {**POSITION, "correct": 5}}, {"optim/t": np.array(3),
                                                                        "epoch_order": np.arange(4)}),
     "the position inside the epoch counts 5 correct predictions in 4 rows"),
    (damaged({"rng": {}}), "random generator states for [], the run has ['shuffle']"),
    (damaged({"rng": {"shuffle": {"bit_generator": "MT19937", "state": {}}}}), "random generator state 'shuffle'"),
    (damaged(arrays={"extra": np.zeros(2)}), "unexpected array 'extra'"),
])
def test_a_damaged_field_is_refused_before_anything_changes(ckpt, problem):
    exp, trainer = fresh_trainer()
    before = {k: v.copy() for k, v in exp.model.state().items()}
    with pytest.raises(ModelFileError) as e:
        restore(trainer, ckpt, "run/checkpoint.npz", len(exp.data.X_train), validation=False)
    assert str(e.value).startswith("run/checkpoint.npz: ") and problem in str(e.value), str(e.value)
    assert trainer.epoch == 0 and trainer.history.columns == {} and trainer.optimizer.state["t"] == 0
    assert all(np.array_equal(before[k], v) for k, v in exp.model.state().items())


def test_the_fixture_and_a_position_that_fits_are_accepted():
    exp, trainer = fresh_trainer()
    restore(trainer, CKPT, "ckpt", len(exp.data.X_train), validation=False)
    assert trainer.epoch == 2 and trainer.step_count == 2 and trainer.optimizer.state["t"] == 2
    exp, trainer = fresh_trainer()
    inside = damaged({"step": 3, "epoch_state": POSITION}, {"optim/t": np.array(3), "epoch_order": np.arange(4)})
    restore(trainer, inside, "ckpt", len(exp.data.X_train), validation=False)
    assert trainer.position.next_batch == 1 and trainer.history["epoch"] == [1, 2]
    history = trainer.fit(exp.data.X_train, exp.data.y_train)
    assert history["epoch"] == [1, 2, 3, 4] and history["train_loss"][2] == 2.5 / 4


@pytest.mark.parametrize("overrides, validation", [([], False), (["data.val_fraction=0.25", "data.copies=4"], True),
                                                   (["loss=mse", "data.name=sine", "data.n_samples=8"], False)])
def test_the_history_columns_are_those_training_writes(tmp_path, overrides, validation):
    cfg = load_config(FILES / "xor.yaml", ["training.epochs=1", *overrides])
    exp = prepare(cfg)
    trainer = Trainer(exp.model, exp.loss, training_plan(cfg), exp.train_rng)
    trainer.fit(exp.data.X_train, exp.data.y_train, exp.data.X_val, exp.data.y_val)
    assert (exp.data.X_val is not None) == validation
    assert list(trainer.history.columns) == trainer.metric_names(validation)
    save_checkpoint(tmp_path / "c.npz", trainer)
    again = Trainer(prepare(cfg).model, exp.loss, training_plan(cfg), exp.train_rng)
    restore(again, load_checkpoint(tmp_path / "c.npz"), "c", len(exp.data.X_train), validation)


@pytest.mark.parametrize("settings", [{"name": "sgd"}, {"name": "sgd", "momentum": 0.9}, {"name": "rmsprop"},
                                      {"name": "adam"}, {"name": "adamw", "weight_decay": 0.1}])
def test_after_a_step_every_parameter_has_exactly_the_used_slots(settings):
    exp, _ = fresh_trainer()
    cfg = load_config(FILES / "xor.yaml", [f"optimizer.{k}={v}" for k, v in settings.items()])
    optimizer = make_optimizer(cfg.optimizer.name, cfg.optimizer.options, cfg.optimizer.weight_decay)
    for _ in range(2):
        exp.model.backward(exp.loss.fn(exp.model.forward(exp.data.X_train), exp.data.y_train)[1])
        optimizer.step(exp.model.parameters(), 0.1)
    names = {name for name, *_ in exp.model.parameters()}
    saved = set(state_arrays(optimizer)) - {"t"}
    assert saved == {f"{s}/{n}" for s in used_slots(optimizer) for n in names}
    assert all(np.all(optimizer.state[s][n] >= 0) for s in row_of(optimizer).non_negative for n in names)

