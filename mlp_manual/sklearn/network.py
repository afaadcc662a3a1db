"""The network an estimator trains: mlp-manual layers whose linear weights are the arrays of
scikit-learn's ``coefs_`` and ``intercepts_``, and scikit-learn's initialisation of them. (The
loss and gradients of a batch: flat.py.)

``coefs_[i]`` (D_i, D_i+1) and ``intercepts_[i]`` (D_i+1,) are the ``W`` and ``b`` of the i-th
linear layer, the same arrays: an optimizer step moves both, and ``attach`` makes arrays a
user assigned to ``coefs_`` the layers' own. (During a fit they are views of one vector: flat.py.)

N = samples, D = features, K = output units.
"""

import copy

import numpy as np

from ..core import Linear
from ..model import Model, build_model

# scikit-learn's names of the activations mlp-manual calls otherwise
ACTIVATIONS = {"logistic": "sigmoid"}


def layer_specs(sizes: list[int], activation: str, normalization, dropout) -> list[dict]:
    """Config layer specs: for each hidden size a linear layer, the normalization (if any), the
    activation and a dropout (if p > 0); then the output linear, whose width the targets decide."""
    specs = []
    for units in sizes:
        specs.append({"type": "linear", "units": int(units)})
        if normalization is not None:
            specs.append({"type": normalization})
        specs.append({"type": ACTIVATIONS.get(activation, activation)})
        if dropout:
            specs.append({"type": "dropout", "p": float(dropout)})
    return [*specs, {"type": "linear"}]


def glorot(random_state: np.random.RandomState, fan_in: int, fan_out: int, activation: str, dtype):
    """scikit-learn's initialisation of one linear layer: W (fan_in, fan_out), then b (fan_out,),
    uniform in +-sqrt(6 / (fan_in + fan_out)) (2 instead of 6 for the logistic activation)."""
    bound = np.sqrt((2.0 if activation == "logistic" else 6.0) / (fan_in + fan_out))
    W = random_state.uniform(-bound, bound, (fan_in, fan_out))
    b = random_state.uniform(-bound, bound, fan_out)
    return W.astype(dtype, copy=False), b.astype(dtype, copy=False)


def build_network(est, units: list[int], rng: np.random.Generator, dtype) -> Model:
    """The model the parameters of ``est`` describe for ``units`` = [D, hidden sizes..., K]; its
    linear layers' weights drawn by ``est.init`` (replaced by scikit-learn's when it is None)."""
    specs = layer_specs(units[1:-1], est.activation, est.normalization, est.dropout)
    return build_model(specs, units[0], units[-1], rng, np.dtype(dtype), est.init or "he_uniform")


def network_copy(model, arrays: bool = False):
    """A copy of ``model`` with its own layers and parameter dicts (and its own arrays with
    ``arrays``), without gradients or forward caches."""
    model = copy.copy(model)
    model.layers = [copy.copy(layer) for layer in model.layers]
    model.drop_caches()
    for layer in model.layers:
        layer.params = {k: v.copy() if arrays else v for k, v in layer.params.items()}
        layer.buffers = {k: v.copy() if arrays else v for k, v in layer.buffers.items()}
        # a pickle's copy carries no gradients (set again on loading); a snapshot that predicts has zeros
        layer.grads = {k: np.zeros_like(v) for k, v in layer.params.items()} if arrays else {}
    return model


def linears(model: Model) -> list[Linear]:
    """The model's linear layers, in order: coefs_[i] is the W of the i-th."""
    return [layer for layer in model.layers if isinstance(layer, Linear)]


def attach(model: Model, coefs: list, intercepts: list) -> None:
    """Make ``coefs[i]`` and ``intercepts[i]`` the W and b of the model's i-th linear layer."""
    for layer, W, b in zip(linears(model), coefs, intercepts):
        layer.params["W"], layer.params["b"] = W, b
