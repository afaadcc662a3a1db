"""Optimizers: they read ``grads`` and update ``params`` in place, dict entry by dict entry.

Their state (step count, per-tensor slots such as momentum) lives in ``self.state`` keyed by
the model's parameter names (``layers.0.W``), so it can be saved and restored exactly.
Weight decay applies to weight matrices only (``is_weight_matrix``), never to biases or norm scales.

Each optimizer declares its options (``options``, in ``mlp_manual/options.py``'s vocabulary): a
config's ``optimizer`` section may set those of the optimizer it names, besides the keys every
optimizer shares (lr, weight_decay, clip_norm, accumulate).

Updates write their intermediate products into two work arrays kept per parameter (``work``)
rather than into fresh temporaries; each line of an update carries the formula it computes. The
measured reason (benchmarks/README.md, "Tricks kept and removed"): a whole training step of the
benchmark network (784-256-256-10, batch 128, float32, Adam) takes 1.87 ms this way and 2.17 to
2.30 ms with the update written as plain numpy expressions, whose temporaries are each one more
pass over memory: a sixth to a fifth of the step.
"""

from typing import ClassVar

import numpy as np

from .errors import ConfigError, did_you_mean
from .options import BOOL, Option, fraction, positive


def is_weight_matrix(p: np.ndarray) -> bool:
    """A weight matrix (ndim >= 2), not a bias or a norm scale: what weight decay shrinks and
    what gradient-flow diagnostics compare across layers."""
    return p.ndim >= 2


