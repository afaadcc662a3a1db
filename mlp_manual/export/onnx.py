"""A model's inference path as one ONNX graph (opset 17), and ``mlp-export``'s file-to-file step.

The graph takes ``input``: float32 (N, D) raw features, N dynamic. It applies the model file's
preprocessing when the spec has one (``{"kind": ..., "shift": ..., "scale": ...}``: Sub, then
Div), then every layer in evaluation mode: dropout is left out, batchnorm uses its running
statistics. A model trained with softmax_cross_entropy gives ``logits`` (N, C) and
``probabilities`` (N, C) (softmax); one trained with bce_with_logits gives ``logits`` (N, 1) and
``probabilities`` (N, 2), the columns 1 - sigmoid(z) and sigmoid(z); any other model gives
``output`` (N, K). A float64 model computes in float64 after casting the input.

N = samples, D = input features, C = classes, K = output units.
"""

import json
import os

import numpy as np

from .. import layers
from ..errors import ExportError, ModelFileError
from ..files import read_npz, write_bytes
from ..losses import BINARY, CLASS_INDEX, LOSSES
from ..model import Model
from ..runs.model_file import load_model, spec_of
from .graph import ELEMENT_TYPES, GraphBuilder, onnx


def _linear(g: GraphBuilder, layer: layers.Linear, x: str, name: str) -> str:
    W = g.const(f"{name}.W", layer.params["W"])  # (D, H)
    if "b" not in layer.params:
        return g.op("MatMul", x, W, name=name)
    return g.op("Gemm", x, W, g.const(f"{name}.b", layer.params["b"]), name=name)  # x @ W + b


def _elementwise(op_type: str):
    def emit(g, layer, x, name):
        return g.op(op_type, x, name=name)
    return emit


def _leaky_relu(g, layer: layers.LeakyReLU, x, name):
    return g.op("LeakyRelu", x, name=name, alpha=layer.slope)


def _gelu(g, layer: layers.GELU, x, name):
    # out = 0.5 x (1 + tanh(k (x + c x^3))), as GELU.forward computes it
    x3 = g.op("Mul", g.op("Mul", x, x, name=f"{name}.x2"), x, name=f"{name}.x3")
    cx3 = g.op("Mul", g.const(f"{name}.c", layers.GELU.C), x3, name=f"{name}.cx3")
    u = g.op("Mul", g.const(f"{name}.k", layers.GELU.K), g.op("Add", x, cx3, name=f"{name}.inner"), name=f"{name}.u")
    t = g.op("Tanh", u, name=f"{name}.t")
    half_x = g.op("Mul", g.const(f"{name}.half", 0.5), x, name=f"{name}.half_x")
    return g.op("Mul", half_x, g.op("Add", g.const(f"{name}.one", 1.0), t, name=f"{name}.one_plus_t"), name=name)


def _softmax(g, layer: layers.Softmax, x, name):
    return g.op("Softmax", x, name=name, axis=1)


def _dropout(g, layer: layers.Dropout, x, name):
    return x  # evaluation mode: dropout is the identity


def _layernorm(g, layer: layers.LayerNorm, x, name):
    return g.op("LayerNormalization", x, g.const(f"{name}.gamma", layer.params["gamma"]),
                g.const(f"{name}.beta", layer.params["beta"]), name=name, axis=-1, epsilon=layer.eps)


def _rmsnorm(g, layer: layers.RMSNorm, x, name):
    # out = gamma * x * rrms, rrms = 1 / sqrt(mean(x^2) + eps) over the features of a row
    mean_sq = g.op("ReduceMean", g.op("Mul", x, x, name=f"{name}.sq"), name=f"{name}.mean_sq", axes=[1], keepdims=1)
    rms = g.op("Sqrt", g.op("Add", mean_sq, g.const(f"{name}.eps", layer.eps), name=f"{name}.plus_eps"),
               name=f"{name}.rms")
    xhat = g.op("Mul", x, g.op("Reciprocal", rms, name=f"{name}.rrms"), name=f"{name}.xhat")
    return g.op("Mul", g.const(f"{name}.gamma", layer.params["gamma"]), xhat, name=name)


def _batchnorm(g, layer: layers.BatchNorm1d, x, name):
    consts = [g.const(f"{name}.{k}", v) for k, v in (("gamma", layer.params["gamma"]), ("beta", layer.params["beta"]),
                                                    ("running_mean", layer.buffers["running_mean"]),
                                                    ("running_var", layer.buffers["running_var"]))]
    return g.op("BatchNormalization", x, *consts, name=name, epsilon=layer.eps)


def _residual(g, layer: layers.Residual, x, name):
    fx = _emit_layers(g, layer.layers, x, name)  # the inner layers, named <name>.<j>
    return g.op("Add", x, fx, name=name)  # out = x + f(x)


# the ONNX translation of each built-in layer class (exactly that class: a subclass may compute
# something else)
EMITTERS = {
    layers.Linear: _linear,
    layers.ReLU: _elementwise("Relu"),
    layers.LeakyReLU: _leaky_relu,
    layers.Sigmoid: _elementwise("Sigmoid"),
    layers.Tanh: _elementwise("Tanh"),
    layers.GELU: _gelu,
    layers.Identity: _elementwise("Identity"),
    layers.Softmax: _softmax,
    layers.Dropout: _dropout,
    layers.LayerNorm: _layernorm,
    layers.RMSNorm: _rmsnorm,
    layers.BatchNorm1d: _batchnorm,
    layers.Residual: _residual,
}


