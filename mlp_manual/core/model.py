"""A model: layers run forward in order and backward in reverse.

N = batch size, D = input features, K = output units.
"""

import numpy as np

from .layers import Layer


class Model:
    """Layers applied in sequence. Inputs: layers, objects that follow the layer contract
    (core/layers.py)."""

    def __init__(self, layers: list[Layer]):
        self.layers = list(layers)

    def forward(self, x: np.ndarray) -> np.ndarray:
        """x (N, D) -> output (N, K)."""
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, dout: np.ndarray) -> np.ndarray | None:
        """Seeded with dloss/doutput (N, K): fills every layer's grads; returns dloss/dx (N, D)."""
        # go in the reverse order of the forward pass
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout

    def parameters(self):
        """(name, parameter, its gradient) for every parameter, named ``layers.<index>.<key>``."""
        for i, layer in enumerate(self.layers):
            for k in layer.params:
                yield f"layers.{i}.{k}", layer.params[k], layer.grads[k]

    def train(self, mode: bool = True) -> "Model":
        """Every layer in training mode (or evaluation mode with ``mode=False``)."""
        for layer in self.layers:
            layer.train(mode)
        return self

    def eval(self) -> "Model":
        return self.train(False)

    def __repr__(self) -> str:
        inner = "".join(f"\n  ({i}): {layer!r}" for i, layer in enumerate(self.layers))
        return f"Model({inner}\n)"
