"""Training is bit for bit what it was when ``tests/reference/weights.npz`` was written, on
the numpy release that wrote it (``numpy_version.txt``). Another release may round its ufuncs
(exp, log, pairwise sums) differently in the last bit, and a few hundred steps carry that
along, so there the weights must agree to 1e-6 relative instead."""

import sys
from pathlib import Path

import numpy as np
import pytest

REFERENCE = Path(__file__).parent / "reference"
sys.path.insert(0, str(REFERENCE))
from cases import CASES  # noqa: E402
from make_weights import numpy_release, trained_state  # noqa: E402

SAME_NUMPY = (REFERENCE / "numpy_version.txt").read_text().strip() == numpy_release()


@pytest.mark.parametrize("name", sorted(CASES))
def test_training_reproduces_reference_weights(name, tmp_path):
    with np.load(REFERENCE / "weights.npz") as f:
        expected = {k.partition("/")[2]: f[k] for k in f.files if k.startswith(f"{name}/")}
    got = trained_state(name, CASES[name], tmp_path)
    assert sorted(got) == sorted(expected)
    for k, v in expected.items():
        assert got[k].dtype == v.dtype, f"{name}: {k} is {got[k].dtype}, was {v.dtype}"
        if SAME_NUMPY:
            assert np.array_equal(got[k], v), f"{name}: {k} differs"
        else:
            np.testing.assert_allclose(got[k], v, rtol=1e-6, atol=1e-9, err_msg=f"{name}: {k}")


def test_cases_cover_every_layer_optimizer_schedule_and_loss():
    from mlp_manual.config import LOSS_NAMES, OPTIMIZER_NAMES, SCHEDULE_NAMES
    from mlp_manual.layers import LAYER_TYPES

    layers = {s if isinstance(s, str) else s["type"] for c in CASES.values() for s in c["model"]["layers"]}
    assert layers == set(LAYER_TYPES)
    assert {c["optimizer"]["name"] for c in CASES.values()} == set(OPTIMIZER_NAMES)
    assert {c.get("schedule", {}).get("name", "constant") for c in CASES.values()} == set(SCHEDULE_NAMES)
    assert {c.get("loss", "softmax_cross_entropy") for c in CASES.values()} == set(LOSS_NAMES)
