"""The gradient checker: no false alarms on the built-ins, every classic bug caught on the right
tensor, kinks told apart from bugs, and the checked object left exactly as it was."""

import json

import numpy as np
import pytest
from broken_layers import CLASSIC_BUGS, STRUCTURAL_BUGS, TransposedWeightGrad

from mlp_manual.errors import GradcheckError, LayerError
from mlp_manual.gradcheck.check import (
    check_layer,
    check_loss,
    check_model,
    modes_to_check,
)
from mlp_manual.gradcheck.numgrad import numerical_gradient, one_sided_quotients
from mlp_manual.gradcheck.suites import MODES, check_builtins
from mlp_manual.layers import (
    LAYER_TYPES,
    BatchNorm1d,
    Dropout,
    LeakyReLU,
    Linear,
    ReLU,
    Tanh,
)
from mlp_manual.losses import LOSSES, mse
from mlp_manual.model import Model, build_model


def test_every_builtin_layer_and_loss_passes_below_1e_7():
    suite = check_builtins()
    assert suite.passed
    rows = [(rep.label, r) for rep in suite.reports for r in rep.rows]
    assert {r.verdict for _, r in rows} == {"PASS", "N/A"}
    # only the embedding's input, integer indices, has no gradient to check
    assert {(label.split()[0], r.name) for label, r in rows if r.verdict == "N/A"} == {("embedding", "dx")}
    assert all(r.max_rel < 1e-7 for _, r in rows if r.verdict == "PASS")
    assert all(c.ok for rep in suite.reports for c in rep.structure)


def test_builtins_cover_every_type_loss_batch_one_and_both_modes():
    labels = [rep.label for rep in check_builtins().reports]
    for name in LAYER_TYPES:
        assert any(label.startswith(f"{name} x(1, ") for label in labels) or name in MODES, name
        assert any(label.startswith(f"{name} x(6, 3)") for label in labels), name
    for name in MODES:
        assert f"{name} x(6, 3) train" in labels and f"{name} x(6, 3) eval" in labels
    for name in LOSSES:
        assert sum(label.startswith(f"{name} logits(1,") for label in labels) == 1, name
    assert "batchnorm x(1, 5) eval" in labels and "batchnorm x(1, 5) train" not in labels


@pytest.mark.slow  # a battery across 100 seeds
def test_no_false_alarm_on_any_builtin_across_seeds_0_to_99():
    for seed in range(100):
        suite = check_builtins(seed=seed, layer_shapes=((1, 3), (3, 4)),
                               loss_shapes={"softmax_cross_entropy": ((3, 3),), "bce_with_logits": ((3, 1),),
                                            "mse": ((3, 2),)})
        bad = [(rep.label, r.name, r.verdict, r.max_rel) for rep in suite.reports for r in rep.rows
               if r.verdict != "PASS" and not (r.verdict == "N/A" and rep.label.startswith("embedding "))]
        assert not bad and suite.passed, f"seed {seed}: {bad}"


@pytest.mark.parametrize("broken", CLASSIC_BUGS, ids=lambda cls: cls.__name__)
def test_each_classic_bug_fails_on_the_right_tensor(broken, rng):
    report = check_layer(broken(), rng.normal(size=(5, 4)))
    assert not report.passed
    assert set(report.failed_tensors) == broken.FAILS, str(report)
    assert all(r.verdict == "PASS" for r in report.rows if r.name not in broken.FAILS), str(report)
    assert all(report.row(name).max_rel > 1e-2 for name in broken.FAILS)


def test_an_input_drawn_with_the_checkers_seed_does_not_hide_a_transposed_gradient():
    x = np.random.default_rng(0).normal(size=(5, 4))  # were g drawn the same way, x.T @ g would be symmetric
    assert check_layer(TransposedWeightGrad(), x, seed=0).failed_tensors == ["W"]


@pytest.mark.parametrize("broken", STRUCTURAL_BUGS, ids=lambda cls: cls.__name__)
def test_each_structural_bug_breaks_its_check(broken, rng):
    report = check_layer(broken(), rng.normal(size=(5, 4)))
    failed = [c.name for c in report.structure if not c.ok]
    assert broken.BREAKS in failed and not report.passed
    assert f"FAIL  {report.label}: {broken.BREAKS}" in str(report)


def test_relu_input_on_its_kink_is_a_kink_not_a_failure():
    x = np.array([[0.0, 3e-6, -4e-6, 0.7, -1.2]])
    for layer in (ReLU(), LeakyReLU(0.1)):
        report = check_layer(layer, x)
        row = report.row("dx")
        assert row.verdict == "KINK" and row.kinks == 3 and report.passed, str(report)
        assert "1 with kinks" in str(report)


