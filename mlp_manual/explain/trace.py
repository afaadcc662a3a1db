"""One forward and backward pass recorded step by step, each gradient checked on its own.

The model is copied to float64 and run in training mode: dropout draws one mask, batch norm
uses the batch's statistics, and each check puts the layer's generator and buffers back before
every forward, so it sees that same mask. A backward step is checked as a layer on its own:
central differences of sum(layer(x) * dout) with the upstream gradient dout the pass actually
produced (no random draw), for dx and every parameter. The loss's seed gradient is checked
against differences of the loss itself.

A residual block is walked into: its fork (x goes into f and along the skip), each of its inner
layers as a step of its own, its join (out = x + f(x)). Backward meets the join first, which
hands dout unchanged to both terms of the sum; at the fork the two gradients of x add,
dx = dout + df(dout), which is checked against differences of the whole block.

N = rows, D = input features of a layer, H = its output features, K = model outputs.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..gradcheck.compare import Settings, compare_tensor
from ..gradcheck.report import TensorRow
from ..gradcheck.target import copy_in, pin_state
from ..layers import Layer
from ..layers.registry import layer_spec
from ..losses import LossSpec

MAX_ELEMENTS = 50  # per tensor; a larger one gets a seeded sample of this many entries and one directional check


@dataclass
class LayerStep:
    """One layer of the pass: what went in and out, and the gradients backward made of it."""

    index: int
    type: str  # the config name, e.g. "linear"
    layer: Layer  # the float64 copy that ran
    x: np.ndarray  # (N, D)
    out: np.ndarray  # (N, H)
    restore: Callable[[], None]  # puts the layer's generators and buffers back as before its forward
    prefix: str = "layers"  # "layers.1" for the layers inside block layers.1
    dout: np.ndarray | None = None  # (N, H), the upstream gradient
    grads: dict[str, np.ndarray] = field(default_factory=dict)  # "dx" (N, D) and each params key
    checks: dict[str, TensorRow] = field(default_factory=dict)  # same keys as grads

    @property
    def name(self) -> str:
        return f"{self.prefix}.{self.index}"

    def backward(self, dout: np.ndarray) -> np.ndarray | None:
        self.dout = dout
        dx = self.layer.backward(dout)  # (N, D); None for an input of indices
        self.grads = {**({} if dx is None else {"dx": dx.copy()}), **{k: g.copy() for k, g in self.layer.grads.items()}}
        return dx

    def check(self, settings: Settings, rng) -> None:
        """dx (unless x holds indices) and every parameter gradient against central differences
        of sum(layer(x) * dout), dout being the gradient the pass gave this layer."""
        x = self.x.copy()

        def forward():
            self.restore()
            return self.layer.forward(x)

        self.checks = {}
        if "dx" in self.grads:
            self.checks["dx"] = compare_tensor("dx", self.grads["dx"], x, forward, self.dout, settings, rng)
        for k in self.layer.params:
            self.checks[k] = compare_tensor(k, self.grads[k], self.layer.params[k], forward, self.dout, settings, rng)


@dataclass
class BlockStep:
    """A residual block, out = x + f(x): x goes into f, whose layers are steps of their own, and
    around it along the skip connection. Its parameters are checked with its inner layers."""

    index: int
    type: str
    layer: Layer
    x: np.ndarray  # (N, D), used twice: by f and by the sum
    restore: Callable[[], None]
    prefix: str = "layers"
    fx: np.ndarray | None = None  # (N, D), f(x): the output of its last inner layer
    out: np.ndarray | None = None  # (N, D)
    dout: np.ndarray | None = None  # (N, D), the upstream gradient at out
    df: np.ndarray | None = None  # (N, D), the gradient f's backward brought back to x
    grads: dict[str, np.ndarray] = field(default_factory=dict)  # "dx" (N, D)
    checks: dict[str, TensorRow] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.prefix}.{self.index}"

    @property
    def inner(self) -> tuple[str, str]:
        """The names of its first and last inner layers."""
        return f"{self.name}.0", f"{self.name}.{len(self.layer.sublayers()) - 1}"


@dataclass
class BlockEnd:
    """Where a block's two paths part (``end`` "fork") or meet ("join"); the steps of its inner
    layers lie between its fork and its join. Backward meets the join first: the sum hands dout
    on, unchanged, to f(x) and to x; at the fork the two gradients of x add up."""

    block: BlockStep
    end: str  # "fork" or "join"

    @property
    def name(self) -> str:
        return self.block.name

    @property
    def checks(self) -> dict[str, TensorRow]:
        return self.block.checks if self.end == "fork" else {}

    def backward(self, dout: np.ndarray) -> np.ndarray:
        b = self.block
        if self.end == "join":
            b.dout = dout
            return dout  # out = x + f(x): the upstream gradient of f(x) is dout itself
        b.df = dout  # what f's backward gave x
        dx = b.layer.backward(b.dout)  # the block's own backward: dx = dout + df(dout)
        b.grads = {"dx": dx.copy()}
        return dx

    def check(self, settings: Settings, rng) -> None:
        """At the fork: the block's dx against central differences of sum(block(x) * dout)."""
        b = self.block
        if self.end == "fork":
            x = b.x.copy()

            def forward():
                b.restore()
                return b.layer.forward(x)

            b.checks = {"dx": compare_tensor("dx", b.grads["dx"], x, forward, b.dout, settings, rng)}


