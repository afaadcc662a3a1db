"""A small builder of ONNX graphs: named constants, nodes with fresh output names, and the
finished model checked by ONNX's own checker.

The ``onnx`` package is an optional dependency: ``pip install "mlp-manual[onnx]"``.
"""

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    raise ImportError('exporting to ONNX needs the onnx package; install it with: pip install "mlp-manual[onnx]"') from e

from .. import __version__
from ..errors import ExportError
from ..layers.registry import LAYERS, row_of

OPSET = 17  # the first opset with LayerNormalization; onnxruntime has run it since 1.11
ML_OPSET = 3  # ai.onnx.ml's LabelEncoder and OneHotEncoder (categorical columns), as with opset 17
IR_VERSION = 8  # the IR version that opset 17 came with, so older runtimes load the file too
ELEMENT_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
                 np.dtype(np.int64): TensorProto.INT64}


def exportable_types() -> list[str]:
    """The layer types that translate to ONNX: those whose row names an emitter (layers/onnx.py)."""
    return [t.name for t in LAYERS.values() if callable(t.onnx)]


class GraphBuilder:
    """Collects the nodes and constants of one graph whose arithmetic is in ``dtype``."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.nodes: list = []
        self.constants: list = []
        self.names: set[str] = set()

    def fresh(self, name: str) -> str:
        """``name``, or ``name_2``, ``name_3``... if it is taken."""
        out, n = name, 1
        while out in self.names:
            n += 1
            out = f"{name}_{n}"
        self.names.add(out)
        return out

    def const(self, name: str, value, dtype=None) -> str:
        """A constant tensor (a scalar or an array) in the graph's dtype, or in ``dtype`` (int64
        shapes); returns its name."""
        name = self.fresh(name)
        self.constants.append(numpy_helper.from_array(np.asarray(value, dtype=dtype or self.dtype), name=name))
        return name

    def op(self, op_type: str, *inputs: str, name: str, **attrs) -> str:
        """One node of ``op_type`` on ``inputs``; returns the name of its output."""
        out = self.fresh(name)
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out

    def layers(self, model_layers: list, x: str, prefix: str) -> str:
        """The nodes of ``model_layers`` applied in order to ``x``, each named ``<prefix>.<index>``
        by the emitter its type's row names (layers/types.py); returns the last output's name."""
        for i, layer in enumerate(model_layers):
            name, emit = f"{prefix}.{i}", row_of(layer).onnx
            if not callable(emit):
                raise ExportError(f"layer {name.removeprefix('layers.')} ({type(layer).__name__}) cannot be exported "
                                  "to ONNX: only the built-in layers can (" + ", ".join(exportable_types()) + ")")
            x = emit(layer, self, x, name)
        return x

    def model(self, inputs: list, outputs: list, metadata: dict[str, str], doc: str) -> "onnx.ModelProto":
        """The finished model, after ONNX's checker (with shape inference) has accepted it.

        Inputs: inputs and outputs, lists of ``helper.make_tensor_value_info``.
        """
        graph = helper.make_graph(self.nodes, "mlp_manual", inputs, outputs, self.constants)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                        helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                                  producer_name="mlp-manual", producer_version=__version__, doc_string=doc)
        model.ir_version = IR_VERSION
        helper.set_model_props(model, metadata)
        try:
            onnx.checker.check_model(model, full_check=True)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
            raise ExportError(f"the ONNX graph failed ONNX's checker: {str(e).splitlines()[0]}") from None
        return model

    def label_info(self, name: str, width: int | None = None):
        """A (N,) tensor of strings, or (N, width)."""
        return helper.make_tensor_value_info(name, TensorProto.STRING, ["N"] if width is None else ["N", width])

    def value_info(self, name: str, width, dtype=None):
        """A (N, width) tensor description; N, and ``width`` when None, are left symbolic."""
        element = ELEMENT_TYPES[np.dtype(dtype or self.dtype)]
        return helper.make_tensor_value_info(name, element, ["N", width if width is not None else "D"])
