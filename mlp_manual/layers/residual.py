"""The residual block: out = x + f(x), f being a list of inner layers run in order.

x is used twice, by f and by the sum, so its gradient is the sum of the gradients the two paths
bring back (the rule micrograd writes as ``x.grad += ...``): dx = dout + f.backward(dout).

The block's ``params``, ``grads`` and ``buffers`` are views of its inner layers' dicts, keyed
``"<j>.<key>"`` (j the inner layer's index): a model names them ``layers.<i>.<j>.<key>``, so
optimizers, clipping, diagnostics, model files and checkpoints see every inner array without
knowing that there is a block. A view reads and writes the inner dicts themselves, so it never
holds a stale array when a layer replaces one (BatchNorm's running statistics, a cast).

N = batch size, D = features (the same before and after the block).
"""

from collections.abc import Iterator, MutableMapping

import numpy as np

from ..errors import LayerError
from ..options import Option
from .base import Layer
from .options import LAYER_LIST


class InnerDicts(MutableMapping):
    """One of the dicts ``attr`` ("params", "grads", "buffers") of every inner layer, as one
    mapping keyed ``"<j>.<key>"``."""

    def __init__(self, layers: list[Layer], attr: str):
        self.layers, self.attr = layers, attr

    def _dict_and_key(self, name: str) -> tuple[dict, str]:
        j, _, key = name.partition(".")
        if not (j.isdigit() and int(j) < len(self.layers) and key):
            raise KeyError(name)
        return getattr(self.layers[int(j)], self.attr), key

    def __getitem__(self, name: str) -> np.ndarray:
        d, key = self._dict_and_key(name)
        return d[key]

    def __setitem__(self, name: str, value: np.ndarray) -> None:
        d, key = self._dict_and_key(name)
        d[key] = value

    def __delitem__(self, name: str) -> None:
        d, key = self._dict_and_key(name)
        del d[key]

    def __iter__(self) -> Iterator[str]:
        for j, layer in enumerate(self.layers):
            yield from (f"{j}.{key}" for key in getattr(layer, self.attr))

    def __len__(self) -> int:
        return sum(len(getattr(layer, self.attr)) for layer in self.layers)

    def __repr__(self) -> str:
        return f"InnerDicts({self.attr}: {', '.join(self)})"


class Residual(Layer):
    """out = x + f(x), f the inner ``layers`` in order; they must give back as many features as
    they take. Params, grads, buffers: those of the inner layers, keyed ``"<j>.<key>"``.

    Inputs: layers, a non-empty list of layers (built already: the registry builds them from a
    config's specs, the model-file loader from a file's).
    """

    type_name = "residual"
    type_options = {"layers": Option(LAYER_LIST, [], help="the inner layers f")}

    forward_formula = "out = x + f(x)"
    backward_formulas = {"dx": "dx = dout + df(dout)"}

    def __init__(self, layers=()):
        super().__init__()
        if not layers:
            raise LayerError("residual needs a non-empty 'layers' list: the inner layers f of out = x + f(x)")
        self.layers = list(layers)
        self.params = InnerDicts(self.layers, "params")
        self.grads = InnerDicts(self.layers, "grads")
        self.buffers = InnerDicts(self.layers, "buffers")
        self.x_shape = None

    def sublayers(self) -> list[Layer]:
        return self.layers

    def forward(self, x):
        fx = x
        for layer in self.layers:
            fx = layer.forward(fx)
        if fx.shape != x.shape:
            raise LayerError(f"residual: the inner layers turned input {x.shape} into {fx.shape}; "
                             "out = x + f(x) needs them of one shape")
        self.x_shape = x.shape
        return x + fx  # (N, D)

    def backward(self, dout):
        self.saved(self.x_shape)
        df = dout
        for layer in reversed(self.layers):
            df = layer.backward(df)
        # fwd: out = x + f(x)  =>  dx = dout + df(dout)
        return dout + df  # (N, D)

    def train(self, mode: bool = True) -> "Residual":
        for layer in self.layers:
            layer.train(mode)
        return super().train(mode)

    def output_width(self, width: int) -> int:
        inner = width
        for layer in self.layers:
            inner = layer.output_width(inner)
        if inner != width:
            raise LayerError(f"the inner layers map {width} features to {inner}; out = x + f(x) needs f(x) "
                             f"as wide as x: give the last inner layer {width} units (or leave its units out)")
        return width

    def config(self):
        return {"layers": self.layers}

    def to_onnx(self, g, x, name):  # mlp-export: this forward as ONNX nodes (export/graph.py)
        fx = g.layers(self.layers, x, name)  # the inner layers, named <name>.<j>
        return g.op("Add", x, fx, name=name)  # out = x + f(x)
