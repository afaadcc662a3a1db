"""The core's optimizers against their closed forms, the optimizer table, accumulation, clipping and
schedules."""

import math

import numpy as np
import pytest

from mlp_manual.config import OPTIMIZER_NAMES, SCHEDULE_NAMES, config_from_dict
from mlp_manual.core import SGD, Adam, AdamW, RMSProp, clip_grad_norm, grad_norm
from mlp_manual.errors import ConfigError
from mlp_manual.layers import Linear, Tanh
from mlp_manual.losses import LOSSES
from mlp_manual.model import Model
from mlp_manual.optimizers import (
    OPTIMIZERS,
    load_state_arrays,
    make_optimizer,
    state_arrays,
)
from mlp_manual.schedules import SCHEDULES, Schedule
from mlp_manual.training.experiment import training_plan
from mlp_manual.training.trainer import Trainer


def optimizer_config(**keys):
    """The optimizer section a config with these keys gets."""
    return config_from_dict({"optimizer": keys}).optimizer


def built(o):
    """The optimizer of an optimizer section."""
    return make_optimizer(o.name, o.options, o.weight_decay)


def one_param_model(w, g):
    layer = Linear(2, 1, rng=np.random.default_rng(0), bias=False, dtype=np.float64)
    layer.params["W"] = np.array(w, dtype=np.float64).reshape(2, 1)
    layer.grads["W"] = np.array(g, dtype=np.float64).reshape(2, 1)
    return Model([layer])


def test_sgd_momentum_and_nesterov_follow_their_formulas():
    for nesterov in (False, True):
        model, opt = one_param_model([1.0, 2.0], [0.5, -1.0]), SGD(momentum=0.9, nesterov=nesterov)
        opt.step(model.parameters(), 0.1)
        opt.step(model.parameters(), 0.1)
        g, v1 = np.array([0.5, -1.0]), np.array([0.5, -1.0])
        v2 = 0.9 * v1 + g
        steps = (g + 0.9 * v1, g + 0.9 * v2) if nesterov else (v1, v2)
        expected = np.array([1.0, 2.0]) - 0.1 * steps[0] - 0.1 * steps[1]
        assert np.allclose(model.layers[0].params["W"].ravel(), expected, rtol=0, atol=1e-15)


def test_adam_first_step_moves_each_weight_by_lr():
    model = one_param_model([1.0, 2.0], [0.5, -3.0])
    Adam().step(model.parameters(), 0.01)
    assert np.allclose(model.layers[0].params["W"].ravel(), [0.99, 2.01], atol=1e-9)


def test_rmsprop_first_step():
    model = one_param_model([0.0, 0.0], [2.0, -2.0])
    RMSProp(rho=0.9, eps=0.0).step(model.parameters(), 0.1)
    # s = 0.1 * g^2, step = lr * g / sqrt(s) = 0.1 * sign(g) / sqrt(0.1)
    assert np.allclose(model.layers[0].params["W"].ravel(), [-0.1 / math.sqrt(0.1), 0.1 / math.sqrt(0.1)])


def test_weight_decay_l2_versus_decoupled():
    model = one_param_model([1.0, 1.0], [0.0, 0.0])
    SGD(weight_decay=0.1).step(model.parameters(), 0.5)  # p -= lr * wd * p
    assert np.allclose(model.layers[0].params["W"].ravel(), [0.95, 0.95])
    model = one_param_model([1.0, 1.0], [0.0, 0.0])
    AdamW(weight_decay=0.1).step(model.parameters(), 0.5)  # zero gradient: only the decoupled decay acts
    assert np.allclose(model.layers[0].params["W"].ravel(), [0.95, 0.95])
    model = one_param_model([1.0, 1.0], [0.0, 0.0])
    Adam(weight_decay=0.1).step(model.parameters(), 0.5)  # L2 through Adam: normalised, so a full lr step
    assert np.allclose(model.layers[0].params["W"].ravel(), [0.5, 0.5], atol=1e-6)


def test_weight_decay_skips_biases():
    layer = Linear(2, 2, rng=np.random.default_rng(0), dtype=np.float64)
    layer.params["b"][:] = 1.0
    model = Model([layer])
    SGD(weight_decay=0.5).step(model.parameters(), 1.0)
    assert np.array_equal(layer.params["b"], [1.0, 1.0])


def test_clip_grad_norm_scales_all_gradients_together():
    model = one_param_model([0.0, 0.0], [3.0, 4.0])
    assert clip_grad_norm([g for _, _, g in model.parameters()], 1.0) == 5.0
    assert np.allclose(model.layers[0].grads["W"].ravel(), [0.6, 0.8])
    model = one_param_model([0.0, 0.0], [0.3, 0.4])
    clip_grad_norm([g for _, _, g in model.parameters()], 1.0)
    assert np.allclose(model.layers[0].grads["W"].ravel(), [0.3, 0.4])