def test_a_gradient_outside_the_one_sided_quotients_at_a_kink_still_fails():
    class ReluSlopeTwoAtZero(ReLU):
        def backward(self, dout):
            return dout * np.where(self.x > 0, 1.0, np.where(self.x == 0, 2.0, 0.0))

    report = check_layer(ReluSlopeTwoAtZero(), np.array([[0.5, 0.0, -0.5]]))
    assert report.row("dx").verdict == "FAIL" and report.row("dx").worst == (0, 1)


def test_one_sided_quotients_straddle_the_kink_of_abs():
    x = np.array([0.0, 2.0])
    left, right = one_sided_quotients(lambda: np.abs(x), x, np.ones(2))
    assert left[0] == -1.0 and right[0] == 1.0
    assert np.allclose([left[1], right[1]], 1.0, rtol=1e-9)


def test_the_five_point_difference_removes_the_curvature_error():
    x = np.array([0.3, 1.1, -0.7])
    exact = 3 * np.cos(3 * x)
    central, five_point = (numerical_gradient(lambda: np.sin(3 * x), x, order=k) for k in (2, 4))
    assert np.abs(five_point - exact).max() < 0.2 * np.abs(central - exact).max()


def test_sampling_checks_few_entries_and_the_directional_check_catches_the_rest(rng):
    class OneBadEntry(Linear):
        def backward(self, dout):
            dx = super().backward(dout)
            self.grads["W"][37, 11] += 1.0
            return dx

    layer = OneBadEntry(40, 30, rng=rng, dtype=np.float64)
    report = check_layer(layer, rng.normal(size=(3, 40)), max_elements=20)
    row = report.row("W")
    assert row.checked == 20 and row.size == 1200
    assert row.max_rel < 1e-7 and row.directional > 1e-4 and row.verdict == "FAIL"
    assert "sampled 20/1200, directional" in str(report)
    assert check_layer(Linear(40, 30, rng=rng, dtype=np.float64), rng.normal(size=(3, 40)),
                       max_elements=20).passed


def _state(obj):
    layers = obj.layers if isinstance(obj, Model) else [obj]
    return [(k, v.dtype, v.copy()) for layer in layers for d in (layer.params, layer.grads, layer.buffers)
            for k, v in d.items()] + [layer.rng.bit_generator.state for layer in layers if hasattr(layer, "rng")] \
        + [layer.training for layer in layers]


