"""Optimizers: each reads the gradients and moves the parameters in place, by its textbook
formula. Their state (the step count t, per-parameter slots such as momentum) is a dict keyed
by the parameters' names, so it can be saved and restored exactly.

Weight decay shrinks weight matrices only (ndim >= 2), never biases or norm scales: as a
gradient term (L2) in every optimizer but AdamW, which decays the weights apart from the step.
"""

import math

import numpy as np

from .namespace import namespace


class Optimizer:
    """The step loop, L2 weight decay, and the state dict; ``update`` is the optimizer's formula."""

    slots: tuple[str, ...] = ()  # the per-parameter state
    decoupled = False  # weight decay apart from the gradient (AdamW)

    def __init__(self, weight_decay: float = 0.0):
        self.weight_decay = float(weight_decay)
        self.state: dict = {"t": 0, **{s: {} for s in self.slots}}

    def step(self, parameters, lr: float) -> None:
        """One update with learning rate ``lr`` of each (name, parameter, gradient) of ``parameters``."""
        lr = float(lr)  # a Python float keeps the parameters' dtype (a numpy float64 would not)
        self.state["t"] += 1
        for name, p, g in parameters:
            if self.weight_decay and p.ndim >= 2 and not self.decoupled:
                g = g + self.weight_decay * p  # L2: d/dW (wd/2 ||W||^2) = wd * W
            self.update(name, p, g, lr)

    def update(self, name: str, p: np.ndarray, g: np.ndarray, lr: float) -> None:
        raise NotImplementedError

    def slot(self, slot: str, name: str, like: np.ndarray) -> np.ndarray:
        """The state ``slot`` of parameter ``name``: zeros before its first step."""
        found = self.state[slot]
        return found[name] if name in found else namespace(like).zeros_like(like)


class SGD(Optimizer):
    """v = momentum * v + g;  p -= lr * v  (Nesterov: p -= lr * (g + momentum * v))."""

    slots = ("velocity",)

    def __init__(self, momentum: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.momentum, self.nesterov = float(momentum), nesterov

    def update(self, name, p, g, lr):
        if self.momentum == 0:
            p -= lr * g
            return
        v = self.state["velocity"][name] = self.momentum * self.slot("velocity", name, p) + g
        p -= lr * (g + self.momentum * v) if self.nesterov else lr * v


class RMSProp(Optimizer):
    """s = rho * s + (1 - rho) g^2;  p -= lr * g / (sqrt(s) + eps)."""

    slots = ("square_avg",)

    def __init__(self, rho: float = 0.9, eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.rho, self.eps = float(rho), float(eps)

    def update(self, name, p, g, lr):
        s = self.state["square_avg"][name] = self.rho * self.slot("square_avg", name, p) + (1 - self.rho) * g * g
        p -= lr * g / (namespace(s).sqrt(s) + self.eps)


class Adam(Optimizer):
    """m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
    p -= lr * m_hat / (sqrt(v_hat) + eps), with m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t)."""

    slots = ("m", "v")

    def __init__(self, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), float(eps)

    def update(self, name, p, g, lr):
        b1, b2, t = self.beta1, self.beta2, self.state["t"]
        m = self.state["m"][name] = b1 * self.slot("m", name, p) + (1 - b1) * g
        v = self.state["v"][name] = b2 * self.slot("v", name, p) + (1 - b2) * g * g
        # m_hat's divisor is folded into the rate: lr * m_hat = lr / (1 - b1^t) * m
        p -= lr / (1 - b1 ** t) * m / (namespace(v).sqrt(v / (1 - b2 ** t)) + self.eps)


class AdamW(Adam):
    """Adam with decoupled weight decay: p -= lr * wd * p (weight matrices), then the Adam step."""

    decoupled = True

    def update(self, name, p, g, lr):
        if self.weight_decay and p.ndim >= 2:
            p -= lr * self.weight_decay * p
        super().update(name, p, g, lr)


def grad_norm(grads) -> float:
    """||all grads||: the 2-norm of every entry of ``grads`` together, sqrt(sum of g * g). Each
    array's sum is taken in its own dtype, so the norm is inf as soon as one overflows it, and
    inf or nan as soon as one entry is not finite."""
    return math.sqrt(sum(_squares(g) for g in grads))


def _squares(g) -> float:
    """sum(g * g) over every entry of ``g``, in its dtype."""
    xp = namespace(g)
    flat = xp.reshape(g, (-1,))  # (g.size,)
    return float(xp.vecdot(flat, flat))


def clip_grad_norm(grads, max_norm: float, total: float | None = None) -> float:
    """Scale every gradient by min(1, max_norm / ||all grads||), in place; the norm before
    clipping. ``total``: that norm, when the caller has it already."""
    grads = list(grads)
    if total is None:
        total = grad_norm(grads)
    if total > max_norm:
        scale = max_norm / (total + 1e-12)
        for g in grads:
            g *= scale
    return total
