"""The training loop, in llm.c's shape: for each batch, forward, loss, backward, clip, step;
then a history of each epoch's mean training loss.

N = samples, B = batch size, D = features, K = output units.
"""

from collections.abc import Callable

import numpy as np

from .model import Model
from .optimizers import Optimizer, clip_grad_norm


def train(model: Model, loss: Callable, optimizer: Optimizer, X: np.ndarray, y: np.ndarray, *, epochs: int,
          batch_size: int, lr: Callable[[int], float], rng: np.random.Generator, clip_norm: float | None = None,
          on_epoch: Callable[[dict], None] | None = None) -> list[dict]:
    """Train ``model`` on X (N, D) and y (N, ...) for ``epochs`` epochs of batches of
    ``batch_size`` rows, in an order ``rng`` shuffles anew each epoch. ``loss(out, y)`` returns
    the loss and its gradient (core/losses.py); ``lr(step)`` the rate of each step (a schedule,
    core/schedules.py); ``clip_norm`` bounds the norm of all gradients together. ``on_epoch`` is
    called with each epoch's row of the history. Returns the history: one dict per epoch."""
    history, step = [], 0
    model.train()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X))  # (N,)
        total = 0.0
        for start in range(0, len(X), batch_size):
            rows = order[start:start + batch_size]  # (B,)
            out = model.forward(X[rows])  # (B, K)
            value, dout = loss(out, y[rows])  # the loss, and its gradient: the seed of the backward pass
            model.backward(dout)  # every layer's grads, in reverse order
            if clip_norm:
                clip_grad_norm([g for _, _, g in model.parameters()], clip_norm)
            optimizer.step(model.parameters(), lr(step))
            step += 1
            total += value * len(rows)
        history.append({"epoch": epoch, "train_loss": total / len(X)})
        if on_epoch is not None:
            on_epoch(history[-1])
    return history
