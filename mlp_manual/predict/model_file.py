"""Saving and loading models as ``.npz`` without pickle.

The archive holds one array per parameter and buffer (``layers.<i>.<key>``, and
``layers.<i>.<j>.<key>`` for the layers inside a residual block) and a JSON string ``__spec__``
describing the layers, the dtype and, for a trained model, the data it takes
(``model_info.ModelInfo``: task, loss, preprocessing, classes, names, input shape, version),
read back with ``allow_pickle=False``.
"""

import json
import math
import os

import numpy as np

from ..errors import ModelFileError
from ..files import read_npz, write_npz
from ..layers.options import MAX_NESTING
from ..layers.registry import (
    LAYERS,
    LayerType,
    input_width,
    make_layer,
    names_code,
    output_width,
)
from ..model import Model
from ..options import is_integer
from .model_info import ModelInfo, info_from_spec

FORMAT = "mlp-manual-model/1"


def model_arrays(model: Model, extra: dict | None = None, info: ModelInfo | None = None) -> dict[str, np.ndarray]:
    """The arrays that ``save_model`` writes: weights, buffers, and the JSON spec."""
    spec = {"format": FORMAT, "layers": model.spec(), "dtype": str(model.dtype),
            **(info.to_json() if info else {}), **(extra or {})}
    return {"__spec__": np.array(json.dumps(spec)), **model.state()}


def save_model(model: Model, path: str | os.PathLike, extra: dict | None = None,
               info: ModelInfo | None = None) -> None:
    """Write ``model`` to ``path`` atomically. ``info`` describes the data it was trained on
    (what prediction needs); ``extra`` (JSON types) is stored in the spec as well."""
    write_npz(path, model_arrays(model, extra, info))


FLOAT_DTYPES = ("float16", "float32", "float64")
MAX_UNSIZED_WIDTH = 1 << 20  # a width that sizes no array (an embedding's context): far above any real one


def spec_of(arrays: dict[str, np.ndarray], path) -> dict:
    """Parse and check the ``__spec__`` entry of a model archive."""
    if "__spec__" not in arrays:
        if "__meta__" in arrays:
            raise ModelFileError(f"{path}: this is a training checkpoint, not a model; use the model.npz "
                                 "of its run folder (or mlp-train --resume to continue training)")
        raise ModelFileError(f"{path}: not an mlp-manual model (no __spec__ entry)")
    raw = arrays["__spec__"]
    if raw.shape != () or raw.dtype.kind != "U":
        raise ModelFileError(f"{path}: damaged model spec (a {raw.dtype} array of shape {raw.shape}, not text)")
    try:
        spec = json.loads(str(raw))
    except (json.JSONDecodeError, RecursionError):
        raise ModelFileError(f"{path}: damaged model spec (invalid JSON)") from None
    if not isinstance(spec, dict) or spec.get("format") != FORMAT or not isinstance(spec.get("layers"), list):
        raise ModelFileError(f"{path}: not an mlp-manual model (format {spec.get('format') if isinstance(spec, dict) else None!r})")
    if spec.get("dtype") not in FLOAT_DTYPES:
        raise ModelFileError(f"{path}: damaged model spec (dtype {spec.get('dtype')!r}, expected one of "
                             f"{', '.join(FLOAT_DTYPES)})")
    return spec


