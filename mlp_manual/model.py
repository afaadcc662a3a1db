"""A sequential model: a list of layers, run forward in order and backward in reverse.

N = batch size, D = input features, K = output units.
"""

import numpy as np

from .layers import Layer, registry


class Model:
    """Layers applied in sequence.

    Inputs: layers, a list of objects following the layer contract.
    """

    def __init__(self, layers: list[Layer]):
        self.layers = list(layers)

    def forward(self, x: np.ndarray) -> np.ndarray:
        """x (N, D) -> output (N, K)."""
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, dout: np.ndarray, input_grad: bool = True) -> np.ndarray | None:
        """Seed with dloss/doutput (N, K); fills every layer's grads; returns dloss/dx (N, D).

        Training passes ``input_grad=False``: nobody needs dloss/dx of the data, so the first
        layer only fills its grads (for Linear that skips its largest matmul) and None is returned.
        """
        # go in the reverse order of the forward pass
        for layer in reversed(self.layers[1:]):
            dout = layer.backward(dout)
        first = self.layers[0]
        if input_grad:
            return first.backward(dout)
        getattr(first, "backward_params", first.backward)(dout)  # a layer may lack it
        return None

    def train(self, mode: bool = True) -> "Model":
        """Put every layer in training mode (or evaluation mode with ``mode=False``)."""
        for layer in self.layers:
            layer.train(mode)
        return self

    def eval(self) -> "Model":
        """Put every layer in evaluation mode."""
        return self.train(False)

    def named_layers(self):
        """Yield (name, layer) for every layer, a block's inner layers after it, named
        ``layers.<index>`` and ``layers.<index>.<inner index>``."""
        def walk(prefix, layers):
            for i, layer in enumerate(layers):
                yield f"{prefix}.{i}", layer
                yield from walk(f"{prefix}.{i}", getattr(layer, "sublayers", list)())  # a layer may lack it
        yield from walk("layers", self.layers)

    def named_params(self):
        """Yield (name, params dict, grads dict, key) for every parameter tensor,
        named ``layers.<index>.<key>`` as in saved models and optimizer state."""
        for i, layer in enumerate(self.layers):
            for k in layer.params:
                yield f"layers.{i}.{k}", layer.params, layer.grads, k

    def state(self) -> dict[str, np.ndarray]:
        """Every parameter and buffer by name (the arrays themselves, not copies)."""
        out = {}
        for i, layer in enumerate(self.layers):
            for d in (layer.params, layer.buffers):
                out.update({f"layers.{i}.{k}": v for k, v in d.items()})
        return out

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        """Copy arrays named as in ``state()`` into the model's own arrays."""
        for i, layer in enumerate(self.layers):
            for d in (layer.params, layer.buffers):
                for k in d:
                    d[k] = np.array(arrays[f"layers.{i}.{k}"], dtype=d[k].dtype)

    @property
    def n_params(self) -> int:
        """Number of trainable scalars."""
        return sum(p[k].size for _, p, _, k in self.named_params())

    @property
    def dtype(self):
        for _, p, _, k in self.named_params():
            return p[k].dtype
        return np.dtype(np.float32)

    def astype(self, dtype) -> "Model":
        """Cast every parameter, gradient and buffer to ``dtype``."""
        for layer in self.layers:
            layer.astype(dtype)
        return self

    def input_width(self) -> int | None:
        """Input features expected by the first layer that fixes them, if any."""
        return next((w for w in map(registry.input_width, self.layers) if w is not None), None)

    def output_width(self, width: int) -> int:
        """Output units for ``width`` input features."""
        for layer in self.layers:
            width = layer.output_width(width)
        return width

    def summary(self, input_width: int) -> str:
        """A table: layer, output shape, parameters; then the total."""
        rows = [("layer", "output shape", "params")]

        def add(prefix: str, layers, width: int) -> None:
            for i, layer in enumerate(layers):
                inner = getattr(layer, "sublayers", list)()  # a block: its name, then a row per inner layer
                n, out = sum(v.size for v in layer.params.values()), layer.output_width(width)
                name = f"{type(layer).__name__}: {layer.forward_formula}" if inner else repr(layer)
                rows.append((f"{'  ' * prefix.count('.')}{prefix}{i}: {name}", f"(N, {out})", f"{n:,}"))
                add(f"{prefix}{i}.", inner, width)
                width = out

        add("", self.layers, input_width)
        w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
        lines = [f"{a:<{w0}}  {b:<{w1}}  {c:>10}" for a, b, c in rows]
        lines.insert(1, "-" * len(lines[0]))
        lines.append(f"total trainable parameters: {self.n_params:,}")
        return "\n".join(lines)

    def spec(self) -> list[dict]:
        """JSON description of the layers: enough to rebuild the model without its weights."""
        return [registry.layer_spec(layer) for layer in self.layers]

    def __repr__(self) -> str:
        inner = "".join(f"\n  ({i}): {layer!r}" for i, layer in enumerate(self.layers))
        return f"Model({inner}\n)"


def build_model(layer_specs: list[dict], input_width: int, output_width: int,
                rng: np.random.Generator, dtype=np.float32, init: str = "he_uniform",
                vocab: int | None = None) -> Model:
    """Build a model from config layer specs such as ``{"type": "linear", "units": 8}``.

    Widths follow each type's width rule in the layer registry: a linear layer takes the
    current width as input and the last one may omit ``units`` to get ``output_width``;
    normalisation layers take the current width; a residual block's inner layers take and give
    the width flowing into it; an embedding, first, has a row per token of the ``vocab`` of
    text data and takes ``input_width`` indices per row. ``init`` is the weight init of every
    layer whose spec does not name one.
    """
    layers, _ = registry.build_layers(layer_specs, input_width, rng, dtype, output_width, {"init": init},
                                      vocab=vocab)
    return Model(layers)
