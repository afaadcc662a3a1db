"""What the trainer computes differently from the core's plain forms, for speed; each gives the
same numbers bit for bit (``tests/test_fast_paths.py``), and each has its measured reason
(benchmarks/README.md, "Tricks kept and removed").

- The optimizers compute each formula of ``core/optimizers.py`` into two work arrays kept per
  parameter instead of into fresh temporaries, each one more pass over memory: a training step
  of the benchmark network (784-256-256-10, batch 128, float32, Adam) takes 1.87 ms this way and
  2.17 to 2.30 ms with the plain expressions, a sixth to a fifth of the step. Each class extends
  its plain one.
- The norm of all gradients together takes each array's sum of squares from BLAS's dot product,
  ``np.vdot``, where the core's standard form, ``vecdot`` of the flattened array, spends about 2
  µs more a call in numpy's wrapper: 27 against 41 µs for the six arrays of the benchmark
  network, about 1% of its step; the same numbers.
- A ReLU's backward on numpy arrays multiplies by its boolean mask, ``dout * (x > 0)``: numpy
  casts the mask inside the product, one pass over memory, where the standard form (the array
  API multiplies no booleans with floats) first makes a float copy of the mask: 39 against 47
  µs a call at 128 x 256 inside a training step, 16 µs of a 1.9 ms step of the benchmark
  network.
- The backward skips the gradient with respect to the data, which nobody needs: for a first
  Linear layer, dx = dout @ W.T is the largest product of the backward pass (a quarter of the
  step's multiply-adds for 784-256-256-10): a step takes 1.63-1.68 ms without it and 1.94-2.14
  ms with it (SGD, MNIST).
"""

import math

import numpy as np

from .. import core
from ..core.namespace import namespace
from ..optimizers import optimizer_arguments


class WorkArrays:
    """Work arrays per parameter: contents are garbage; never saved."""

    def work(self, name: str, like: np.ndarray, i: int = 0) -> np.ndarray:
        arrays = self.__dict__.setdefault("work_arrays", {})
        w = arrays.get((name, i))
        if w is None or w.shape != like.shape or w.dtype != like.dtype:
            w = arrays[name, i] = np.empty_like(like)
        return w

    def step(self, parameters, lr):
        """The plain step, with the L2 term of weight decay computed in a work array."""
        lr = float(lr)
        self.state["t"] += 1
        for name, p, g in parameters:
            if self.weight_decay and p.ndim >= 2 and not self.decoupled:
                grad = np.multiply(p, self.weight_decay, out=self.work(name, p, 2))  # g + wd * p
                grad += g
                g = grad
            self.update(name, p, g, lr)

    def kept_slot(self, slot: str, name: str, like: np.ndarray) -> np.ndarray:
        """The state ``slot`` of parameter ``name``, created as zeros and then updated in place."""
        found = self.state[slot]
        if name not in found:
            found[name] = np.zeros_like(like)
        return found[name]


class SGD(WorkArrays, core.SGD):
    def update(self, name, p, g, lr):
        w = self.work(name, p)
        if self.momentum == 0:
            p -= np.multiply(g, lr, out=w)  # p -= lr * g
            return
        v = self.kept_slot("velocity", name, p)
        v *= self.momentum  # v = momentum * v + g
        v += g
        if self.nesterov:  # p -= lr * (g + momentum * v)
            np.multiply(v, self.momentum, out=w)
            w += g
            w *= lr
        else:  # p -= lr * v
            np.multiply(v, lr, out=w)
        p -= w


class RMSProp(WorkArrays, core.RMSProp):
    def update(self, name, p, g, lr):
        s = self.kept_slot("square_avg", name, p)
        tmp, step = self.work(name, p), self.work(name, p, 1)
        s *= self.rho  # s = rho * s + (1 - rho) * g * g
        s += np.multiply(np.multiply(g, 1 - self.rho, out=tmp), g, out=tmp)
        denom = np.sqrt(s, out=tmp)  # p -= lr * g / (sqrt(s) + eps)
        denom += self.eps
        p -= np.divide(np.multiply(g, lr, out=step), denom, out=step)


class Adam(WorkArrays, core.Adam):
    def update(self, name, p, g, lr):
        b1, b2, t = self.beta1, self.beta2, self.state["t"]
        m, v = self.kept_slot("m", name, p), self.kept_slot("v", name, p)
        tmp, step = self.work(name, p), self.work(name, p, 1)
        m *= b1  # m = b1 * m + (1 - b1) * g
        m += np.multiply(g, 1 - b1, out=tmp)
        v *= b2  # v = b2 * v + (1 - b2) * g * g
        v += np.multiply(np.multiply(g, 1 - b2, out=tmp), g, out=tmp)
        denom = np.sqrt(np.divide(v, 1 - b2 ** t, out=tmp), out=tmp)  # sqrt(v_hat)
        denom += self.eps
        p -= np.divide(np.multiply(m, lr / (1 - b1 ** t), out=step), denom, out=step)  # lr / (1 - b1^t) * m / ...


class AdamW(Adam, core.AdamW):
    def update(self, name, p, g, lr):
        if self.weight_decay and p.ndim >= 2:
            p -= np.multiply(p, lr * self.weight_decay, out=self.work(name, p))  # p -= lr * wd * p
        Adam.update(self, name, p, g, lr)


FAST = {core.SGD: SGD, core.RMSProp: RMSProp, core.Adam: Adam, core.AdamW: AdamW}  # plain -> work arrays


def fast_optimizer(name: str, options: dict | None = None, weight_decay: float = 0.0,
                   numpy: bool = True) -> core.Optimizer:
    """The optimizer ``name`` as the trainer runs it: its work-array version where there is one
    and the parameters are ``numpy`` arrays (the work arrays are numpy's ``out=``), else its
    plain form."""
    row, kwargs = optimizer_arguments(name, options, weight_decay)
    return (FAST.get(row.cls, row.cls) if numpy else row.cls)(**kwargs)


def relu_backward(layer: core.ReLU, dout: np.ndarray) -> np.ndarray:
    """``ReLU.backward`` with the boolean mask multiplied in as it is: numpy casts it inside the
    product."""
    x = layer.saved(layer.x)
    # fwd: out = max(x, 0)  =>  dx = dout * (x > 0)
    return dout * (x > 0)


def grad_norm(grads) -> float:
    """``core.grad_norm`` of numpy arrays, by ``np.vdot``: the same value, sooner."""
    return math.sqrt(sum(float(np.vdot(g, g)) for g in grads))


def backward_without_data_grad(model, dout: np.ndarray) -> None:
    """``model.backward(dout)`` (core/model.py) but for the first layer's dx: a first Linear
    layer fills its grads alone, as its backward does (core/layers.py), without its dx; and a
    ReLU's backward on numpy arrays in numpy's one pass."""
    for layer in reversed(model.layers[1:]):
        dout = relu_backward(layer, dout) if type(layer) is core.ReLU and type(dout) is np.ndarray \
            else layer.backward(dout)
    first = model.layers[0]
    if type(first) is not core.Linear:
        first.backward(dout)
        return
    x = first.saved(first.x)
    # fwd: out = x @ W + b  =>  dW = x.T @ dout, db = dout.sum(0)
    first.grads["W"] = x.T @ dout  # (D, H)
    if first.bias:
        first.grads["b"] = namespace(dout).sum(dout, axis=0)  # (H,)
