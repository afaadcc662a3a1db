"""What ``mlp-gradcheck`` checks with no arguments: every built-in layer and loss, on several
shapes (batch 1 and larger, non-square weights), in train and eval mode where they differ.

Inputs are drawn at least ``KINK_MARGIN`` away from 0, where relu and leaky_relu have a kink,
so a built-in never lands on one. Parameters are moved off their initial ones and zeros, and
batch norm gets running statistics other than 0 and 1, so that no term of a backward is
multiplied away.

N = batch size, D = input features, C = classes, K = output units.
"""

import zlib

import numpy as np

from ..errors import MLPManualError, what_was_raised
from ..layers.registry import LAYERS, Build, LayerType, build_layer
from ..losses import LOSSES
from .check import check_layer, check_loss
from .report import GradcheckReport, StructureCheck, SuiteReport

KINK_MARGIN = 0.1
# Where softmax saturates, every entry of dlogits is as small as 1 - p of the true class, and
# the loss value near 0 is only known to ~1e-16 absolute, which finite differences turn into
# ~1e-11: logits of this scale keep the gradient well above that noise.
LOGIT_SCALE = 1.5
SMOOTHING = 0.1  # loss.label_smoothing of the smoothed loss checked
LAYER_SHAPES = ((1, 5), (6, 3))  # (N, D)
OUTPUT_WIDTH = 4  # linear maps D to 4, so its weights are not square
VOCAB = 4  # rows of an embedding's table: fewer than the indices of a row, so rows repeat
NOTES = (f"inputs are drawn at least {KINK_MARGIN} away from 0, the kink of relu and leaky_relu",
         f"embedding looks up indices in 0..{VOCAB - 1}, each row of x holding one index twice, so rows of W "
         "add gradients from several positions; its input, integer indices, has no gradient (N/A)",
         "residual is checked as out = x + f(x) with f = linear, tanh, linear",
         "dropout is checked with one fixed mask; batch norm with its running statistics held fixed",
         "batchnorm in train mode is not checked at batch 1: batch statistics need at least 2 rows")


def modes_of(layer_type: LayerType) -> tuple[str | None, ...]:
    """The modes a layer type is checked in: train and eval where they differ, else one."""
    return ("train", "eval") if layer_type.modes_differ else (None,)


MODES = {name: modes_of(t) for name, t in LAYERS.items() if t.modes_differ}  # the built-ins with two


def builtin_layer(name: str, width: int, rng: np.random.Generator):
    """A float64 layer of registered type ``name`` for ``width`` input features, its parameters
    and running statistics moved off their initial values."""
    layer_type = LAYERS[name]
    how = Build(np.random.default_rng(rng.integers(2**32)), np.float64, vocab=VOCAB)
    layer = build_layer(layer_type, layer_type.check.options if layer_type.check else {}, width, how, OUTPUT_WIDTH)
    for k, p in layer.params.items():
        layer.params[k] = p + rng.normal(size=p.shape) * 0.5
    if "running_var" in layer.buffers:
        layer.buffers["running_mean"] = rng.normal(size=width)
        layer.buffers["running_var"] = rng.uniform(0.5, 2.0, size=width)
    return layer


def away_from_kinks(x: np.ndarray) -> np.ndarray:
    """Move entries closer than KINK_MARGIN to 0 out to that distance, keeping their sign."""
    return np.where(np.abs(x) < KINK_MARGIN, np.where(x < 0, -1.0, 1.0) * KINK_MARGIN + x, x)


