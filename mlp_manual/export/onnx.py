"""A model's inference path as one ONNX graph (opset 17), and ``mlp-export``'s file-to-file step.

The graph takes ``input``: float32 (N, D) raw features, N dynamic, or for a model whose first
layer is an embedding int64 (N, T) character indices (Gather picks the rows). It applies the
model file's preprocessing when the spec has one (``{"kind": ..., "shift": ..., "scale": ...}``:
a missing value's fill, Sub, then Div). A model with categorical columns takes ``input`` with
its number columns only and ``categories`` (N, S) strings, its categorical columns, each
becoming one-hot columns (an empty string is a missing value). Then every layer in evaluation
mode: dropout is left out, batchnorm uses its running statistics. A model trained with
softmax_cross_entropy gives ``logits`` (N, C) and ``probabilities`` (N, C) (softmax); one
trained with bce_with_logits gives ``logits`` (N, 1) and ``probabilities`` (N, 2), the columns
1 - sigmoid(z) and sigmoid(z); any other model gives ``output`` (N, K), in the targets' units
for a model trained on standardized targets. A float64 model computes in float64 after casting
the input.

N = samples, D = input features, S = categorical columns, C = classes, K = output units.
"""

import json
import os

import numpy as np

from ..datasets.preprocessing import Preprocessing
from ..errors import ExportError
from ..files import write_bytes
from ..layers.registry import row_of
from ..losses import BINARY, CLASS_INDEX, LOSSES
from ..model import Model
from ..predict.model_file import read_model
from ..predict.model_info import ModelInfo
from .graph import ELEMENT_TYPES, GraphBuilder, onnx


def _softmax_probabilities(g, logits: str) -> tuple[str, int | None]:
    return g.op("Softmax", logits, name="probabilities", axis=1), None  # (N, C), as wide as the logits


def _sigmoid_probabilities(g, logits: str) -> tuple[str, int | None]:
    p1 = g.op("Sigmoid", logits, name="p1")  # (N, 1)
    p0 = g.op("Sub", g.const("one", 1.0), p1, name="p0")  # (N, 1)
    return g.op("Concat", p0, p1, name="probabilities", axis=1), 2  # (N, 2)


# the targets of the loss the model was trained with -> how its logits become class probabilities
PROBABILITIES = {CLASS_INDEX: _softmax_probabilities, BINARY: _sigmoid_probabilities}


def _preprocess(g: GraphBuilder, x: str, preprocessing: Preprocessing | None) -> str:
    """x -> (x - shift) / scale, the model file's stored preprocessing (nothing for kind "none"),
    after each missing value (NaN) is replaced by its feature's fill value, when it has those.
    With categories, x holds the number columns only."""
    if preprocessing is not None and preprocessing.fill is not None:
        fill = np.asarray(preprocessing.fill)  # (R,)
        if preprocessing.categories is not None:
            fill = fill[preprocessing.numbers]
        x = g.op("Where", g.op("IsNaN", x, name="preprocess.missing"), g.const("preprocess.fill", fill), x,
                 name="preprocess.filled")
    if preprocessing is None or preprocessing.kind == "none":
        return x
    x = g.op("Sub", x, g.const("preprocess.shift", np.asarray(preprocessing.shift)), name="preprocess.centred")
    return g.op("Div", x, g.const("preprocess.scale", np.asarray(preprocessing.scale)), name="preprocess.scaled")


def _one_hot(g: GraphBuilder, texts: str, preprocessing: Preprocessing) -> list[str]:
    """The one-hot columns (N, K) of each categorical column of ``texts`` (N, C) strings, in
    order: a LabelEncoder maps a category to its index (an empty string, a missing value, to
    the fill's when missing values are filled; any other text to -1), a OneHotEncoder makes
    the columns, an unseen -1 giving zeros or, as the model file says, an error."""
    blocks = []
    for i, j in enumerate(preprocessing.categorical):
        categories = list(preprocessing.categories[j])
        keys, values = categories, list(range(len(categories)))
        if preprocessing.fill is not None:
            keys, values = keys + [""], values + [int(preprocessing.fill[j])]
        column = g.op("Gather", texts, g.const(f"categories.{i}.column", [i], np.int64), name=f"categories.{i}.text",
                      axis=1)  # (N, 1)
        codes = g.op("LabelEncoder", column, name=f"categories.{i}.code", domain="ai.onnx.ml", keys_strings=keys,
                     values_int64s=values, default_int64=-1)  # (N, 1) int64
        hot = g.op("OneHotEncoder", codes, name=f"categories.{i}.one_hot", domain="ai.onnx.ml",
                   cats_int64s=list(range(len(categories))), zeros=int(preprocessing.unseen == "zeros"))  # (N, 1, K)
        hot = g.op("Reshape", hot, g.const(f"categories.{i}.shape", [-1, len(categories)], np.int64),
                   name=f"categories.{i}.columns")  # (N, K) float32
        if g.dtype != np.float32:
            hot = g.op("Cast", hot, name=f"categories.{i}.cast", to=ELEMENT_TYPES[g.dtype])
        blocks.append(hot)
    return blocks


