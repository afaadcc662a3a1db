"""The precision check: float32 against float64 on the same inputs. Every built-in passes; a
layer whose gradients are right but whose formula loses float32 digits fails."""

import json

import numpy as np
import pytest
from broken_layers import LayerNormNaiveVariance
from conftest import invoke_cli

from mlp_manual.cli.gradcheck import main
from mlp_manual.gradcheck.check import check_layer
from mlp_manual.gradcheck.precision import (
    EPS32,
    SAFETY,
    check_precision,
    check_precision_builtins,
    format_precision,
)
from mlp_manual.gradcheck.suites import LAYER_SHAPES
from mlp_manual.layers import LAYER_TYPES, LayerNorm, Linear


@pytest.mark.slow  # a battery across 100 seeds
def test_every_builtin_passes_the_precision_check_across_seeds_0_to_99():
    """With test_no_false_alarm_on_any_builtin_across_seeds_0_to_99 in test_gradcheck.py (finite
    differences, the same seeds and shapes), every built-in passes both checks."""
    for seed in range(100):
        reports = check_precision_builtins(seed=seed, layer_shapes=((1, 3), (3, 4)))
        bad = [(r.label, r.worst.name, r.worst.err, r.worst.bound) for r in reports if not r.passed]
        assert not bad, f"seed {seed}: {bad}"
        assert max(r.worst.ratio for r in reports) < 0.75, seed  # err / bound: a margin, not a coin flip


def test_the_default_suite_covers_every_layer_shape_and_mode():
    labels = [r.label for r in check_precision_builtins()]
    for name in LAYER_TYPES:
        assert any(label.startswith(f"{name} x{LAYER_SHAPES[1]}") for label in labels), name
    assert "dropout x(6, 3) train" in labels and "batchnorm x(6, 3) eval" in labels


def large_mean_input():
    """Rows whose mean (20) is large next to their spread (1): E[x^2] and E[x]^2 agree in their
    first two or three digits, so the variance as their difference keeps only the rest. Much
    larger means show the same cancellation in float64 too, 1e9 times smaller, where the
    finite differences begin to WARN about it."""
    return 20 + np.random.default_rng(0).normal(size=(6, 5))


def shared_gamma(*layers):
    gamma = np.random.default_rng(1).normal(size=5) * 0.5 + 1
    for layer in layers:
        layer.params["gamma"] = gamma.astype(np.float32)
    return layers


def test_naive_variance_passes_finite_differences_but_fails_the_precision_check():
    naive, builtin = shared_gamma(LayerNormNaiveVariance(5), LayerNorm(5))
    x = large_mean_input()
    fd = check_layer(naive, x)
    assert fd.passed and {r.verdict for r in fd.rows} == {"PASS"}, str(fd)  # its gradients are right

    bad = check_precision(naive, x)
    assert not bad.passed
    failed = {r.name for r in bad.rows if not r.passed}
    assert {"out", "dx", "gamma"} <= failed and "beta" not in failed  # beta's gradient never sees the variance
    assert bad.worst.ratio > 2  # well outside the bound, not at its edge

    good = check_precision(builtin, x)
    assert good.passed and good.worst.ratio < 0.1
    assert bad.row("out").kappa == pytest.approx(good.row("out").kappa, rel=0.5)  # the same problem


def test_bound_follows_the_documented_rule():
    layer = Linear(3, 4, rng=np.random.default_rng(0))
    x = np.random.default_rng(1).normal(size=(5, 3))
    report = check_precision(layer, x)
    assert [r.name for r in report.rows] == ["out", "dx", "W", "b"]
    n = 5 * 4  # the largest array the layer reads: out's upstream gradient (5, 4)
    for row in report.rows:
        assert row.kappa >= 1
        assert row.bound == pytest.approx(SAFETY * EPS32 * np.sqrt(n) * row.kappa)
        assert 0 < row.err < row.bound


def test_the_checked_layer_is_left_untouched():
    layer = LayerNorm(5)
    before = layer.params["gamma"].copy()
    check_precision(layer, large_mean_input())
    assert layer.xhat is None and layer.params["gamma"].dtype == np.float32
    np.testing.assert_array_equal(layer.params["gamma"], before)


def test_the_table_names_the_worst_tensor_of_each_check():
    text = format_precision([check_precision(LayerNormNaiveVariance(5), large_mean_input(), label="naive")])
    lines = text.splitlines()
    assert lines[0].split() == ["check", "tensor", "rel", "err", "bound", "kappa", "verdict"]
    assert lines[2].startswith("naive  ") and lines[2].endswith("FAIL")
    assert lines[-1].startswith("0 passed, 1 failed: float32 against float64 on the same inputs")


SHIFTED = '''
class ShiftedIdentity:
    """out = (x + 1e4) - 1e4: the identity, with the low digits of x lost in the large sum."""
    def __init__(self):
        self.params, self.grads = {}, {}
    def forward(self, x):
        return (x + x.dtype.type(1e4)) - x.dtype.type(1e4)
    def backward(self, dout):
        return dout
'''


def test_cli_precision_on_the_builtins_and_on_a_failing_layer(tmp_path, monkeypatch):
    result = invoke_cli(main, "--precision")
    assert result.exit_code == 0
    assert result.output.splitlines()[-1].startswith(f"{len(check_precision_builtins())} passed, 0 failed")
    (tmp_path / "shifted.py").write_text(SHIFTED)
    monkeypatch.chdir(tmp_path)
    result = invoke_cli(main, "--precision", "--layer", "shifted:ShiftedIdentity", "--input-shape", "4,3")
    assert result.exit_code == 1
    assert "shifted:ShiftedIdentity x(4, 3)  out " in result.output and "0 passed, 1 failed" in result.output
    result = invoke_cli(main, "--precision", "--layer", "shifted:ShiftedIdentity", "--input-shape", "4,3", "--json")
    report = json.loads(result.output)
    assert result.exit_code == 1 and report["passed"] is False
    assert report["checks"][0]["worst"] == "out"
    out = report["checks"][0]["tensors"][0]
    assert out["name"] == "out" and out["verdict"] == "FAIL" and out["err"] > out["bound"] > 0


def test_cli_precision_on_every_layer_of_a_config():
    from pathlib import Path

    config = Path(__file__).resolve().parents[1] / "configs" / "moons.yaml"
    result = invoke_cli(main, "--precision", "--config", str(config), "-q")
    assert result.exit_code == 0
    assert result.output.splitlines()[-1].startswith("5 passed, 0 failed")


def test_cli_precision_on_a_residual_config_checks_each_block_whole():
    from pathlib import Path

    config = Path(__file__).resolve().parents[1] / "configs" / "mnist1d_residual.yaml"
    result = invoke_cli(main, "--precision", "--config", str(config), "--json")
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["passed"] is True
    assert [c["label"].split()[:2] for c in report["checks"]][:3] == [["layers.0", "linear"], ["layers.1", "residual"],
                                                                      ["layers.2", "residual"]]
    block = report["checks"][1]
    assert {t["name"] for t in block["tensors"]} == {"out", "dx", "0.gamma", "0.beta", "1.W", "1.b", "4.W", "4.b"}
