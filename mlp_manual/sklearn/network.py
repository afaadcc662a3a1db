"""The network an estimator trains: mlp-manual layers whose linear weights are the arrays of
scikit-learn's ``coefs_`` and ``intercepts_``, its initialisation, and the loss and gradients
of one batch, computed by the layers' hand-written backward passes.

``coefs_[i]`` (D_i, D_i+1) and ``intercepts_[i]`` (D_i+1,) are the ``W`` and ``b`` of the i-th
linear layer, the same arrays: an optimizer step moves both, and ``attach`` makes arrays a
user assigned to ``coefs_`` the layers' own.

N = samples, D = features, K = output units.
"""

import numpy as np

from ..core import Linear
from ..model import Model, build_model
from ..training.fast_paths import backward_without_data_grad
from .outputs import loss_and_seed

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


def build_network(specs: list[dict], units: list[int], rng: np.random.Generator, dtype, init: str) -> Model:
    """The model of ``specs`` for ``units`` = [D, hidden sizes..., K]; its linear layers'
    weights drawn by ``init`` (replaced by ``attach`` where scikit-learn's are used)."""
    return build_model(specs, units[0], units[-1], rng, np.dtype(dtype), init)


def linears(model: Model) -> list[Linear]:
    return [layer for layer in model.layers if isinstance(layer, Linear)]


def attach(model: Model, coefs: list, intercepts: list) -> None:
    """Make ``coefs[i]`` and ``intercepts[i]`` the W and b of the model's i-th linear layer."""
    for layer, W, b in zip(linears(model), coefs, intercepts):
        layer.params["W"], layer.params["b"] = W, b


def other_parameters(model: Model) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, parameter, gradient) of every parameter that is not a linear layer's (the scale
    and shift of normalisation layers)."""
    return [(name, p, g) for (name, p, g), layer in _with_layers(model) if not isinstance(layer, Linear)]


def _with_layers(model: Model):
    for i, layer in enumerate(model.layers):
        for k in layer.params:
            yield (f"layers.{i}.{k}", layer.params[k], layer.grads[k]), layer


def loss_and_gradients(model: Model, output, alpha: float, X, Y: np.ndarray, weights) -> float:
    """The loss of the batch X (N, D), Y (N, K) with sample ``weights`` (N,) or None, plus
    scikit-learn's L2 term alpha / 2 * sum ||W||^2 / sum(weights); fills every layer's grads.

    loss = sum_n w_n loss_n / sum(w) + alpha / (2 sum(w)) sum_i ||W_i||^2
    """
    z = model.forward(X)  # (N, K), the output layer's input
    loss, dz, total = loss_and_seed(output, z, Y, weights)
    backward_without_data_grad(model, dz)
    scale = alpha / total
    if scale:
        for layer in linears(model):
            W = layer.params["W"]
            loss += 0.5 * scale * float(np.vdot(W, W))
            # fwd: loss += alpha / (2 sum(w)) ||W||^2  =>  dW += alpha / sum(w) * W
            layer.grads["W"] += scale * W
    return loss