def test_grad_norm_covers_every_tensor_of_every_layer_and_overflow_is_inf():
    first, second = Linear(3, 2, rng=np.random.default_rng(0)), Linear(2, 1, rng=np.random.default_rng(1))
    grads = np.random.default_rng(2)
    for layer in (first, second):
        for k, p in layer.params.items():
            layer.grads[k] = grads.normal(size=p.shape).astype(p.dtype)
    every = np.concatenate([g.ravel() for layer in (first, second) for g in layer.grads.values()])
    every_grad = [g for layer in (first, second) for g in layer.grads.values()]
    assert np.isclose(grad_norm(every_grad), np.linalg.norm(every.astype(np.float64)), rtol=1e-6)
    assert grad_norm([second.grads["W"]]) == grad_norm([second.grads["W"].ravel()]) > 0
    second.grads["b"][0] = np.float32(3e19)  # its square overflows float32
    with np.errstate(over="ignore"):
        assert grad_norm(every_grad) == np.inf
    second.grads["b"][0] = np.nan
    assert np.isnan(grad_norm(every_grad))


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_state_round_trips_through_arrays(name):
    cfg = optimizer_config(name=name, **({"momentum": 0.9} if name == "sgd" else {}))
    model = one_param_model([1.0, 2.0], [0.5, -1.0])
    opt = built(cfg)
    opt.step(model.parameters(), 0.1)
    restored = built(cfg)
    load_state_arrays(restored, state_arrays(opt))
    twin = one_param_model(model.layers[0].params["W"].ravel(), [0.5, -1.0])
    opt.step(model.parameters(), 0.1)
    restored.step(twin.parameters(), 0.1)
    assert np.array_equal(model.layers[0].params["W"], twin.layers[0].params["W"])


def tanh_net(seed):
    rng = np.random.default_rng(seed)
    return Model([Linear(3, 5, rng=rng, dtype=np.float64), Tanh(), Linear(5, 4, rng=rng, dtype=np.float64)])


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_gradient_accumulation_equals_one_big_batch(optimizer):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 3)), rng.integers(0, 4, size=12)
    updates = []
    for k in (1, 3, 5):
        cfg = config_from_dict({"dtype": "float64", "optimizer": {"name": optimizer, "lr": 0.1, "accumulate": k}})
        model = tanh_net(0)
        trainer = Trainer(model, LOSSES["softmax_cross_entropy"], training_plan(cfg), np.random.default_rng(0))
        trainer.train_step(X, y, 0.1)
        trainer.train_step(X, y, 0.1)
        updates.append(model.state())
    for other in updates[1:]:
        for key in updates[0]:
            assert np.allclose(other[key], updates[0][key], rtol=0, atol=1e-12), key


def test_schedules():
    def lrs(**kw):
        c = config_from_dict({"schedule": kw}).schedule
        s = Schedule(c.name, c.options, 1.0, steps_per_epoch=10, epochs=10)
        return [s.lr(i) for i in range(100)]
    assert set(lrs(name="constant")) == {1.0}
    step = lrs(name="step", step_size=3, gamma=0.5)
    assert step[29] == 1.0 and step[30] == 0.5 and step[60] == 0.25
    exp = lrs(name="exponential", gamma=0.9)
    assert exp[10] == 0.9 and np.isclose(exp[99], 0.9 ** 9)
    cos = lrs(name="cosine", warmup_epochs=1, min_lr=0.1)
    assert cos[0] == 0.1 and cos[9] == 1.0  # linear warmup over 10 steps
    assert np.isclose(cos[10], 1.0) and np.isclose(cos[55], 0.55) and cos[99] > 0.1
    assert all(a >= b for a, b in zip(cos[10:], cos[11:]))


def test_the_config_lists_the_optimizer_and_schedule_names_their_registries_hold():
    assert OPTIMIZER_NAMES == tuple(OPTIMIZERS) and {"sgd", "rmsprop", "adam", "adamw"} <= set(OPTIMIZERS)
    assert SCHEDULE_NAMES == tuple(SCHEDULES) and {"constant", "step", "exponential", "cosine"} <= set(SCHEDULES)
    assert [type(make_optimizer(n)) for n in OPTIMIZER_NAMES] == [t.cls for t in OPTIMIZERS.values()]
    assert [OPTIMIZERS[n].cls for n in ("sgd", "rmsprop", "adam", "adamw")] == [SGD, RMSProp, Adam, AdamW]


