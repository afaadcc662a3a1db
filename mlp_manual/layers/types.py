"""The table of layer types: one row per type, naming everything any part of mlp-manual needs to
know of it. Every consumer that must know every type reads its row and nothing else: config
validation and building (registry.py: ``options``, ``widths``, ``wants``), the model-file
loader, the gradient checker's built-in suite (``check``), mlp-explain's text and its formulas
(``formulas``, read from the class's ``# fwd:`` comments), its scalar pass (``scalar``) and its
page (``page``, the op of explain/page/explain.js that recomputes the layer when a number is
edited), mlp-export (``onnx``), the diagnostics of dead and saturated units (``units``), and
the tests over every type. A built-in row names every part; where a consumer cannot serve a
type, the row says why (``Without``), and ``tests/test_layer_types.py`` fails on a row that
lacks a part.

A new built-in layer type is its class in ``mlp_manual/core/``, its row here, and its tests.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import core, scalar
from ..options import BOOL, NUMBER, Option, positive
from . import onnx
from .formulas import Formulas, read_formulas
from .options import FEATURES, INIT, KEEP, LAYER_LIST, TABLE, UNITS, Widths


@dataclass(frozen=True)
class Without:
    """A part a type does not have, and why (the message of a consumer that needs it)."""

    reason: str


@dataclass(frozen=True)
class Units:
    """What diagnostics count in a layer's output: ``state`` "dead" (zero for a whole batch: the
    ReLU family) or "saturated" (at the ends of its range); ``stuck(layer, out)`` gives the
    (N, H) entries of the last forward's ``out`` that are so."""

    state: str
    stuck: Callable[[object, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Check:
    """How the gradient checker's built-in suite builds the type: its ``options``, and whether
    its input is integer indices."""

    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LayerType:
    """One layer type. ``options``: what a config may set besides widths, in the order messages
    list them; ``widths``: its width rule; ``wants``: which of rng and dtype its constructor
    takes; ``module``: the user's module that declared it (None for a built-in). The other parts
    are those of the module docstring; a user's type has none of them but ``formulas``."""

    name: str
    cls: type
    options: dict[str, Option] = field(default_factory=dict)
    widths: Widths = KEEP
    wants: tuple[str, ...] = ()
    module: str | None = None
    onnx: Callable | Without | None = None
    scalar: Callable | Without | None = None
    page: str | Without | None = None
    units: Units | None = None
    check: Check | None = None
    modes_differ: bool = False  # computes differently in training and evaluation mode
    min_train_rows: int = 1  # the smallest batch its forward takes in training mode
    takes_indices: bool = False  # integer indices in (an embedding): first in a model, no dx

    @property
    def config_options(self) -> dict[str, Option]:
        """Options a config spec may set: the width rule's own (``units``), then the type's."""
        return {**self.widths.options, **self.options}

    @cached_property
    def formulas(self) -> Formulas:
        """The forward formula and each gradient's, from the class's ``# fwd:`` comments; a user's
        class may give them as ``forward_formula`` and ``backward_formulas`` instead."""
        given = vars(self.cls).get("forward_formula"), vars(self.cls).get("backward_formulas")
        if given[0] or given[1]:
            return Formulas(given[0] or "", dict(given[1] or {}))
        return read_formulas(self.cls)


NOT_ELEMENTWISE = Without("the scalar pass follows linear layers and elementwise activations")
PAGE_SHOWS = Without("the page shows it, but recomputes only linear layers and elementwise activations")
SLOPE = Option(NUMBER, 0.01, math.isfinite, "be a finite number", "the slope for x <= 0")
DEAD = Units("dead", lambda layer, out: out <= 0)
LEAKY_DEAD = Units("dead", lambda layer, out: layer.x <= 0)
SATURATED_01 = Units("saturated", lambda layer, out: np.abs(2 * out - 1) > 0.99)  # 0.99 of the way to 0 or 1
SATURATED_11 = Units("saturated", lambda layer, out: np.abs(out) > 0.99)

BUILTINS: Mapping[str, LayerType] = {t.name: t for t in (
    LayerType("batchnorm", core.BatchNorm1d, {
        "momentum": Option(NUMBER, 0.1, lambda v: 0 <= v <= 1, "be in [0, 1]", "the weight of a batch in the running "
                                                                               "statistics"),
        "eps": positive(1e-5, "added to the variance")}, FEATURES, ("dtype",),
        onnx=onnx.batchnorm, scalar=NOT_ELEMENTWISE, page=PAGE_SHOWS, check=Check(), modes_differ=True,
        min_train_rows=2),
    LayerType("dropout", core.Dropout, {"p": Option(NUMBER, 0.5, lambda v: 0 <= v < 1, "be in [0, 1)",
                                                    "the share of units zeroed")}, KEEP, ("rng",),
              onnx=onnx.dropout, scalar=NOT_ELEMENTWISE, page=PAGE_SHOWS, check=Check({"p": 0.5}), modes_differ=True),
    LayerType("embedding", core.Embedding, {}, TABLE, ("rng", "dtype"), onnx=onnx.embedding, scalar=NOT_ELEMENTWISE,
              page=PAGE_SHOWS, check=Check({"dim": 2}), takes_indices=True),
    LayerType("gelu", core.GELU, onnx=onnx.gelu, scalar=NOT_ELEMENTWISE, page=PAGE_SHOWS, check=Check()),
    LayerType("identity", core.Identity, onnx=onnx.op("Identity"), scalar=scalar.identity, page="identity",
              check=Check()),
    LayerType("layernorm", core.LayerNorm, {"eps": positive(1e-5, "added to the variance")}, FEATURES, ("dtype",),
              onnx=onnx.layernorm, scalar=NOT_ELEMENTWISE, page=PAGE_SHOWS, check=Check()),
    LayerType("leaky_relu", core.LeakyReLU, {"slope": SLOPE}, onnx=onnx.leaky_relu, scalar=scalar.leaky_relu,
              page="leaky_relu", units=LEAKY_DEAD, check=Check({"slope": 0.2})),
    LayerType("linear", core.Linear, {"init": Option(INIT, "he_uniform", help="how W is drawn"),
                                      "bias": Option(BOOL, True, help="whether out has + b")}, UNITS, ("rng", "dtype"),
              onnx=onnx.linear, scalar=scalar.linear, page="linear", check=Check()),
    LayerType("relu", core.ReLU, onnx=onnx.op("Relu"), scalar=scalar.relu, page="relu", units=DEAD, check=Check()),
    LayerType("residual", core.Residual, {"layers": Option(LAYER_LIST, [], help="the inner layers f")},
              onnx=onnx.residual, scalar=NOT_ELEMENTWISE, page=PAGE_SHOWS,
              # out = x + f(x) with a smooth f whose hidden width (4) differs from D, so no weight is square
              check=Check({"layers": [{"type": "linear", "units": 4}, {"type": "tanh"}, {"type": "linear"}]})),
    LayerType("rmsnorm", core.RMSNorm, {"eps": positive(1e-6, "added to the mean square")}, FEATURES, ("dtype",),
              onnx=onnx.rmsnorm, scalar=NOT_ELEMENTWISE, page=PAGE_SHOWS, check=Check()),
    LayerType("sigmoid", core.Sigmoid, onnx=onnx.op("Sigmoid"), scalar=scalar.logistic, page="sigmoid",
              units=SATURATED_01, check=Check()),
    LayerType("softmax", core.Softmax, onnx=onnx.op("Softmax", axis=1), scalar=NOT_ELEMENTWISE, page=PAGE_SHOWS,
              check=Check()),
    LayerType("tanh", core.Tanh, onnx=onnx.op("Tanh"), scalar=scalar.tanh, page="tanh", units=SATURATED_11,
              check=Check()),
)}