class Optimizer:
    """Base class: the step loop, L2 weight decay, and the state dict."""

    slots: tuple[str, ...] = ()
    non_negative: tuple[str, ...] = ()  # slots that are running averages of squares
    options: ClassVar[dict[str, Option]] = {}  # the constructor's arguments a config sets, but weight_decay

    def __init__(self, weight_decay: float = 0.0):
        self.weight_decay = float(weight_decay)
        self.state: dict = {"t": 0, **{s: {} for s in self.slots}}
        self.work_arrays: dict[tuple[str, int], np.ndarray] = {}  # work arrays: not state, never saved

    def step(self, model, lr: float) -> None:
        """Apply one update with learning rate ``lr`` to every parameter of ``model``."""
        lr = float(lr)  # a Python float keeps the parameters' dtype (a numpy float64 would not)
        self.state["t"] += 1
        for name, p, g, k in model.named_params():
            grad = g[k]
            if self.weight_decay and is_weight_matrix(p[k]) and not self.decoupled:
                # L2: d/dW (wd/2 ||W||^2) = wd * W, so grad = g + wd * W (work array 2)
                grad = np.multiply(p[k], self.weight_decay, out=self.work(name, p[k], 2))
                grad += g[k]
            self.update(name, p[k], grad, lr)

    decoupled = False

    def slot(self, slot: str, name: str, like: np.ndarray) -> np.ndarray:
        """The per-tensor state array ``slot`` for parameter ``name``, zeros on first use."""
        d = self.state[slot]
        if name not in d:
            d[name] = np.zeros_like(like)
        return d[name]

    def work(self, name: str, like: np.ndarray, i: int = 0) -> np.ndarray:
        """Work array ``i`` for parameter ``name``, shaped like ``like``; its contents are garbage."""
        w = self.work_arrays.get((name, i))
        if w is None or w.shape != like.shape or w.dtype != like.dtype:
            w = self.work_arrays[name, i] = np.empty_like(like)
        return w

    def update(self, name: str, p: np.ndarray, g: np.ndarray, lr: float) -> None:
        raise NotImplementedError

    def used_slots(self) -> tuple[str, ...]:
        """The slots every parameter has after the first step (``slot`` creates them then)."""
        return self.slots

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays for a checkpoint: ``t`` and ``<slot>/<param name>``."""
        out = {"t": np.array(self.state["t"])}
        for s in self.slots:
            out.update({f"{s}/{n}": a for n, a in self.state[s].items()})
        return out

    def load_state_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        """Inverse of ``state_arrays``."""
        self.state = {"t": int(arrays["t"]), **{s: {} for s in self.slots}}
        for key, a in arrays.items():
            if "/" in key:
                s, n = key.split("/", 1)
                self.state[s][n] = np.array(a)


EPS = positive(1e-8, "added to the root of the squared-gradient average, against a division by 0")


class SGD(Optimizer):
    """v = momentum * v + g;  p -= lr * v  (Nesterov: p -= lr * (g + momentum * v))."""

    slots = ("velocity",)
    options: ClassVar[dict[str, Option]] = {
        "momentum": fraction(0.0, "the share of the last step kept in the next (the velocity's decay)"),
        "nesterov": Option(BOOL, False, help="step from where the velocity leads (Nesterov momentum)")}

    def __init__(self, momentum: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.momentum, self.nesterov = float(momentum), nesterov

    def used_slots(self):
        return self.slots if self.momentum else ()

    def update(self, name, p, g, lr):
        w = self.work(name, p)
        if self.momentum == 0:
            p -= np.multiply(g, lr, out=w)  # p -= lr * g
            return
        v = self.slot("velocity", name, p)
        v *= self.momentum
        v += g
        if self.nesterov:  # p -= lr * (g + momentum * v)
            np.multiply(v, self.momentum, out=w)
            w += g
            w *= lr
        else:  # p -= lr * v
            np.multiply(v, lr, out=w)
        p -= w


class RMSProp(Optimizer):
    """s = rho * s + (1 - rho) g^2;  p -= lr * g / (sqrt(s) + eps)."""

    slots = ("square_avg",)
    non_negative = ("square_avg",)
    options: ClassVar[dict[str, Option]] = {
        "rho": fraction(0.9, "the decay of the running average of squared gradients"),
        "eps": EPS}

    def __init__(self, rho: float = 0.9, eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.rho, self.eps = float(rho), float(eps)

    def update(self, name, p, g, lr):
        s = self.slot("square_avg", name, p)
        tmp, step = self.work(name, p), self.work(name, p, 1)
        s *= self.rho  # s = rho * s + (1 - rho) * g * g
        s += np.multiply(np.multiply(g, 1 - self.rho, out=tmp), g, out=tmp)
        denom = np.sqrt(s, out=tmp)  # p -= lr * g / (sqrt(s) + eps)
        denom += self.eps
        p -= np.divide(np.multiply(g, lr, out=step), denom, out=step)


class Adam(Optimizer):
    """m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
    p -= lr * m_hat / (sqrt(v_hat) + eps), with m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t)."""

    slots = ("m", "v")
    non_negative = ("v",)
    options: ClassVar[dict[str, Option]] = {
        "beta1": fraction(0.9, "the decay of the running average of gradients"),
        "beta2": fraction(0.999, "the decay of the running average of squared gradients"),
        "eps": EPS}

    def __init__(self, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8, weight_decay: float = 0.0):
        super().__init__(weight_decay)
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), float(eps)

    def update(self, name, p, g, lr):
        b1, b2, t = self.beta1, self.beta2, self.state["t"]
        m, v = self.slot("m", name, p), self.slot("v", name, p)
        tmp, step = self.work(name, p), self.work(name, p, 1)
        m *= b1  # m = b1 * m + (1 - b1) * g
        m += np.multiply(g, 1 - b1, out=tmp)
        v *= b2  # v = b2 * v + (1 - b2) * g * g
        v += np.multiply(np.multiply(g, 1 - b2, out=tmp), g, out=tmp)
        # p -= lr * m_hat / (sqrt(v_hat) + eps), m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t):
        denom = np.sqrt(np.divide(v, 1 - b2 ** t, out=tmp), out=tmp)  # sqrt(v_hat)
        denom += self.eps
        p -= np.divide(np.multiply(m, lr / (1 - b1 ** t), out=step), denom, out=step)  # m_hat's divisor in lr


class AdamW(Adam):
    """Adam with decoupled weight decay: p -= lr * wd * p, then the Adam update."""

    decoupled = True

    def update(self, name, p, g, lr):
        if self.weight_decay and is_weight_matrix(p):
            p -= np.multiply(p, lr * self.weight_decay, out=self.work(name, p))  # p -= lr * wd * p
        super().update(name, p, g, lr)


OPTIMIZERS: dict[str, type[Optimizer]] = {"sgd": SGD, "rmsprop": RMSProp, "adam": Adam, "adamw": AdamW}


def make_optimizer(name: str, options: dict | None = None, weight_decay: float = 0.0) -> Optimizer:
    """The optimizer ``name`` (a key of ``OPTIMIZERS``) with its ``options`` (its declared
    options; those left out get the declared default) and ``weight_decay``."""
    if name not in OPTIMIZERS:
        raise ConfigError(f"optimizer.name must be one of {', '.join(OPTIMIZERS)}; got {name!r}"
                          + did_you_mean(str(name), OPTIMIZERS))
    declared = OPTIMIZERS[name].options
    return OPTIMIZERS[name](**{k: (options or {}).get(k, o.default) for k, o in declared.items()},
                            weight_decay=weight_decay)


def l2_norm(*arrays: np.ndarray) -> float:
    """The 2-norm of every entry of ``arrays`` together: sqrt(sum of a * a).

    Each array's sum of squares is taken in its own dtype, so the norm is inf as soon as one
    overflows it, and inf or nan as soon as one entry is not finite.
    """
    return float(np.sqrt(sum(float(np.vdot(a, a)) for a in arrays)))


def grad_norm(model) -> float:
    """||all grads||: the 2-norm of every gradient of ``model`` together, the norm clipping bounds."""
    return l2_norm(*(g[k] for _, _, g, k in model.named_params()))


def clip_grad_norm(model, max_norm: float, total: float | None = None) -> float:
    """Scale every gradient by min(1, max_norm / ||all grads||); return the norm before clipping.
    ``total``, when the caller already has it, is that norm (``grad_norm(model)``)."""
    if total is None:
        total = grad_norm(model)
    if total > max_norm:
        scale = max_norm / (total + 1e-12)
        for _, _, g, k in model.named_params():
            g[k] *= g[k].dtype.type(scale)
    return total