def repeated_indices(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """(N, D) indices in 0..VOCAB-1 (as floats, as the checker takes inputs), the last of each row
    a copy of its first, so that every row uses a row of the table twice."""
    x = rng.integers(0, VOCAB, size=(n, d))
    x[:, -1] = x[:, 0]
    return x.astype(np.float64)


def layer_rng(seed: int, name: str) -> np.random.Generator:
    """The generator of layer type ``name``'s cases under ``seed``: its own, so that a layer's
    draws do not depend on which types come before it (a new type changes nobody's inputs)."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def builtin_cases(layer_shapes, seed: int):
    """Yield (label, layer, x, mode) for every registered layer type, on each (N, D) input shape,
    in each mode it computes differently in, with parameters and inputs drawn from the type's
    ``layer_rng``; for a layer that cannot be built, the exception in place of the layer (and x
    None)."""
    for name, layer_type in LAYERS.items():
        rng = layer_rng(seed, name)
        for n, d in layer_shapes:
            for mode in modes_of(layer_type):
                if mode == "train" and n < layer_type.min_train_rows:
                    continue
                label = f"{name} x({n}, {d})" + (f" {mode}" if mode else "")
                try:
                    layer = builtin_layer(name, d, rng)
                except Exception as e:  # a user's type (--import) whose constructor or config() fails
                    yield label, e, None, mode
                    continue
                x = (repeated_indices(rng, n, d) if layer_type.takes_indices
                     else away_from_kinks(rng.normal(size=(n, d)) * 2))  # (N, D)
                yield label, layer, x, mode


def check_builtins(*, layer_shapes=LAYER_SHAPES, loss_shapes=None, **settings) -> SuiteReport:
    """Check every registered layer type and every loss in LOSSES.

    Inputs: layer_shapes, the (N, D) inputs each layer is checked on; loss_shapes, name ->
    (N, K) logits (by default each loss's ``check_shapes``); settings as for ``check_layer`` (seed draws every
    input, parameter and upstream gradient).
    Returns: a SuiteReport, one check per layer, shape and mode, then one per loss and shape.
    """
    reports = []
    for label, layer, x, mode in builtin_cases(layer_shapes, settings.get("seed", 0)):
        if isinstance(layer, Exception):  # a layer that cannot be built is marked FAIL, the others checked
            reports.append(crashed(label, "built", layer))
            continue
        try:
            reports.append(check_layer(layer, x, mode=mode, label=label, **settings))
        except Exception as e:  # its forward or backward raised (a user's type, --import)
            reports.append(crashed(label, "checked", e))
    for name, shapes in (loss_shapes or {name: spec.check_shapes for name, spec in LOSSES.items()}).items():
        rng = layer_rng(settings.get("seed", 0), name)
        for n, k in shapes:
            logits = rng.normal(size=(n, k)) * LOGIT_SCALE  # (N, K)
            reports.append(check_loss(LOSSES[name], logits, LOSSES[name].random_targets(rng, n, k),
                                      label=f"{name} logits({n}, {k})", **settings))
        if LOSSES[name].smooths:  # and against smoothed targets, on its last shape
            reports.append(check_loss(LOSSES[name].with_label_smoothing(SMOOTHING), logits,
                                      LOSSES[name].random_targets(rng, n, k),
                                      label=f"{name} label_smoothing {SMOOTHING} logits({n}, {k})", **settings))
    return SuiteReport(reports, list(NOTES) + user_verdicts(reports))


def crashed(label: str, doing: str, e: Exception) -> GradcheckReport:
    """The report of a check that could not run: a failed structural check saying what raised."""
    detail = str(e) if isinstance(e, MLPManualError) else what_was_raised(e)
    return GradcheckReport(label, [], [StructureCheck(f"can be {doing}", False, detail)])


def user_verdicts(reports: list[GradcheckReport]) -> list[str]:
    """One note per layer type of the user's (``--import``): PASS, or FAIL and the first reason."""
    notes = []
    for name, t in LAYERS.items():
        if t.module is None:
            continue
        mine = [r for r in reports if r.label == name or r.label.startswith(f"{name} ")]
        failed = [r for r in mine if not r.passed]
        if not failed:
            notes.append(f"your layer {name}: PASS ({len(mine)} checks)")
            continue
        first = failed[0]
        tensors = first.failed_tensors
        why = (f"{', '.join(tensors)} {'disagrees' if len(tensors) == 1 else 'disagree'} with finite differences"
               if tensors
               else next(f"{c.name}: {c.detail}" for c in first.structure if not c.ok))
        notes.append(f"your layer {name}: FAIL in {len(failed)} of {len(mine)} checks ({first.label}: {why})")
    return notes