def test_an_unknown_optimizer_or_schedule_name_is_a_config_error_not_a_fallback():
    with pytest.raises(ConfigError) as e:
        make_optimizer("adma")
    assert str(e.value) == f"optimizer.name must be one of {', '.join(OPTIMIZERS)}; got 'adma' (did you mean 'adam'?)"
    with pytest.raises(ConfigError) as e:
        Schedule("no_such_schedule", {}, 1.0, steps_per_epoch=10, epochs=10)
    assert str(e.value) == f"schedule.name must be one of {', '.join(SCHEDULES)}; got 'no_such_schedule'"


EPS_OWNERS = [name for name, cls in OPTIMIZERS.items() if "eps" in cls.options]  # rmsprop, adam, adamw, ...


@pytest.mark.parametrize("raw, message", [
    ({"optimizer": {"name": "adam", "momentum": 0.9}},
     "x.yaml: optimizer.momentum is an option of sgd, not of adam (optimizer.name)"),
    ({"optimizer": {"rho": 0.5}}, "x.yaml: optimizer.rho is an option of rmsprop, not of adam (optimizer.name)"),
    ({"optimizer": {"name": "sgd", "eps": 1e-6}},  # every optimizer with a square root has eps
     f"x.yaml: optimizer.eps is an option of {', '.join(EPS_OWNERS[:-1])} and {EPS_OWNERS[-1]}, not of sgd "
     "(optimizer.name)"),
    ({"schedule": {"warmup_epochs": 1}},
     "x.yaml: schedule.warmup_epochs is an option of cosine, not of constant (schedule.name)"),
    ({"optimizer": {"name": "sgd", "momentun": 0.9}}, "x.yaml: unknown key 'optimizer.momentun' (did you mean "
                                                      "'optimizer.momentum'?)"),
    ({"optimizer": {"name": "sgd", "momentum": 1.5}}, "x.yaml: optimizer.momentum must be in [0, 1), got 1.5"),
    ({"schedule": {"name": "step", "step_size": 0}}, "x.yaml: schedule.step_size must be a positive integer, got 0"),
    ({"optimizer": {"options": {"momentum": 0.9}}}, "x.yaml: unknown key 'optimizer.options'"),
])
def test_an_option_of_a_thing_not_chosen_is_an_error_naming_whose_it_is(raw, message):
    with pytest.raises(ConfigError) as e:
        config_from_dict(raw, "x.yaml")
    assert str(e.value) == message


def test_options_are_written_flat_and_read_back_and_set_from_the_command_line():
    from mlp_manual.config import config_to_dict

    cfg = config_from_dict({"optimizer": {"name": "sgd", "momentum": 0.9}},
                           overrides=["schedule.name=cosine", "schedule.warmup_epochs=2"])
    assert cfg.optimizer.options == {"momentum": 0.9, "nesterov": False}
    assert cfg.schedule.options == {"warmup_epochs": 2.0, "min_lr": 0.0}
    written = config_to_dict(cfg)
    assert written["optimizer"] == {"name": "sgd", "lr": 0.001, "weight_decay": 0.0, "clip_norm": None,
                                    "accumulate": 1, "momentum": 0.9, "nesterov": False}
    assert config_from_dict(written) == cfg
    assert config_from_dict({}).optimizer.options == {"beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    # --set choosing another optimizer drops the file's options of the one it named ...
    switched = config_from_dict({"optimizer": {"beta1": 0.8}}, overrides=["optimizer.name=sgd"])
    assert switched.optimizer.options == {"momentum": 0.0, "nesterov": False}
    # ... but an option of another optimizer set on the command line is still an error
    with pytest.raises(ConfigError, match="optimizer.beta1 is an option of adam and adamw, not of sgd"):
        config_from_dict({}, overrides=["optimizer.name=sgd", "optimizer.beta1=0.8"])
    switched = config_from_dict({"data": {"name": "csv", "path": "x.csv"}}, overrides=["data.name=moons"])
    assert switched.data.path is None
    with pytest.raises(ConfigError, match=r"data.arms is an option of spirals, not of moons \(data.name\)"):
        config_from_dict({"data": {"name": "moons", "arms": 5}})
    assert config_from_dict({"optimizer": {"momentum": 0.0, "rho": 0.9}}).optimizer.name == "adam"  # defaults, as
    # files written before options were declared hold every key


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_an_optimizers_declared_defaults_are_its_constructors(name):
    import inspect

    parameters = inspect.signature(OPTIMIZERS[name].cls).parameters
    assert set(parameters) == set(OPTIMIZERS[name].options) | {"weight_decay"}
    assert {k: parameters[k].default for k in OPTIMIZERS[name].options} == \
        {k: o.default for k, o in OPTIMIZERS[name].options.items()}
