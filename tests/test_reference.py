"""Training gives the weights it gave when ``tests/reference/weights.npz`` was written, to float64
rounding, on any CPU and any supported numpy.

The last bits of a BLAS or SIMD kernel depend on the machine (AVX-512 or not, which OpenBLAS
kernel, which numpy release rounds exp and log how), so bit identity is no promise across
machines; it is one on the same machine, and the resume and seed tests hold it there. The
cases train in float64 for at most a few hundred steps: the differences measured between
AVX-512, AVX2 and SSE kernels are at most 1.5e-15 of each tensor's scale, so 1e-8 leaves six
orders of magnitude for other machines and numpy releases, while a change in what training
computes (a formula, a default, the order of the random draws) moves them by far more.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

REFERENCE = Path(__file__).parent / "reference"
sys.path.insert(0, str(REFERENCE))
from cases import CASES  # noqa: E402
from make_weights import trained_state  # noqa: E402

TOLERANCE = 1e-8  # of each tensor's scale, its largest magnitude


def differences(got: dict, expected: dict) -> dict[str, float]:
    """Per tensor, the largest |got - expected| as a fraction of the tensor's scale."""
    return {k: float(np.abs(got[k] - v).max() / max(np.abs(v).max(), np.finfo(v.dtype).tiny))
            for k, v in expected.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_training_reproduces_reference_weights(name, tmp_path):
    with np.load(REFERENCE / "weights.npz") as f:
        expected = {k.partition("/")[2]: f[k] for k in f.files if k.startswith(f"{name}/")}
    got = trained_state(name, CASES[name], tmp_path)
    assert sorted(got) == sorted(expected)
    for k, v in expected.items():
        assert got[k].dtype == v.dtype == np.float64 and got[k].shape == v.shape, k
    off = {k: d for k, d in differences(got, expected).items() if not d <= TOLERANCE}
    assert not off, f"{name}: " + ", ".join(f"{k} differs by {d:.1e} of its scale" for k, d in off.items())


def test_a_change_in_training_is_seen(tmp_path):
    """One more step of the shortest case moves its weights by far more than the tolerance."""
    name = "relu-sgd-constant"
    with np.load(REFERENCE / "weights.npz") as f:
        expected = {k.partition("/")[2]: f[k] for k in f.files if k.startswith(f"{name}/")}
    case = CASES[name]
    longer = {**case, "training": {**case["training"], "epochs": case["training"]["epochs"] + 1}}
    got = trained_state(name, longer, tmp_path)
    assert max(differences(got, expected).values()) > 1e4 * TOLERANCE


def test_cases_cover_every_layer_optimizer_schedule_and_loss():
    from mlp_manual.config import LOSS_NAMES, OPTIMIZER_NAMES, SCHEDULE_NAMES
    from mlp_manual.layers import LAYER_TYPES

    layers = {s if isinstance(s, str) else s["type"] for c in CASES.values() for s in c["model"]["layers"]}
    assert layers == set(LAYER_TYPES)
    assert {c["optimizer"]["name"] for c in CASES.values()} == set(OPTIMIZER_NAMES)
    assert {c.get("schedule", {}).get("name", "constant") for c in CASES.values()} == set(SCHEDULE_NAMES)
    assert {c.get("loss", "softmax_cross_entropy") for c in CASES.values()} == set(LOSS_NAMES)
    assert {c.get("dtype") for c in CASES.values()} == {"float64"}
