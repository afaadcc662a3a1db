"""How much memory a run's config asks for, estimated before anything is allocated, and the
limit a run must stay under.

A config can ask for any size (``data.n_samples: 100000000000``, a layer of ``units: 1e11``);
numpy would try, and the run would die of a MemoryError or be killed by the system after
swapping for minutes. So the config is checked first, twice: when it is read (with the sizes
the config alone fixes: generated datasets, layer widths; the message names the file) and once
the data is loaded (with its real width, rows and classes).

The estimate counts the generated data, the weights with their gradients and optimizer state,
and the activations of one batch (or one evaluation chunk); it is a lower bound of what
training allocates. The limit is half the physical memory, and at most half the address-space
limit of the process when one is set (``ulimit -v``); 8 GiB where the system says neither.
"""

import os

import numpy as np

from ..datasets.load import LOADERS
from ..errors import ConfigError
from ..layers.registry import LAYERS
from ..optimizers import make_optimizer

FALLBACK_LIMIT = 8 << 30
GENERATED_BYTES_PER_VALUE = 8 * 6  # float64 values: generated, their temporaries, the splits, the cast
EVALUATION_ROWS = 2048  # rows per chunk when the model is evaluated (training/evaluation.py)


def memory_limit() -> int:
    """The bytes a run may ask for: half the physical memory, at most half the address-space
    limit (RLIMIT_AS) when one is set; FALLBACK_LIMIT when neither is known."""
    try:
        limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (AttributeError, ValueError, OSError):
        limit = FALLBACK_LIMIT
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and soft > 0:
            limit = min(limit, soft // 2)
    except (ImportError, ValueError, OSError):
        pass
    return limit


def readable_bytes(n: float) -> str:
    """``3.2 TB``: a byte count in decimal units, three significant digits."""
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB", "EB"):
        if n < 1000 or unit == "EB":
            return f"{n:.3g} {unit}" if unit != "bytes" else f"{int(n)} bytes"
        n /= 1000
    raise AssertionError("unreachable")


def _layer_widths(specs, n_features: int, n_outputs: int) -> list[tuple[str, int, int]]:
    """(where, input width, output width) of every layer that sets a width (``units``), the last
    such layer without one getting ``n_outputs``; top-level layers only."""
    setting = [i for i, s in enumerate(specs) if LAYERS[s["type"]].widths.options]
    widths, width = [], n_features
    for i in setting:
        spec = specs[i]
        key = next(iter(LAYERS[spec["type"]].widths.options))
        out = spec.get(key, n_outputs if i == setting[-1] else width)
        widths.append((f"model.layers[{i}].{key} {out}" if key in spec else f"model.layers[{i}]", width, out))
        width = out
    return widths


def check_memory(cfg, source: str | None = None, n_features: int | None = None, n_outputs: int | None = None,
                 n_rows: int | None = None) -> None:
    """Raise ConfigError, naming the config value that asks for the most, when the run ``cfg``
    describes would need more than ``memory_limit()``.

    ``n_features``, ``n_outputs`` and ``n_rows`` (training rows) are those of the loaded data;
    when None, what the config alone says (a generated dataset's size, else 1 and no rows).
    ``source`` (the config file) starts the message.
    """
    generator = LOADERS[cfg.data.name]
    generated = getattr(generator, "rows", None)
    parts = []  # (bytes, what asks for them, for what)
    if n_rows is None and generated is not None:
        n_rows = generated(cfg.data)
        values = n_rows * (generator.features + 1)
        parts.append((values * GENERATED_BYTES_PER_VALUE,
                      f"data.{generator.rows_key} {getattr(cfg.data, generator.rows_key)}", "its data"))
    if n_features is None:
        n_features = getattr(generator, "features", 1)
    itemsize = np.dtype(cfg.dtype).itemsize
    copies = 2 + len(make_optimizer(cfg.optimizer).slots)  # weights, gradients, optimizer slots
    layers = _layer_widths(list(cfg.model.layers), n_features, n_outputs or 1)
    for where, width_in, width_out in layers:
        parts.append(((width_in + 1) * width_out * itemsize * copies, where, "its weights"))
    rows = min(cfg.training.batch_size, n_rows) if n_rows else cfg.training.batch_size
    rows = max(rows, min(EVALUATION_ROWS, n_rows or 0))
    widths = n_features + sum(w for _, _, w in layers) * 2  # each layer's output and an activation of it
    widest = max(layers, key=lambda layer: layer[2], default=None)
    blamed = (f"training.batch_size {cfg.training.batch_size}" if widest is None or rows >= widest[2]
              else widest[0])  # the larger factor of rows x widths
    parts.append((rows * widths * itemsize * 3, blamed, "the activations and gradients of a batch"))
    total, limit = sum(p[0] for p in parts), memory_limit()
    if total <= limit:
        return
    need, what, purpose = max(parts)
    prefix = f"{source}: " if source else ""
    run = "" if need > 0.9 * total else f" (the whole run about {readable_bytes(total)})"
    raise ConfigError(f"{prefix}{what} needs about {readable_bytes(need)} for {purpose}{run}, more than the "
                      f"{readable_bytes(limit)} a run may use on this machine (half its memory)")