def _same_state(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        if isinstance(u, tuple):
            assert u[0] == v[0] and u[1] == v[1] and np.array_equal(u[2], v[2])
        else:
            assert u == v


def test_the_model_is_unchanged_bit_for_bit_and_its_caches_still_work(rng):
    specs = [{"type": "linear", "units": 6}, {"type": "batchnorm"}, {"type": "relu"},
             {"type": "dropout", "p": 0.3}, {"type": "linear"}]
    model = build_model(specs, 3, 2, rng, np.float32)
    X, y = rng.normal(size=(8, 3)).astype(np.float32), rng.integers(0, 2, 8)
    h = rng.normal(size=(8, 6))  # drawn now: the dropout layer shares this generator
    _, dlogits = LOSSES["softmax_cross_entropy"].fn(model.forward(X), y)
    model.backward(dlogits)
    before = _state(model)
    grads_before = [g.copy() for layer in model.layers for g in layer.grads.values()]
    for mode in modes_to_check(model, X):
        assert check_model(model, LOSSES["softmax_cross_entropy"], X, y, mode=mode).passed
    assert check_layer(model.layers[1], h, mode="eval").passed
    _same_state(before, _state(model))
    model.backward(dlogits)  # the caches of the forward above are still there
    after = [g for layer in model.layers for g in layer.grads.values()]
    assert all(np.array_equal(a, b) and b.dtype == np.float32 for a, b in zip(grads_before, after))


def test_a_duck_typed_layer_with_aliased_params_and_its_own_generator_passes(rng):
    class NoisyScale:  # not a Layer subclass
        def __init__(self):
            self.scale = np.linspace(0.5, 2.0, 4, dtype=np.float32)
            self.params, self.grads, self.buffers = {"scale": self.scale}, {}, {}
            self.noise_source = np.random.default_rng(5)

        def forward(self, x):
            self.x = x
            self.noise = self.noise_source.normal(size=x.shape)  # a fresh draw each forward
            return (x + self.noise) * self.scale

        def backward(self, dout):
            self.grads["scale"] = (dout * (self.x + self.noise)).sum(axis=0)
            return dout * self.scale

    layer = NoisyScale()
    state = layer.noise_source.bit_generator.state
    report = check_layer(layer, rng.normal(size=(3, 4)))
    assert report.passed and {r.verdict for r in report.rows} == {"PASS"}, str(report)
    assert layer.noise_source.bit_generator.state == state and layer.scale.dtype == np.float32
    assert layer.params["scale"] is layer.scale and layer.grads == {}


def test_check_model_names_the_broken_layer(rng):
    broken = CLASSIC_BUGS[0]()
    model = Model([Linear(3, 4, rng=rng, dtype=np.float64), Tanh(), broken])
    report = check_model(model, mse, rng.normal(size=(5, 3)), rng.normal(size=(5, 4)))
    assert report.failed_tensors == ["layers.2.W"], str(report)
    assert [r.name for r in report.rows] == ["dlogits", "dx", "layers.0.W", "layers.0.b", "layers.2.W", "layers.2.b"]


def test_a_broken_loss_fails_on_dlogits(rng):
    def mse_without_the_two(pred, y):
        loss, d = mse(pred, y)
        return loss, d / 2

    assert check_loss(mse_without_the_two, rng.normal(size=(4, 3)), rng.normal(size=(4, 3))).failed_tensors \
        == ["dlogits"]
    assert check_loss(LOSSES["bce_with_logits"], rng.normal(size=(4, 1)), np.ones((4, 1))).passed


def test_modes_to_check_finds_the_layers_that_differ(rng):
    x = rng.normal(size=(4, 3))
    assert modes_to_check(Dropout(0.5, rng=rng), x) == ["train", "eval"]
    assert modes_to_check(BatchNorm1d(3), x) == ["train", "eval"]
    assert modes_to_check(Tanh(), x) == [None]


@pytest.mark.parametrize("obj, message", [
    (object(), "object is not a layer: it has no forward, backward, params, grads"),
    (type("NoParams", (), {"forward": lambda s, x: x, "backward": lambda s, d: d, "params": {"W": [1.0]},
                           "grads": {}})(), r"params\['W'\] is list, not a float numpy array"),
])
def test_objects_that_are_not_layers_are_clear_errors(obj, message):
    with pytest.raises(GradcheckError, match=message):
        check_layer(obj, np.ones((2, 2)))


def test_a_layer_that_raises_or_returns_the_wrong_thing_is_a_clear_error(rng):
    class Returns32(Tanh):
        def forward(self, x):
            return super().forward(x).astype(np.float32)

    class WrongDx(Tanh):
        def backward(self, dout):
            return super().backward(dout).T

    with pytest.raises(GradcheckError, match="returned float32 for a float64 input"):
        check_layer(Returns32(), rng.normal(size=(2, 3)))
    with pytest.raises(GradcheckError, match=r"dx shaped like its input \(2, 3\), got shape \(3, 2\)"):
        check_layer(WrongDx(), rng.normal(size=(2, 3)))
    with pytest.raises(LayerError, match="expects input of shape"):
        check_layer(Linear(4, 2, rng=rng), rng.normal(size=(2, 3)))
    with pytest.raises(GradcheckError, match=r"^Bad\(\)\.forward raised UFuncTypeError: ufunc 'add'"):
        check_layer(type("Bad", (Tanh,), {"forward": lambda self, x: x + "a"})(), rng.normal(size=(2, 3)))


def test_report_text_and_dict(rng):
    report = check_layer(CLASSIC_BUGS[4](), rng.normal(size=(5, 4)), label="bias")
    text = str(report)
    assert text.splitlines()[0].split() == ["check", "tensor", "shape", "max", "abs", "err", "max", "rel", "err",
                                            "worst", "verdict", "note"]
    assert text.splitlines()[-1] == "2 passed, 1 failed, 0 warnings, 0 with kinks"
    d = json.loads(json.dumps(report.to_dict()))
    assert d["passed"] is False and [t["verdict"] for t in d["tensors"]] == ["PASS", "PASS", "FAIL"]
    assert d["tensors"][2]["shape"] == [3] and d["settings"]["tol"] == 1e-7


def test_a_stricter_tolerance_never_lets_a_broken_layer_pass():
    layer = TransposedWeightGrad()
    x = np.random.default_rng(0).normal(size=(5, 4))
    for tol in (1e-7, 1e-12, 1e-16):
        report = check_layer(layer, x, tol=tol)
        assert report.row("W").verdict == "FAIL" and not report.passed, tol


def test_the_checkers_python_api_imports_from_the_package_as_the_readme_shows():
    from mlp_manual import gradcheck

    assert (gradcheck.check_layer, gradcheck.check_loss, gradcheck.check_model) == (check_layer, check_loss, check_model)