Step = LayerStep | BlockEnd


@dataclass
class LossStep:
    """The loss at the model's output and the gradient that seeds the backward pass."""

    name: str  # e.g. "softmax_cross_entropy"
    spec: LossSpec  # the loss as the run uses it (its formulas; with loss.class_weights and loss.label_smoothing)
    value: float
    logits: np.ndarray  # (N, K)
    targets: np.ndarray  # as the loss takes them
    dlogits: np.ndarray  # (N, K)
    check: TensorRow | None = None


@dataclass
class Trace:
    X: np.ndarray  # (N, D) float64
    steps: list[Step]  # in the order forward ran them; a block as fork, its inner layers, join
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


def pick_rows(n: int, rows: int, seed: int) -> np.ndarray:
    """The ``rows`` training rows (of ``n``) a pass is made on, drawn by ``seed``, in order: (rows,)."""
    return np.sort(np.random.default_rng(seed).choice(n, min(rows, n), replace=False))


def trace(model, loss, X: np.ndarray, y: np.ndarray, *, check: bool = True,
          seed: int = 0, max_elements: int | None = MAX_ELEMENTS) -> Trace:
    """Run ``model`` (left untouched) forward on X (N, D), the loss, and backward in reverse order,
    keeping every step; with ``check``, compare every gradient with central differences.

    Inputs: model, a Model; loss, a LossSpec (``name``, ``fn`` and ``targets``); y, labels or
    targets; seed, the sample of entries a large tensor is checked on.
    Returns: a Trace.
    """
    work = copy_in(model, model.layers, np.float64, "train")
    steps = []
    x = forward_steps(work.layers, np.array(X, dtype=np.float64), "layers", steps)
    targets = loss.targets(np.asarray(y), np.float64)
    value, dlogits = loss.fn(x, targets)
    result = Trace(np.array(X, dtype=np.float64), steps, LossStep(loss.name, loss, value, x, targets, dlogits))
    dout = dlogits
    for step in reversed(steps):  # go in the reverse order of the forward pass
        dout = step.backward(dout)  # (N, D); None after a first layer of indices
    if check:
        settings = Settings(seed=seed, max_elements=max_elements)
        rng = np.random.default_rng(seed)
        result.loss.check = check_seed(loss.fn, result.loss, settings, rng)
        for step in reversed(steps):
            step.check(settings, rng)
    return result


def forward_steps(layers, x: np.ndarray, prefix: str, steps: list) -> np.ndarray:
    """Run ``layers`` forward on x (N, D), appending a step for each to ``steps``; a block's inner
    layers are run one by one between its fork and its join. Returns the last output."""
    for i, layer in enumerate(layers):
        restore = pin_state([layer])  # as before this forward: the checks redraw its mask
        kind = layer_spec(layer)["type"]
        if not getattr(layer, "sublayers", list)():
            out = layer.forward(x)
            steps.append(LayerStep(i, kind, layer, x, out, restore, prefix))
        else:
            block = BlockStep(i, kind, layer, x, restore, prefix)
            steps.append(BlockEnd(block, "fork"))
            block.fx = forward_steps(layer.sublayers(), x, block.name, steps)
            restore()
            out = block.out = layer.forward(x)  # the block's own forward, from the state f started in
            steps.append(BlockEnd(block, "join"))
        x = out
    return x


def check_seed(fn, step: LossStep, settings: Settings, rng) -> TensorRow:
    """dlogits against central differences of the loss at the logits."""
    z = step.logits.copy()
    return compare_tensor("dlogits", step.dlogits, z, lambda: fn(z.copy(), step.targets)[0], 1.0, settings, rng)
