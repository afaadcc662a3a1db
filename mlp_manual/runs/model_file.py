"""Saving and loading models as ``.npz`` without pickle.

The archive holds one array per parameter and buffer (``layers.<i>.<key>``, and
``layers.<i>.<j>.<key>`` for the layers inside a residual block) and a JSON string ``__spec__``
describing the layers, read back with ``allow_pickle=False``.
"""

import json
import math
import os
import struct
import zipfile
import zlib

import numpy as np

from ..errors import ModelFileError
from ..files import write_npz
from ..layers.registry import LAYERS, MAX_NESTING, LayerType, input_width
from ..model import Model

FORMAT = "mlp-manual-model/1"


def model_arrays(model: Model, extra: dict | None = None) -> dict[str, np.ndarray]:
    """The arrays that ``save_model`` writes: weights, buffers, and the JSON spec."""
    spec = {"format": FORMAT, "layers": model.spec(), "dtype": str(model.dtype), **(extra or {})}
    return {"__spec__": np.array(json.dumps(spec)), **model.state()}


def save_model(model: Model, path: str | os.PathLike, extra: dict | None = None) -> None:
    """Write ``model`` to ``path`` atomically. ``extra`` (JSON types) is stored in the spec."""
    write_npz(path, model_arrays(model, extra))


MAX_DEFLATE_RATIO = 1100  # zlib cannot expand data by more than about 1032 times


def read_npz(path: str | os.PathLike, what: str = "model") -> dict[str, np.ndarray]:
    """Read every array of an ``.npz`` without pickle, turning every failure into ModelFileError.

    Each member's ``.npy`` header is checked against the sizes in the zip directory before its
    array is allocated, so a damaged or hostile file cannot ask for more memory than it holds.
    """
    if not os.path.exists(path):
        raise ModelFileError(f"{path}: no such {what} file")
    if not os.path.isfile(path):
        raise ModelFileError(f"{path}: is not a file, expected a {what} .npz")
    size = os.path.getsize(path)
    if size == 0:
        raise ModelFileError(f"{path}: the {what} file is empty")
    try:
        with zipfile.ZipFile(path) as zf:
            return {_array_name(info.filename, path, what): _read_member(zf, info, size, path, what)
                    for info in zf.infolist()}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zipfile.LargeZipFile,
            NotImplementedError, RuntimeError, zlib.error, struct.error, OverflowError) as e:
        if isinstance(e, ModelFileError):
            raise
        if isinstance(e, zipfile.BadZipFile):
            raise ModelFileError(f"{path}: not a readable {what} file (not a complete .npz archive: truncated, "
                                 "damaged, or another format)") from None
        raise ModelFileError(f"{path}: not a readable {what} file ({type(e).__name__}: {e})") from None


def _array_name(filename: str, path, what: str) -> str:
    if not filename.endswith(".npy"):
        raise ModelFileError(f"{path}: not a {what} file (archive member {filename!r} is not a .npy array)")
    return filename[:-4]


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive_size: int, path, what: str) -> np.ndarray:
    """One ``.npy`` member, after checking that its header describes exactly the bytes stored."""
    limit = archive_size * (1 if info.compress_type == zipfile.ZIP_STORED else MAX_DEFLATE_RATIO)
    if info.file_size > limit:
        raise ModelFileError(f"{path}: damaged {what} file ({info.filename} claims {info.file_size} bytes)")
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ModelFileError(f"{path}: damaged {what} file ({info.filename} has .npy version {version})")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f)
        if dtype.hasobject:
            raise ModelFileError(f"{path}: not a {what} file ({info.filename} holds Python objects, which are never loaded)")
        if any(not isinstance(n, int) or n < 0 for n in shape):
            raise ModelFileError(f"{path}: damaged {what} file ({info.filename} has shape {shape})")
        needed = f.tell() + math.prod(shape) * dtype.itemsize
    if needed != info.file_size:
        raise ModelFileError(f"{path}: damaged {what} file ({info.filename} should hold {needed} bytes, "
                             f"holds {info.file_size})")
    with zf.open(info) as f:
        return np.lib.format.read_array(f, allow_pickle=False)


FLOAT_DTYPES = ("float16", "float32", "float64")


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
    if spec.get("dtype", "float32") not in FLOAT_DTYPES:
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
    if layer_type is None:
        raise ModelFileError(f"{path}: layer {i} has unknown type {name!r}")
    stored = [a for k, a in arrays.items() if k.startswith(f"layers.{i}.")]
    dims = {d for a in stored for d in a.shape}
    widths = 1
    for k, v in kwargs.items():
        if k in layer_type.widths.names:
            if isinstance(v, bool) or not isinstance(v, int) or v < 1 or v not in dims:
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
        layer = layer_type.make(kwargs, np.random.default_rng(0), dtype)
        width = input_width(layer)
        if width is not None:
            layer.output_width(width)  # a block refuses inner layers that do not give its width back
    except (TypeError, ValueError) as e:
        raise ModelFileError(f"{path}: layer {i} ({layer_type.name}) cannot be rebuilt: {e}") from None
    return layer


def model_from_arrays(arrays: dict[str, np.ndarray], path) -> Model:
    """Rebuild a model from its spec and check every stored array against it."""
    spec = spec_of(arrays, path)
    dtype = np.dtype(spec.get("dtype", "float32"))
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


def load_model(path: str | os.PathLike) -> Model:
    """Load a model written by ``save_model``; raises ModelFileError for anything else."""
    return model_from_arrays(read_npz(path), path)
