"""The layer contract every layer follows, built-in or written by a user.

A layer has:
- ``forward(x) -> out``: computes the output and caches what backward needs;
- ``backward(dout) -> dx``: writes the gradient of every parameter into ``self.grads``
  (same keys as ``self.params``) and returns the gradient with respect to its input (None
  for a layer that ``takes_indices``: integer indices have no gradient);
- ``backward_params(dout)``: the same without dx, for the model's first layer, whose input is
  the data (the default calls ``backward`` and drops dx; Linear skips the dx matmul);
- ``params`` / ``grads``: dicts of arrays with identical keys (empty without parameters);
- ``buffers``: arrays that are state but not trained (BatchNorm's running statistics);
- ``training``: switched by ``train()`` / ``eval()`` for layers that behave differently;
- ``sublayers()``: the layers a block is made of (a residual's inner layers), none for others.

``forward`` and ``backward`` leave their arguments as they are and never write into an array
they returned before, so a caller may keep every output it gets.

N = batch size, D = input features, H = output features.
"""

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ..errors import LayerError
from ..options import Option
from .options import KEEP, Widths


class Layer:
    """Base class: holds the dicts, the mode switch, and the backward-before-forward guard."""

    # A built-in layer type names itself, and the registry (registry.py) finds it in this
    # package: ``type_name`` is what a config writes (``{type: linear}``); ``type_options`` the
    # options a config may set (options.py's vocabulary); ``type_widths`` its width rule
    # (layers/options.py); ``type_wants`` which of rng and dtype its constructor takes.
    type_name: str | None = None
    type_options: Mapping[str, Option] = MappingProxyType({})
    type_widths: Widths = KEEP
    type_wants: tuple[str, ...] = ()
    modes_differ = False  # computes differently in training and evaluation mode
    min_train_rows = 1  # the smallest batch forward accepts in training mode
    # Takes integer indices (an embedding), which have no gradient: backward returns None for
    # dx, the layer must come first in a model, and its data must be indices (a text dataset).
    takes_indices = False
    # What diagnostics count in the output: "dead" units (zero for a whole batch: the ReLU
    # family) or "saturated" ones (at the ends of their range for a whole batch); see ``stuck``.
    unit_state: str | None = None
    # The math of forward and of each gradient ("dx" and every params key), each formula the
    # text of a `# fwd: ... => ...` comment in the layer's code (mlp-explain prints them).
    forward_formula = ""
    backward_formulas: dict[str, str] = {}

    def __init__(self):
        self.params: dict[str, np.ndarray] = {}
        self.grads: dict[str, np.ndarray] = {}
        self.buffers: dict[str, np.ndarray] = {}
        self.training = True

    def forward(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def backward(self, dout: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def backward_params(self, dout: np.ndarray) -> None:
        """Fill ``self.grads`` from ``dout`` (N, H) when dx is not wanted."""
        self.backward(dout)

    def train(self, mode: bool = True) -> "Layer":
        """Switch to training mode (or evaluation mode with ``mode=False``)."""
        self.training = mode
        return self

    def eval(self) -> "Layer":
        """Switch to evaluation mode."""
        return self.train(False)

    def sublayers(self) -> list["Layer"]:
        """The layers this one runs inside it (a block's), outermost first; none for a plain layer."""
        return []

    def config(self) -> dict:
        """The constructor arguments that rebuild this layer: JSON types, and for a block its
        list of inner layers (``registry.layer_spec`` turns those into specs)."""
        return {}

    def output_width(self, width: int) -> int:
        """Output features for ``width`` input features (unchanged unless overridden)."""
        return width

    def stuck(self, out: np.ndarray) -> np.ndarray:
        """(N, H) booleans: the entries of the last forward's output ``out`` that are dead or
        saturated, as ``unit_state`` says (only layers that set it define this)."""
        raise NotImplementedError

    def saved(self, value):
        """Return a forward-pass cache entry, or raise if forward has not run."""
        if value is None:
            raise LayerError(f"{type(self).__name__}.backward called before forward")
        return value

    def _grads_like_params(self) -> None:
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def astype(self, dtype) -> "Layer":
        """Cast parameters, gradients and buffers to ``dtype`` in place of the old arrays."""
        for d in (self.params, self.grads, self.buffers):
            for k in d:
                d[k] = d[k].astype(dtype)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({args})"
