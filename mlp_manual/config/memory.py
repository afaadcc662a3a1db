"""How much memory a run's config asks for, estimated before anything is allocated, and the
limit a run must stay under.

A config can ask for any size (``data.n_samples: 100000000000``, a layer of ``units: 1e11``);
numpy would try, and the run would die of a MemoryError or be killed by the system after
swapping for minutes. So a run is checked once, before its largest allocation
(``training/experiment.py: prepare``): for a dataset generated from the seed, before it is made,
with the sizes the config fixes; for data read from files, once it is read, with its real
width, rows and classes (the readers refuse on their own a file that would not fit while read).
A sweep checks the configs at the ends of its ranges before any trial starts.

The estimate counts the generated data (or, once loaded, the data itself and the outputs of
evaluating its largest split), the weights with their gradients and optimizer state, and the
activations of one batch (or one evaluation chunk); it is a lower bound of what training
allocates. The limit is half the physical memory, and at most half the address-space
limit of the process when one is set (``ulimit -v``); 4 GiB where the system says neither.
"""

import numpy as np

from .. import machine
from ..datasets.load import LOADERS
from ..datasets.synthetic import Generated
from ..errors import ConfigError, short_repr
from ..layers.registry import LAYERS, nested_specs, output_layer
from ..optimizers import OPTIMIZERS
from ..readable import readable_bytes

GENERATED_BYTES_PER_VALUE = 8 * 6  # float64 values: generated, their temporaries, the splits, the cast
EVALUATION_ROWS = 2048  # rows per chunk when the model is evaluated (training/evaluation.py)
EVALUATION_COPIES = 4  # a split's outputs held at once: logits, probabilities, their float64 copies


def _layer_widths(specs, n_features: int, n_outputs: int, where: str = "model.layers") -> list[tuple[str, int, int]]:
    """(where, input width, output width) of every layer that sets a width (``units``), the
    model's output layer (``output_layer``) without one getting ``n_outputs``; the layers nested
    in a block (a residual's) included, from the block's width back to it."""
    last = output_layer(specs)
    widths, width = [], n_features
    for i, spec in enumerate(specs):
        for key, inner in nested_specs(spec):
            widths += _layer_widths(inner, width, width, f"{where}[{i}].{key}")
        options = LAYERS[spec["type"]].widths.options
        if options:
            key = next(iter(options))
            out = spec.get(key, n_outputs if i == last else width)
            widths.append((f"{where}[{i}].{key} {short_repr(out)}" if key in spec else f"{where}[{i}]", width, out))
            width = out
    return widths


def check_memory(cfg, source: str | None = None, n_features: int | None = None, n_outputs: int | None = None,
                 n_rows: int | None = None, loaded: tuple[int, int] | None = None) -> None:
    """Raise ConfigError, naming the config value that asks for the most, when the run ``cfg``
    describes would need more than ``machine.memory_limit()``.

    ``n_features``, ``n_outputs`` and ``n_rows`` (training rows) are those of the loaded data;
    when None, what the config alone says (a generated dataset's size, else 1 and no rows).
    ``loaded`` is (the bytes the loaded splits hold, the rows of the largest split): the data
    itself, and the outputs that evaluating that split at the end of the run holds at once.
    ``source`` (the config file) starts the message.
    """
    generator = LOADERS[cfg.data.name]
    generated = isinstance(generator, Generated)
    parts = []  # (bytes, what asks for them, for what)
    if n_rows is None and generated:
        n_rows = generator.rows(cfg.data)
        values = n_rows * (generator.features + 1)
        rows_key = f"data.{generator.rows_key} {short_repr(getattr(cfg.data, generator.rows_key))}"
        parts.append((values * GENERATED_BYTES_PER_VALUE, rows_key, "its data"))
        if n_outputs is None and generator.classes_key:  # an output per class, for each row evaluated
            n_outputs = getattr(cfg.data, generator.classes_key)
            parts.append((n_rows * n_outputs * 8 * EVALUATION_COPIES,
                          f"data.{generator.classes_key} {short_repr(n_outputs)}", "evaluating its rows"))
    if loaded is not None:
        data_bytes, split_rows = loaded
        data = f"data.path {short_repr(cfg.data.path)}" if cfg.data.path else f"data.name {cfg.data.name}"
        parts.append((data_bytes, data, "its loaded rows"))
        parts.append((split_rows * (n_outputs or 1) * 8 * EVALUATION_COPIES, data, "evaluating its largest split"))
    if n_features is None:
        n_features = generator.features if generated else 1
    itemsize = np.dtype(cfg.dtype).itemsize
    copies = 2 + len(OPTIMIZERS[cfg.optimizer.name].slots)  # weights, gradients, optimizer slots
    layers = _layer_widths(list(cfg.model.layers), n_features, n_outputs or 1)
    for where, width_in, width_out in layers:
        parts.append(((width_in + 1) * width_out * itemsize * copies, where, "its weights"))
    rows = min(cfg.training.batch_size, n_rows) if n_rows else cfg.training.batch_size
    rows = max(rows, min(EVALUATION_ROWS, n_rows or 0))
    widths = n_features + sum(w for _, _, w in layers) * 2  # each layer's output and an activation of it
    widest = max(layers, key=lambda layer: layer[2], default=None)
    blamed = (f"training.batch_size {short_repr(cfg.training.batch_size)}" if widest is None or rows >= widest[2]
              else widest[0])  # the larger factor of rows x widths
    parts.append((rows * widths * itemsize * 3, blamed, "the activations and gradients of a batch"))
    total = sum(p[0] for p in parts)
    beyond = machine.beyond_limit(total)
    if beyond is None:
        return
    need, what, purpose = max(parts)
    prefix = f"{source}: " if source else ""
    run = "" if 10 * need > 9 * total else f" (the whole run {readable_bytes(total)})"
    raise ConfigError(f"{prefix}{what} needs {readable_bytes(need)} for {purpose}{run}, {beyond}")
