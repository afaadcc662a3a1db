"""The training loop, in llm.c's shape: for each batch, forward, loss, backward, clip, step;
then a history of each epoch's mean training loss.

N = samples, B = batch size, D = features, K = output units.
"""

from collections.abc import Callable, Iterator

import numpy as np

from .model import Model
from .namespace import like, namespace
from .optimizers import Optimizer, clip_grad_norm


def batches(X: np.ndarray, y: np.ndarray, batch_size: int, rng: np.random.Generator) -> Iterator:
    """One epoch of (X, y) in batches of ``batch_size`` rows, in an order ``rng`` shuffles anew
    for each epoch: (Xb (B, D), yb (B, ...)) pairs."""
    n, xp = X.shape[0], namespace(X)
    order = rng.permutation(n)  # (N,), drawn on the CPU
    for start in range(0, n, batch_size):
        rows = like(X, order[start:start + batch_size])  # (B,), beside X
        yield xp.take(X, rows, axis=0), xp.take(y, rows, axis=0)


def train(model: Model, loss: Callable, optimizer: Optimizer, data: Callable[[], Iterator], *, epochs: int,
          lr: Callable[[int], float], clip_norm: float | None = None,
          on_epoch: Callable[[dict], None] | None = None) -> list[dict]:
    """Train ``model`` for ``epochs`` epochs, each over the batches ``data()`` gives (``batches``).
    ``loss(out, y)`` returns the loss and its gradient (core/losses.py); ``lr(step)`` the rate of
    each step (a schedule, core/schedules.py); ``clip_norm`` bounds the norm of all gradients
    together. ``on_epoch`` is called with each epoch's row of the history. Returns the history:
    one dict per epoch."""
    history, step = [], 0
    model.train()
    for epoch in range(1, epochs + 1):
        total, seen = 0.0, 0
        for Xb, yb in data():
            out = model.forward(Xb)  # (B, K)
            value, dout = loss(out, yb)  # the loss, and its gradient: the seed of the backward pass
            model.backward(dout)  # every layer's grads, in reverse order
            if clip_norm:
                clip_grad_norm([g for _, _, g in model.parameters()], clip_norm)
            optimizer.step(model.parameters(), lr(step))
            step, total, seen = step + 1, total + value * Xb.shape[0], seen + Xb.shape[0]
        history.append({"epoch": epoch, "train_loss": total / seen})
        if on_epoch is not None:
            on_epoch(history[-1])
    return history
