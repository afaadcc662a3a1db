"""Saving and loading models as ``.npz`` without pickle.

The archive holds one array per parameter and buffer (``layers.<i>.<key>``) and a JSON
string ``__spec__`` describing the layers, read back with ``allow_pickle=False``.
"""

import json
import os
import zipfile

import numpy as np

from .errors import ModelFileError
from .files import write_npz
from .layers import LAYER_TYPES
from .model import Model, make_layer

FORMAT = "mlp-manual-model/1"


def model_arrays(model: Model, extra: dict | None = None) -> dict[str, np.ndarray]:
    """The arrays that ``save_model`` writes: weights, buffers, and the JSON spec."""
    spec = {"format": FORMAT, "layers": model.spec(), "dtype": str(model.dtype), **(extra or {})}
    return {"__spec__": np.array(json.dumps(spec)), **model.state()}


def save_model(model: Model, path: str | os.PathLike, extra: dict | None = None) -> None:
    """Write ``model`` to ``path`` atomically. ``extra`` (JSON types) is stored in the spec."""
    write_npz(path, model_arrays(model, extra))


def read_npz(path: str | os.PathLike, what: str = "model") -> dict[str, np.ndarray]:
    """Read every array of an ``.npz`` without pickle, turning every failure into ModelFileError."""
    if not os.path.isfile(path):
        raise ModelFileError(f"{path}: no such {what} file")
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError) as e:
        raise ModelFileError(f"{path}: not a readable {what} file ({type(e).__name__}: {e})") from None


def spec_of(arrays: dict[str, np.ndarray], path) -> dict:
    """Parse and check the ``__spec__`` entry of a model archive."""
    if "__spec__" not in arrays:
        raise ModelFileError(f"{path}: not an mlp-manual model (no __spec__ entry)")
    try:
        spec = json.loads(str(arrays["__spec__"]))
    except json.JSONDecodeError:
        raise ModelFileError(f"{path}: damaged model spec (invalid JSON)") from None
    if not isinstance(spec, dict) or spec.get("format") != FORMAT or not isinstance(spec.get("layers"), list):
        raise ModelFileError(f"{path}: not an mlp-manual model (format {spec.get('format') if isinstance(spec, dict) else None!r})")
    return spec


def model_from_arrays(arrays: dict[str, np.ndarray], path) -> Model:
    """Rebuild a model from its spec and check every stored array against it."""
    spec = spec_of(arrays, path)
    dtype = np.dtype(spec.get("dtype", "float32"))
    layers = []
    for i, layer_spec in enumerate(spec["layers"]):
        kwargs = dict(layer_spec)
        name = kwargs.pop("type", None)
        if name not in LAYER_TYPES:
            raise ModelFileError(f"{path}: layer {i} has unknown type {name!r}")
        try:
            layers.append(make_layer(name, kwargs, np.random.default_rng(0), dtype))
        except (TypeError, ValueError) as e:
            raise ModelFileError(f"{path}: layer {i} ({name}) cannot be rebuilt: {e}") from None
    model = Model(layers)
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
    model.load_state(arrays)
    return model


def load_model(path: str | os.PathLike) -> Model:
    """Load a model written by ``save_model``; raises ModelFileError for anything else."""
    return model_from_arrays(read_npz(path), path)
