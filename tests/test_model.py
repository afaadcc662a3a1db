"""The sequential model: independent outputs across calls, and backward without the data's gradient."""

import numpy as np

from mlp_manual.layers import Linear, ReLU
from mlp_manual.model import Model

F64 = np.float64


def mlp(rng, dtype=F64):
    return Model([Linear(5, 8, rng=rng, dtype=dtype), ReLU(), Linear(8, 8, rng=rng, dtype=dtype), ReLU(),
                  Linear(8, 3, rng=rng, dtype=dtype)])


def by_hand(model, x):
    """The forward pass written out from the parameters."""
    (W1, b1), (W2, b2), (W3, b3) = [(layer.params["W"], layer.params["b"]) for layer in model.layers[::2]]
    h = np.maximum(x @ W1 + b1, 0)
    h = np.maximum(h @ W2 + b2, 0)
    return h @ W3 + b3


def test_two_forwards_on_different_inputs_return_independent_correct_arrays(rng):
    model = mlp(rng)
    x1, x2 = rng.normal(size=(4, 5)), rng.normal(size=(6, 5))
    out1 = model.forward(x1)
    kept = out1.copy()
    out2 = model.forward(x2)
    assert np.array_equal(out1, kept) and not np.shares_memory(out1, out2)
    assert np.allclose(out1, by_hand(model, x1)) and np.allclose(out2, by_hand(model, x2))


def test_float32_model_keeps_float32_through_forward_and_backward(rng):
    model = mlp(rng, np.float32)
    out = model.forward(rng.normal(size=(4, 5)).astype(np.float32))
    dx = model.backward(np.ones_like(out))
    assert out.dtype == np.float32 and dx.dtype == np.float32
    assert all(g.dtype == np.float32 for _, _, g in model.parameters())