def _metadata(info: ModelInfo) -> dict[str, str]:
    """ONNX metadata, each value JSON but ``loss``: ``loss``, ``feature_names`` (a list, in the
    raw rows' order; with categorical columns, ``inputs`` says which are the columns of
    ``input`` and which those of ``categories``),
    ``classes`` (the class labels as in the training data, in probability-column order),
    ``target_names`` (regression), ``preprocessing`` (what the graph applies to the raw input
    first: kind, shift and scale), and for a text model its ``vocabulary`` (the characters of
    indices 1, 2, ...; 0 is the boundary token)."""
    metadata = {"loss": info.loss} if info.loss else {}
    if info.feature_names is not None:
        metadata["feature_names"] = json.dumps(list(info.feature_names))
        p = info.preprocessing
        if p is not None and p.categories is not None:
            metadata["inputs"] = json.dumps({"input": [info.feature_names[j] for j in p.numbers],
                                             "categories": [info.feature_names[j] for j in p.categorical]})
    if info.classes is not None:
        metadata["classes"] = json.dumps(list(info.classes))
    if info.target_names is not None:
        metadata["target_names"] = json.dumps(list(info.target_names))
    if info.preprocessing is not None:
        metadata["preprocessing"] = json.dumps(info.preprocessing.to_json())
    if info.vocabulary is not None:
        metadata["vocabulary"] = json.dumps(info.vocabulary.to_json())
    return metadata


def _labels(g: GraphBuilder, scores: str, classes: tuple) -> str:
    """label (N,) strings: each row's class label (as text) at the largest of its ``scores``,
    the first on a tie, as mlp-predict chooses."""
    index = g.op("ArgMax", scores, name="class_index", axis=1, keepdims=0)  # (N,) int64
    return g.op("Gather", g.const("class_labels", np.array([str(c) for c in classes], dtype=object), dtype=object),
                index, name="label", axis=0)


def export_model(model: Model, info: ModelInfo | None = None) -> "onnx.ModelProto":
    """The ONNX model of ``model``'s inference path; ``info`` is the checked description of its
    data that the model file holds (its loss, preprocessing, class labels and feature names are
    used). Outputs: ``logits``, ``probabilities`` and, with class labels, ``label`` (N,) strings
    for a classifier; ``output`` for regression.

    Raises ExportError naming the first layer that has no ONNX translation.
    """
    info = info or ModelInfo(None, None, None, None)
    g = GraphBuilder(model.dtype)
    width = model.input_width()
    indices = bool(model.layers) and row_of(model.layers[0]).takes_indices
    input_dtype = np.int64 if indices else np.float32
    p = info.preprocessing
    categorical = p is not None and p.categories is not None
    inputs, number_width = [], width if not categorical else len(p.numbers)
    if number_width != 0:
        x = g.fresh("input")
        inputs.append(g.value_info(x, number_width, input_dtype))
        if not indices and g.dtype != np.float32:
            x = g.op("Cast", x, name="input_cast", to=ELEMENT_TYPES[g.dtype])
        if not indices:
            x = _preprocess(g, x, p)
    if categorical:
        texts = g.fresh("categories")
        inputs.append(g.label_info(texts, len(p.categorical)))
        blocks = ([x] if number_width else []) + _one_hot(g, texts, p)
        x = g.op("Concat", *blocks, name="preprocess.inputs", axis=1) if len(blocks) > 1 else blocks[0]
    x = g.layers(model.layers, x, "layers")
    out_width = model.output_width(width) if width is not None else None
    target = LOSSES[info.loss].target if info.loss else None
    if target in PROBABILITIES:
        logits = g.op("Identity", x, name="logits")
        probabilities, p_width = PROBABILITIES[target](g, logits)
        outputs = [g.value_info(logits, out_width), g.value_info(probabilities, p_width or out_width)]
        if info.classes is not None:  # argmax of the logits, or of the two columns of a binary logit
            outputs.append(g.label_info(_labels(g, probabilities if p_width else logits, info.classes)))
    else:
        targets = info.target_preprocessing
        if targets is not None:  # outputs back in the targets' units: y = out * scale + shift
            x = g.op("Add", g.op("Mul", x, g.const("targets.scale", targets.scale), name="targets.scaled"),
                     g.const("targets.shift", targets.shift), name="targets.shifted")
        outputs = [g.value_info(g.op("Identity", x, name="output"), out_width)]
    doc = "mlp-manual model: " + " -> ".join(repr(layer) for layer in model.layers)
    return g.model(inputs, outputs, _metadata(info), doc)


def write_onnx(proto: "onnx.ModelProto", path: str | os.PathLike) -> None:
    """Write ``proto`` to ``path`` atomically."""
    try:
        write_bytes(path, proto.SerializeToString())
    except OSError as e:
        raise ExportError(f"{path}: cannot write the ONNX file ({e.strerror or e})") from None


def export_file(model_path: str | os.PathLike, output_path: str | os.PathLike) -> "onnx.ModelProto":
    """Read a model file written by ``save_model``, export it, write ``output_path``; return the model."""
    proto = export_model(*read_model(model_path))
    write_onnx(proto, output_path)
    return proto