def _layer_kwargs(i: str, layer_spec, arrays: dict[str, np.ndarray], path) -> tuple[LayerType, dict]:
    """Check one layer's JSON description against the layer registry before anything is
    allocated for it.

    Every option must be one its type takes, of its kind (numbers finite); the widths must be
    positive integers that are dimensions of the layer's stored arrays, and their product no
    larger than those arrays, so a spec cannot ask for more memory than the file holds. Option
    ranges are checked last, as the layer's constructor would. ``i`` names the layer as its
    arrays do: "2", or "2.0" for the first layer inside layer 2.
    """
    if not isinstance(layer_spec, dict):
        raise ModelFileError(f"{path}: layer {i} is {layer_spec!r}, not a layer description")
    kwargs = dict(layer_spec)
    name = kwargs.pop("type", None)
    layer_type = LAYERS.get(name) if isinstance(name, str) else None
    if code := names_code(name):
        raise ModelFileError(f"{path}: layer {i} has type {name!r}, which {code}")
    if layer_type is None:
        raise ModelFileError(f"{path}: layer {i} has unknown type {name!r}")
    stored = [a for k, a in arrays.items() if k.startswith(f"layers.{i}.")]
    dims = {d for a in stored for d in a.shape}
    widths = 1
    for k, v in kwargs.items():
        if k in layer_type.widths.unsized:  # sizes no array: only its use is bounded (by the data it takes)
            if not is_integer(v) or not 1 <= v <= MAX_UNSIZED_WIDTH:
                raise ModelFileError(f"{path}: layer {i} ({name}) has {k} {v!r}, expected an integer in "
                                     f"1..{MAX_UNSIZED_WIDTH}")
        elif k in layer_type.widths.names:
            if not is_integer(v, 1) or v not in dims:
                raise ModelFileError(f"{path}: layer {i} ({name}) has {k} {v!r}, which its stored arrays "
                                     f"(dimensions {sorted(dims)}) do not have")
            widths *= v
        elif k in layer_type.options:
            option = layer_type.options[k]
            if not option.kind.accepts(v) or (isinstance(v, float) and not math.isfinite(v)):
                raise ModelFileError(f"{path}: layer {i} ({name}) has {k} {v!r}, expected a value like "
                                     f"{option.default!r}")
        else:
            raise ModelFileError(f"{path}: layer {i} ({name}) has unknown option {k!r}")
    if widths > sum(a.size for a in stored) + 1:
        raise ModelFileError(f"{path}: layer {i} ({name}) has widths larger than its stored arrays")
    for k, v in kwargs.items():
        option = layer_type.options.get(k)
        if option is not None and not option.in_range(v):
            raise ModelFileError(f"{path}: layer {i} ({name}) cannot be rebuilt: {name} {k} must {option.must}, "
                                 f"got {v!r}")
    return layer_type, kwargs


def _rebuild(i: str, layer_spec, arrays: dict[str, np.ndarray], path, dtype):
    """One layer from its JSON description, after the checks of ``_layer_kwargs``; the layers an
    option holds (a residual's) are checked and rebuilt first, each the same way."""
    layer_type, kwargs = _layer_kwargs(i, layer_spec, arrays, path)
    for k, v in kwargs.items():
        if k in layer_type.options and layer_type.options[k].kind.holds_layers:
            if i.count(".") >= MAX_NESTING:
                raise ModelFileError(f"{path}: layer {i} ({layer_type.name}) nests layers more than {MAX_NESTING} deep")
            kwargs[k] = [_rebuild(f"{i}.{j}", inner, arrays, path, dtype) for j, inner in enumerate(v)]
    try:
        layer = make_layer(layer_type, kwargs, np.random.default_rng(0), dtype)
        width = input_width(layer)
        if width is not None:
            output_width(layer, width)  # a block refuses inner layers that do not give its width back
    except (TypeError, ValueError) as e:
        raise ModelFileError(f"{path}: layer {i} ({layer_type.name}) cannot be rebuilt: {e}") from None
    return layer


def model_from_arrays(arrays: dict[str, np.ndarray], path) -> Model:
    """Rebuild a model from its spec and check every stored array against it."""
    spec = spec_of(arrays, path)
    dtype = np.dtype(spec["dtype"])
    model = Model([_rebuild(str(i), layer_spec, arrays, path, dtype) for i, layer_spec in enumerate(spec["layers"])])
    expected = model.state()
    missing = [k for k in expected if k not in arrays]
    unexpected = [k for k in arrays if k != "__spec__" and k not in expected]
    if missing or unexpected:
        raise ModelFileError(f"{path}: arrays do not match the layer spec "
                             f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
    for k, v in expected.items():
        a = arrays[k]
        if a.shape != v.shape or not np.issubdtype(a.dtype, np.floating):
            raise ModelFileError(f"{path}: {k} has shape {a.shape} and dtype {a.dtype}, expected {v.shape} float")
        if not np.all(np.isfinite(a)):
            raise ModelFileError(f"{path}: {k} holds non-finite values (NaN or infinity)")
    model.load_state(arrays)
    return model


def read_model(path: str | os.PathLike) -> tuple[Model, ModelInfo]:
    """Load a model file and the description of its data, both checked; the model is in
    evaluation mode. Raises ModelFileError for anything but a file ``save_model`` wrote."""
    arrays = read_npz(path)
    model = model_from_arrays(arrays, path)
    return model.eval(), info_from_spec(spec_of(arrays, path), model, path)


def load_model(path: str | os.PathLike) -> Model:
    """Load a model written by ``save_model``, in evaluation mode (dropout off, batch norm on its
    running statistics); raises ModelFileError for anything else."""
    return read_model(path)[0]
