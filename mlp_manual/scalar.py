"""The math of the layers and losses once more, one scalar at a time, in the style of micrograd
(mlp-explain --scalar).

Every number is a ``Value`` that remembers the values it was made from and the local derivative
with respect to each; its ``backward`` applies the chain rule to them, ``a.grad += local *
out.grad``. A layer's scalar version takes the rows of input Values (a list of lists), makes
its output Values on the ``tape`` in the order the forward computes them, and returns them with
its parameters' Values; a loss's takes the output rows and the targets and returns the Values
of each row's (or entry's) loss. The layer-type table and the losses' table name these.

Names: x[n,i] is the data, Wl[i,j] and bl[j] the parameters of layers.l, outl[n,j] its output,
loss[n] (or loss[n,k]) a row's loss. N = rows, D = features, H = outputs of a layer.
"""

import math


class Value:
    """A scalar with ``data``, ``grad`` and the chain-rule step back to the values it came from."""

    def __init__(self, data: float, name: str, parents=(), tape=None):
        self.data, self.grad, self.name = float(data), 0.0, name
        self.parents = parents  # (input Value, local derivative, how the local derivative is written)
        if tape is not None:
            tape.append(self)

    def backward(self, log) -> None:
        for v, local, text in self.parents:
            v.grad += local * self.grad
            log(f"{v.name}.grad += {text} * {self.name}.grad  = {local:.4g} * {self.grad:.4g} = "
                f"{local * self.grad:.4g}; running total {v.grad:.4g}")

    def __repr__(self) -> str:
        return f"Value({self.name}={self.data:.4g}, grad={self.grad:.4g})"


def linear(rows, layer, index, tape):
    """out[n,j] = b[j] + sum_i x[n,i] * W[i,j]; the data gets no gradient."""
    W = [[Value(w, f"W{index}[{i},{j}]") for j, w in enumerate(r)] for i, r in enumerate(layer.params["W"])]
    b = [Value(v, f"b{index}[{j}]") for j, v in enumerate(layer.params["b"])] if "b" in layer.params else None
    out = []
    for n, row in enumerate(rows):
        out.append([])
        for j in range(len(W[0])):
            parents = [(W[i][j], x.data, x.name) for i, x in enumerate(row)]
            parents += [(x, W[i][j].data, W[i][j].name) for i, x in enumerate(row) if x.parents]
            parents += [(b[j], 1.0, "1")] if b else []
            data = sum(x.data * W[i][j].data for i, x in enumerate(row)) + (b[j].data if b else 0.0)
            out[n].append(Value(data, f"out{index}[{n},{j}]", parents, tape))
    return out, {"W": W, **({"b": b} if b else {})}


def elementwise(f, derivative):
    """The scalar version of a layer applying f(x, layer) to each value; derivative(x, y, layer,
    name of y) gives the local derivative and how it is written."""
    def layer_version(rows, layer, index, tape):
        out = []
        for n, row in enumerate(rows):
            out.append([])
            for j, x in enumerate(row):
                y, name = f(x.data, layer), f"out{index}[{n},{j}]"
                local, text = derivative(x, y, layer, name)
                out[n].append(Value(y, name, [(x, local, text)], tape))
        return out, {}
    return layer_version


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


identity = elementwise(lambda x, _: x, lambda x, y, _, out: (1.0, "1"))
relu = elementwise(lambda x, _: max(x, 0.0), lambda x, y, _, out: (float(x.data > 0), f"({x.name} > 0)"))
leaky_relu = elementwise(lambda x, layer: x if x > 0 else layer.slope * x, lambda x, y, layer, out: (
    1.0 if x.data > 0 else layer.slope, f"(1 if {x.name} > 0 else {layer.slope:g})"))
tanh = elementwise(lambda x, _: math.tanh(x), lambda x, y, _, out: (1 - y * y, f"(1 - {out}^2)"))
logistic = elementwise(lambda x, _: sigmoid(x), lambda x, y, _, out: (y * (1 - y), f"{out} (1 - {out})"))


def softmax_cross_entropy(rows, targets, tape):
    """loss[n] = log(sum_k exp(z[n,k])) - z[n,y]: d/dz[n,k] = softmax(z[n])[k] - onehot(y)[k]."""
    losses = []
    for n, (row, y) in enumerate(zip(rows, targets)):
        m = max(z.data for z in row)
        e = [math.exp(z.data - m) for z in row]
        parents = [(z, e[k] / sum(e) - (k == y), f"(p[{n},{k}] - onehot[{n},{k}])") for k, z in enumerate(row)]
        losses.append(Value(math.log(sum(e)) + m - row[int(y)].data, f"loss[{n}]", parents, tape))
    return losses


def _per_entry(rows, targets, tape, f, derivative, text):
    """A loss per output entry, f(z, y), with d/dz = derivative(z, y)."""
    return [Value(f(z.data, y), f"loss[{n},{k}]", [(z, derivative(z.data, y), text.format(n=n, k=k))], tape)
            for n, (row, ys) in enumerate(zip(rows, targets)) for k, (z, y) in enumerate(zip(row, ys))]


def bce_with_logits(rows, targets, tape):
    """loss[n,k] = max(z, 0) - z y + log(1 + exp(-|z|)): d/dz = sigmoid(z) - y."""
    return _per_entry(rows, targets, tape, lambda z, y: max(z, 0) - z * y + math.log1p(math.exp(-abs(z))),
                      lambda z, y: sigmoid(z) - y, "(sigmoid(z[{n},{k}]) - y[{n},{k}])")


def mse(rows, targets, tape):
    """loss[n,k] = (z - y)^2: d/dz = 2 (z - y)."""
    return _per_entry(rows, targets, tape, lambda z, y: (z - y) ** 2, lambda z, y: 2 * (z - y),
                      "2 (z[{n},{k}] - y[{n},{k}])")
