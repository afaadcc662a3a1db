"""The model mlp-manual trains and saves: the core's Model (``core/model.py``: forward in order,
backward in reverse) with what the rest of the package asks of it: its layers and parameters by
name, its state (parameters and buffers) to save and load, its dtype, its widths, its summary
and the spec that rebuilds it.

N = batch size, D = input features, K = output units.
"""

import numpy as np

from . import core
from .devices import is_device_array
from .layers import registry


class Model(core.Model):
    """Layers applied in sequence. Inputs: layers, a list of objects following the layer contract."""

    def named_layers(self):
        """Yield (name, layer) for every layer, a block's inner layers after it, named
        ``layers.<index>`` and ``layers.<index>.<inner index>``."""
        def walk(prefix, layers):
            for i, layer in enumerate(layers):
                yield f"{prefix}.{i}", layer
                yield from walk(f"{prefix}.{i}", layer.sublayers())
        yield from walk("layers", self.layers)

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

    def drop_caches(self) -> None:
        """Forget what each layer's forward kept for its backward (the rows it last saw, on the
        CPU or a device): every array a layer holds beside its params, grads and buffers, a
        block's inner layers' too."""
        def drop(layer):
            for name, value in list(vars(layer).items()):
                if isinstance(value, np.ndarray) or hasattr(value, "tocsr") or is_device_array(value):
                    setattr(layer, name, None)
            for inner in layer.sublayers():
                drop(inner)
        for layer in self.layers:
            drop(layer)

    @property
    def n_params(self) -> int:
        """Number of trainable scalars."""
        return sum(p.size for _, p, _ in self.parameters())

    @property
    def dtype(self):
        return next((p.dtype for _, p, _ in self.parameters()), np.dtype(np.float32))

    def astype(self, dtype) -> "Model":
        """Cast every parameter, gradient and buffer to ``dtype``, in place of the old arrays."""
        for layer in self.layers:
            for d in (layer.params, layer.grads, layer.buffers):
                for k in d:
                    d[k] = d[k].astype(dtype)
        return self

    def input_width(self) -> int | None:
        """Input features expected by the first layer that fixes them, if any."""
        return next((w for w in map(registry.input_width, self.layers) if w is not None), None)

    def output_width(self, width: int) -> int:
        """Output units for ``width`` input features."""
        for layer in self.layers:
            width = registry.output_width(layer, width)
        return width

    def summary(self, input_width: int) -> str:
        """A table: layer, output shape, parameters; then the total."""
        rows = [("layer", "output shape", "params")]

        def add(prefix: str, layers, width: int) -> None:
            for i, layer in enumerate(layers):
                inner = layer.sublayers()  # a block: its name, then a row per inner layer
                n, out = sum(v.size for v in layer.params.values()), registry.output_width(layer, width)
                t = registry.type_of(layer)
                name = f"{type(layer).__name__}: {t.formulas.forward}" if inner and t else repr(layer)
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
    layers, _ = registry.build_layers(layer_specs, input_width, registry.Build(rng, dtype, {"init": init}, vocab),
                                      output_width)
    return Model(layers)
