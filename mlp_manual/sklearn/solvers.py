"""scikit-learn's own formulas of its two stochastic solvers, stepping every parameter at once
as one vector (flat.py). They differ from the core's textbook forms (core/optimizers.py) where
scikit-learn's do, so that the same data and parameters take the same steps:

- sgd keeps a velocity that holds the learning rate: v = momentum * v - lr * g, then
  p += v (Nesterov: p += momentum * v - lr * g); a rate changed by a schedule applies to new
  gradients only.
- adam folds both bias corrections into the rate and adds epsilon to the raw root:
  lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t),  p -= lr_t * m / (sqrt(v) + eps).

Each writes into two work vectors instead of fresh temporaries (the trainer's reason,
training/fast_paths.py) where the vector is numpy's; on a device (devices.py) it computes the
same expressions, in the same order, in the standard's operators. ``place(device)`` moves a
solver's state to a device (or back to numpy) between fits. The other solvers (adamw, rmsprop)
are the trainer's optimizers, given the vector as their one parameter.

P = parameters in all.
"""

import math

import numpy as np

from ..core.namespace import namespace
from ..devices import Device, move, move_optimizer_state
from ..training.fast_paths import fast_optimizer


class SGD:
    """scikit-learn's sgd: ``step(theta, grad, lr)`` moves theta (P,) in place by grad (P,)."""

    def __init__(self, momentum: float, nesterov: bool):
        self.momentum, self.nesterov = float(momentum), bool(nesterov)
        self.velocity = self.work = None

    def place(self, dev: Device) -> None:
        _place(self, dev, ("velocity",))

    def step(self, theta: np.ndarray, grad: np.ndarray, lr: float) -> None:
        if self.velocity is None or self.velocity.shape != theta.shape:
            self.velocity = namespace(theta).zeros_like(theta)
        v = self.velocity
        if not isinstance(theta, np.ndarray):
            v *= self.momentum  # v = momentum * v - lr * g
            v -= grad * lr
            theta += (-(grad * lr) + self.momentum * v) if self.nesterov else v
            return
        w = self.work = _work(self.work, theta)
        np.multiply(grad, lr, out=w)  # w = lr * g
        v *= self.momentum  # v = momentum * v - lr * g
        v -= w
        if self.nesterov:  # p += momentum * v - lr * g
            w *= -1
            w += self.momentum * v
            theta += w
        else:  # p += v
            theta += v


class Adam:
    """scikit-learn's adam: ``step(theta, grad, lr)`` moves theta (P,) in place by grad (P,)."""

    def __init__(self, beta_1: float, beta_2: float, epsilon: float):
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.t, self.m, self.v, self.work = 0, None, None, None

    def place(self, dev: Device) -> None:
        _place(self, dev, ("m", "v"))

    def step(self, theta: np.ndarray, grad: np.ndarray, lr: float) -> None:
        if self.m is None or self.m.shape != theta.shape:
            self.m, self.v = namespace(theta).zeros_like(theta), namespace(theta).zeros_like(theta)
        b1, b2, m, v = self.beta_1, self.beta_2, self.m, self.v
        self.t += 1
        if not isinstance(theta, np.ndarray):
            m *= b1  # m = b1 * m + (1 - b1) * g
            m += grad * (1 - b1)
            v *= b2  # v = b2 * v + (1 - b2) * g^2
            v += (grad * grad) * (1 - b2)
            rate = lr * math.sqrt(1 - b2 ** self.t) / (1 - b1 ** self.t)  # lr_t
            theta -= (m / (namespace(v).sqrt(v) + self.epsilon)) * rate  # p -= lr_t * m / (sqrt(v) + eps)
            return
        w = self.work = _work(self.work, theta)
        m *= b1  # m = b1 * m + (1 - b1) * g
        m += np.multiply(grad, 1 - b1, out=w)
        v *= b2  # v = b2 * v + (1 - b2) * g^2
        v += np.multiply(np.multiply(grad, grad, out=w), 1 - b2, out=w)
        rate = lr * np.sqrt(1 - b2 ** self.t) / (1 - b1 ** self.t)  # lr_t
        np.sqrt(v, out=w)  # p -= lr_t * m / (sqrt(v) + eps)
        w += self.epsilon
        np.divide(m, w, out=w)
        w *= rate
        theta -= w


class TrainerOptimizer:
    """One of the trainer's optimizers, stepping the vector as its one parameter."""

    def __init__(self, name: str, options: dict):
        self.name, self.options = name, options
        self.optimizer = fast_optimizer(name, options)

    def step(self, theta: np.ndarray, grad: np.ndarray, lr: float) -> None:
        """Move theta (P,) in place by grad (P,)."""
        self.optimizer.step([("theta", theta, grad)], lr)

    def place(self, dev: Device) -> None:
        """The optimizer's state on ``dev``, and its numpy form (work arrays) or its plain one."""
        state = self.optimizer.state
        self.optimizer = fast_optimizer(self.name, self.options, numpy=dev.on_host)
        self.optimizer.state = state
        move_optimizer_state(self.optimizer, dev)


def _work(work, theta: np.ndarray) -> np.ndarray:
    """A numpy work vector shaped like ``theta``: ``work`` itself when it is one."""
    return work if isinstance(work, np.ndarray) and work.shape == theta.shape else np.empty_like(theta)


def _place(solver, dev: Device, names: tuple[str, ...]) -> None:
    """``solver``'s state vectors ``names`` on ``dev``; its work vector dropped."""
    for name in names:
        if getattr(solver, name) is not None:
            setattr(solver, name, move(getattr(solver, name), dev))
    solver.work = None


def solver(est):
    """The optimizer of ``est.solver`` with the estimator's options."""
    if est.solver == "sgd":
        return SGD(est.momentum, est.nesterovs_momentum)
    if est.solver == "adam":
        return Adam(est.beta_1, est.beta_2, est.epsilon)
    options = {"beta1": est.beta_1, "beta2": est.beta_2, "eps": est.epsilon} if est.solver == "adamw" else \
        {"eps": est.epsilon}
    return TrainerOptimizer(est.solver, options)