def _emit_layers(g: GraphBuilder, model_layers: list, x: str, prefix: str) -> str:
    """The nodes of ``model_layers`` applied in order to ``x``, each named ``<prefix>.<index>``."""
    for i, layer in enumerate(model_layers):
        name, emit = f"{prefix}.{i}", EMITTERS.get(type(layer))
        if emit is None:
            raise ExportError(f"layer {name.removeprefix('layers.')} ({type(layer).__name__}) cannot be exported "
                              f"to ONNX: only the built-in layers can ({', '.join(cls.__name__ for cls in EMITTERS)})")
        x = emit(g, layer, x, name)
    return x


def _softmax_probabilities(g, logits: str) -> tuple[str, int | None]:
    return g.op("Softmax", logits, name="probabilities", axis=1), None  # (N, C), as wide as the logits


def _sigmoid_probabilities(g, logits: str) -> tuple[str, int | None]:
    p1 = g.op("Sigmoid", logits, name="p1")  # (N, 1)
    p0 = g.op("Sub", g.const("one", 1.0), p1, name="p0")  # (N, 1)
    return g.op("Concat", p0, p1, name="probabilities", axis=1), 2  # (N, 2)


# the targets of the loss the model was trained with -> how its logits become class probabilities
PROBABILITIES = {CLASS_INDEX: _softmax_probabilities, BINARY: _sigmoid_probabilities}


def _preprocess_array(entry: dict, key: str, width: int | None, where: str) -> np.ndarray:
    """The entry's ``shift`` or ``scale``: a finite number, or one per input feature (a scale nonzero)."""
    try:
        a = np.asarray(entry[key], dtype=np.float64)
    except (TypeError, ValueError):
        a = np.full(2, np.nan)  # reported below like any other bad value
    fits = a.ndim == 0 or (a.ndim == 1 and (width is None or len(a) == width))
    if not fits or not np.all(np.isfinite(a)) or (key == "scale" and np.any(a == 0)):
        raise ModelFileError(f"{where}: damaged preprocess {key} {entry[key]!r} (expected a finite number "
                             f"or one per input feature{', nonzero' if key == 'scale' else ''})")
    return a


def _preprocess(g: GraphBuilder, x: str, entry, width: int | None, where: str) -> str:
    """x -> (x - shift) / scale when the spec has a preprocessing entry (any kind but "none")."""
    if entry is None or (isinstance(entry, dict) and entry.get("kind") == "none"):
        return x
    if not isinstance(entry, dict) or not {"kind", "shift", "scale"} <= entry.keys():
        raise ModelFileError(f"{where}: damaged preprocess entry {entry!r} (expected kind, shift and scale)")
    shift, scale = (_preprocess_array(entry, key, width, where) for key in ("shift", "scale"))
    x = g.op("Sub", x, g.const("preprocess.shift", shift), name="preprocess.centred")
    return g.op("Div", x, g.const("preprocess.scale", scale), name="preprocess.scaled")


def _metadata(spec: dict, width: int | None, where: str) -> dict[str, str]:
    """ONNX metadata from the spec: ``loss``, and ``feature_names`` as a JSON list."""
    metadata = {"loss": spec["loss"]} if isinstance(spec.get("loss"), str) else {}
    names = spec.get("feature_names")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names) \
                or (width is not None and len(names) != width):
            raise ModelFileError(f"{where}: damaged feature_names (expected one name per input feature)")
        metadata["feature_names"] = json.dumps(names)
    return metadata


def export_model(model: Model, spec: dict | None = None, where: str = "model") -> "onnx.ModelProto":
    """The ONNX model of ``model``'s inference path; ``spec`` is the model file's JSON spec
    (its ``loss``, ``preprocess`` and ``feature_names`` entries are used when present).

    Raises ExportError naming the first layer that has no ONNX translation.
    """
    spec = spec or {}
    g = GraphBuilder(model.dtype)
    width = model.input_width()
    x = g.fresh("input")
    if g.dtype != np.float32:
        x = g.op("Cast", x, name="input_cast", to=ELEMENT_TYPES[g.dtype])
    x = _preprocess(g, x, spec.get("preprocess"), width, where)
    x = _emit_layers(g, model.layers, x, "layers")
    out_width = model.output_width(width) if width is not None else None
    target = LOSSES[spec["loss"]].target if spec.get("loss") in LOSSES else None
    if target in PROBABILITIES:
        logits = g.op("Identity", x, name="logits")
        probabilities, p_width = PROBABILITIES[target](g, logits)
        outputs = [g.value_info(logits, out_width), g.value_info(probabilities, p_width or out_width)]
    else:
        outputs = [g.value_info(g.op("Identity", x, name="output"), out_width)]
    doc = "mlp-manual model: " + " -> ".join(repr(layer) for layer in model.layers)
    return g.model([g.value_info("input", width, np.float32)], outputs, _metadata(spec, width, where), doc)


def write_onnx(proto: "onnx.ModelProto", path: str | os.PathLike) -> None:
    """Write ``proto`` to ``path`` atomically."""
    try:
        write_bytes(path, proto.SerializeToString())
    except OSError as e:
        raise ExportError(f"{path}: cannot write the ONNX file ({e.strerror or e})") from None


def export_file(model_path: str | os.PathLike, output_path: str | os.PathLike) -> "onnx.ModelProto":
    """Read a model file written by ``save_model``, export it, write ``output_path``; return the model."""
    model = load_model(model_path)
    spec = spec_of(read_npz(model_path), model_path)
    proto = export_model(model, spec, str(model_path))
    write_onnx(proto, output_path)
    return proto
