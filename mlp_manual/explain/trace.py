"""One forward and backward pass recorded step by step, each gradient checked on its own.

The model is copied to float64 and run in training mode: dropout draws one mask, batch norm
uses the batch's statistics, and each check puts the layer's generator and buffers back before
every forward, so it sees that same mask. A backward step is checked as a layer on its own:
central differences of sum(layer(x) * dout) with the upstream gradient dout the pass actually
produced (no random draw), for dx and every parameter. The loss's seed gradient is checked
against differences of the loss itself.

N = rows, D = input features of a layer, H = its output features, K = model outputs.
"""

from dataclasses import dataclass, field

import numpy as np

from ..gradcheck.compare import Settings, compare_tensor
from ..gradcheck.report import TensorRow
from ..gradcheck.target import copy_in, pin_state
from ..layers import Layer

MAX_ELEMENTS = 50  # per tensor; a larger one gets a seeded sample of this many entries and one directional check


@dataclass
class LayerStep:
    """One layer of the pass: what went in and out, and the gradients backward made of it."""

    index: int
    type: str  # the config name, e.g. "linear"
    layer: Layer  # the float64 copy that ran
    x: np.ndarray  # (N, D)
    out: np.ndarray  # (N, H)
    dout: np.ndarray | None = None  # (N, H), the upstream gradient
    grads: dict[str, np.ndarray] = field(default_factory=dict)  # "dx" (N, D) and each params key
    checks: dict[str, TensorRow] = field(default_factory=dict)  # same keys as grads

    @property
    def name(self) -> str:
        return f"layers.{self.index}"


@dataclass
class LossStep:
    """The loss at the model's output and the gradient that seeds the backward pass."""

    name: str  # e.g. "softmax_cross_entropy"
    value: float
    logits: np.ndarray  # (N, K)
    targets: np.ndarray  # as the loss takes them
    dlogits: np.ndarray  # (N, K)
    check: TensorRow | None = None


@dataclass
class Trace:
    X: np.ndarray  # (N, D) float64
    steps: list[LayerStep]
    loss: LossStep

    def checks(self) -> list[tuple[str, TensorRow]]:
        """Every check in the order the pass made the gradients: the seed, then layers last to first."""
        rows = [("loss", self.loss.check)] if self.loss.check else []
        for step in reversed(self.steps):
            rows += [(f"{step.name}.{k}", row) for k, row in step.checks.items()]
        return rows

    def agreeing(self) -> int:
        """Checks whose gradient agrees with finite differences (PASS, or KINK: a valid subgradient)."""
        return sum(row.verdict in ("PASS", "KINK") for _, row in self.checks())


def trace(model, loss, loss_name: str, X: np.ndarray, y: np.ndarray, *, check: bool = True,
          seed: int = 0, max_elements: int | None = MAX_ELEMENTS) -> Trace:
    """Run ``model`` (left untouched) forward on X (N, D), the loss, and backward in reverse order,
    keeping every step; with ``check``, compare every gradient with central differences.

    Inputs: model, a Model; loss, a LossSpec (``fn`` and ``targets``); loss_name, its config
    name; y, labels or targets; seed, the sample of entries a large tensor is checked on.
    Returns: a Trace.
    """
    work = copy_in(model, model.layers, np.float64, "train")
    types = [spec["type"] for spec in work.spec()]
    x = np.array(X, dtype=np.float64)  # (N, D)
    steps, restores = [], []
    for i, layer in enumerate(work.layers):
        restores.append(pin_state([layer]))  # as before this forward: the checks redraw its mask
        out = layer.forward(x)
        steps.append(LayerStep(i, types[i], layer, x, out))
        x = out
    targets = loss.targets(np.asarray(y), np.float64)
    value, dlogits = loss.fn(x, targets)
    result = Trace(np.array(X, dtype=np.float64), steps, LossStep(loss_name, value, x, targets, dlogits))
    dout = dlogits
    for step in reversed(steps):  # go in the reverse order of the forward pass
        step.dout = dout
        dout = step.layer.backward(dout)  # (N, D)
        step.grads = {"dx": dout.copy(), **{k: g.copy() for k, g in step.layer.grads.items()}}
    if check:
        settings = Settings(seed=seed, max_elements=max_elements)
        rng = np.random.default_rng(seed)
        result.loss.check = check_seed(loss.fn, result.loss, settings, rng)
        for step, restore in zip(reversed(steps), reversed(restores)):
            step.checks = check_step(step, restore, settings, rng)
    return result


def check_seed(fn, step: LossStep, settings: Settings, rng) -> TensorRow:
    """dlogits against central differences of the loss at the logits."""
    z = step.logits.copy()
    return compare_tensor("dlogits", step.dlogits, z, lambda: fn(z.copy(), step.targets)[0], 1.0, settings, rng)


def check_step(step: LayerStep, restore, settings: Settings, rng) -> dict[str, TensorRow]:
    """dx and every parameter gradient of one layer against central differences of
    sum(layer(x) * dout), dout being the gradient the pass gave this layer."""
    layer, x = step.layer, step.x.copy()

    def forward():
        restore()
        return layer.forward(x)

    rows = {"dx": compare_tensor("dx", step.grads["dx"], x, forward, step.dout, settings, rng)}
    for k in layer.params:
        rows[k] = compare_tensor(k, step.grads[k], layer.params[k], forward, step.dout, settings, rng)
    return rows
