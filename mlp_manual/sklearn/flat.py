"""The network's parameters as views of one vector, and its gradients as views of another, so
that an optimizer step and the L2 term are a few operations on two vectors instead of a few per
parameter; and the backward pass that writes every gradient into its view.

Why (benchmarks/sklearn_peer.py, digits, batches of 200 rows into 64-100-10, 2 cores): a step
was about 0.1 ms of matrix products and 0.35 ms of numpy calls, Adam once per parameter (4 a
step) a fifth of the fit. With one vector, and the gradients written in place, a fit of
digits takes 0.34 s instead of 0.39-0.41 s: 0.55 of scikit-learn's time instead of 0.65.

The vector holds every ``coefs_[i]`` (row by row), then every ``intercepts_[i]``, then the other
parameters (normalisation scales and shifts) in the model's order: scikit-learn's order for the
first two, and the order L-BFGS sees.

N = samples, D = features, K = output units, P = parameters in all.
"""

import math

import numpy as np

from ..core import Linear, ReLU
from ..core.namespace import namespace
from .network import linears
from .outputs import loss_and_seed


def slots(model) -> list:
    """(layer, key) of every parameter, in the vector's order."""
    lin = linears(model)
    others = [(layer, k) for layer in model.layers if layer not in lin for k in layer.params]
    return [(layer, "W") for layer in lin] + [(layer, "b") for layer in lin] + others


class Flat:
    """``theta`` (P,) holding every parameter of ``model`` (the layers' params become views of
    it), ``grad`` (P,) whose views are the layers' grads, and ``n_coef``, the length of the
    weight matrices' part (the first)."""

    def __init__(self, model):
        self.slots = slots(model)
        self.shapes = [tuple(layer.params[k].shape) for layer, k in self.slots]
        xp = namespace(self.slots[0][0].params["W"])
        self.theta = xp.concat([xp.reshape(layer.params[k], (-1,)) for layer, k in self.slots])  # (P,), a copy
        self.grad = xp.zeros_like(self.theta)  # (P,)
        self.n_coef = sum(math.prod(shape) for shape in self.shapes[:len(linears(model))])
        for (layer, k), g in zip(self.slots, self._views(self.grad)):
            layer.grads[k] = g
        self.point(self.theta)

    def _views(self, vector: np.ndarray) -> list[np.ndarray]:
        views, start, xp = [], 0, namespace(vector)
        for shape in self.shapes:
            end = start + math.prod(shape)
            views.append(xp.reshape(vector[start:end], shape))  # a view: the vector's memory (numpy, CuPy)
            start = end
        return views

    def point(self, theta: np.ndarray) -> None:
        """Make the layers' parameters views of ``theta`` (P,), the vector from now on."""
        self.theta = theta
        for (layer, k), p in zip(self.slots, self._views(theta)):
            layer.params[k] = p

    def add_l2(self, scale: float) -> float:
        """scikit-learn's L2 term, scale / 2 * sum ||W||^2, added to the gradient; returns its value."""
        W = self.theta[:self.n_coef]  # every weight matrix, flattened
        # fwd: loss += scale / 2 * ||W||^2  =>  dW += scale * W
        self.grad[:self.n_coef] += scale * W
        return 0.5 * scale * float(namespace(W).vecdot(W, W))


def backward(model, dout: np.ndarray) -> None:
    """``model.backward(dout)`` (core/model.py) for a model whose grads are Flat's views: each
    Linear writes dW and db into its views (core/layers.py's formulas), a ReLU gates dout (in
    place on numpy: dout is this pass's own array there), and the first layer's dx is not
    computed."""
    layers = model.layers
    for i in range(len(layers) - 1, -1, -1):
        layer = layers[i]
        if type(layer) is Linear:
            x, dW, db = layer.x, layer.grads["W"], layer.grads["b"]
            # fwd: out = x @ W + b  =>  dW = x.T @ dout, db = dout.sum(0)
            if isinstance(dout, np.ndarray) and isinstance(x, np.ndarray):
                np.matmul(x.T, dout, out=dW)  # (D, H)
                np.sum(dout, axis=0, out=db)  # (H,)
            else:  # a SciPy sparse first input, or arrays of a device (devices.py)
                dW[...] = x.T @ dout
                db[...] = namespace(dout).sum(dout, axis=0)
            if i == 0:
                return
            # fwd: out = x @ W + b  =>  dx = dout @ W.T
            dout = dout @ layer.params["W"].T  # (N, D)
        elif type(layer) is ReLU:
            # fwd: out = max(x, 0)  =>  dx = dout * (x > 0)
            if isinstance(dout, np.ndarray):
                dout *= layer.x > 0
            else:  # the standard multiplies no booleans with floats
                dout = namespace(dout).where(layer.x > 0, dout, 0.0)
        else:
            views = dict(layer.grads)
            dout = layer.backward(dout)
            for k, view in views.items():  # its backward made new arrays: into the views
                view[...] = layer.grads[k]
                layer.grads[k] = view


def loss_and_gradients(model, flat: Flat, output, alpha: float, X, Y: np.ndarray, weights) -> float:
    """The loss of the batch X (N, D), Y (N, K) with sample ``weights`` (N,) or None, plus
    scikit-learn's L2 term; fills ``flat.grad``:

    loss = sum_n w_n loss_n / sum(w) + alpha / (2 sum(w)) sum_i ||W_i||^2
    """
    z = model.forward(X)  # (N, K), the output layer's input
    loss, dz, total = loss_and_seed(output, z, Y, weights)
    backward(model, dz)
    scale = alpha / total
    return loss + flat.add_l2(scale) if scale else loss
