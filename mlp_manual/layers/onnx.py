"""Each built-in layer type's forward as ONNX nodes, for mlp-export: ``emit(layer, g, x, name)``
adds the nodes that compute the layer's output from the tensor named ``x`` to the graph builder
``g`` (export/graph.py, which this module does not import) and returns the output's name. The
layer-type table (types.py) names each type's emitter. Dropout and batch norm are exported as
in evaluation mode.
"""

import numpy as np


def linear(layer, g, x, name):
    W = g.const(f"{name}.W", layer.params["W"])  # (D, H)
    if "b" not in layer.params:
        return g.op("MatMul", x, W, name=name)
    return g.op("Gemm", x, W, g.const(f"{name}.b", layer.params["b"]), name=name)  # x @ W + b


def op(op_type: str, **attrs):
    """The emitter of a layer that is one ONNX operator of the same meaning."""
    return lambda layer, g, x, name: g.op(op_type, x, name=name, **attrs)


def leaky_relu(layer, g, x, name):
    return g.op("LeakyRelu", x, name=name, alpha=layer.slope)


def gelu(layer, g, x, name):
    # out = 0.5 x (1 + tanh(k (x + c x^3))), as forward computes it
    x3 = g.op("Mul", g.op("Mul", x, x, name=f"{name}.x2"), x, name=f"{name}.x3")
    cx3 = g.op("Mul", g.const(f"{name}.c", layer.C), x3, name=f"{name}.cx3")
    u = g.op("Mul", g.const(f"{name}.k", layer.K), g.op("Add", x, cx3, name=f"{name}.inner"), name=f"{name}.u")
    t = g.op("Tanh", u, name=f"{name}.t")
    half_x = g.op("Mul", g.const(f"{name}.half", 0.5), x, name=f"{name}.half_x")
    return g.op("Mul", half_x, g.op("Add", g.const(f"{name}.one", 1.0), t, name=f"{name}.one_plus_t"), name=name)


def layernorm(layer, g, x, name):
    return g.op("LayerNormalization", x, g.const(f"{name}.gamma", layer.params["gamma"]),
                g.const(f"{name}.beta", layer.params["beta"]), name=name, axis=-1, epsilon=layer.eps)


def rmsnorm(layer, g, x, name):
    # out = gamma * x * rrms, rrms = 1 / sqrt(mean(x^2) + eps) over the features of a row
    mean_sq = g.op("ReduceMean", g.op("Mul", x, x, name=f"{name}.sq"), name=f"{name}.mean_sq", axes=[1], keepdims=1)
    rms = g.op("Sqrt", g.op("Add", mean_sq, g.const(f"{name}.eps", layer.eps), name=f"{name}.plus_eps"),
               name=f"{name}.rms")
    xhat = g.op("Mul", x, g.op("Reciprocal", rms, name=f"{name}.rrms"), name=f"{name}.xhat")
    return g.op("Mul", g.const(f"{name}.gamma", layer.params["gamma"]), xhat, name=name)


def batchnorm(layer, g, x, name):  # evaluation mode, with the running statistics
    tensors = {**layer.params, **layer.buffers}
    consts = [g.const(f"{name}.{k}", tensors[k]) for k in ("gamma", "beta", "running_mean", "running_var")]
    return g.op("BatchNormalization", x, *consts, name=name, epsilon=layer.eps)


def dropout(layer, g, x, name):  # evaluation mode, where dropout is the identity
    return x


def embedding(layer, g, x, name):
    rows = g.op("Gather", g.const(f"{name}.W", layer.params["W"]), x, name=f"{name}.rows", axis=0)  # (N, T, E)
    width = g.const(f"{name}.shape", [-1, layer.context * layer.dim], np.int64)
    return g.op("Reshape", rows, width, name=name)  # (N, T * E): the rows of a context side by side


def residual(layer, g, x, name):
    fx = g.layers(layer.layers, x, name)  # the inner layers, named <name>.<j>
    return g.op("Add", x, fx, name=name)  # out = x + f(x)
