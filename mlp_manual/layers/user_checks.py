"""The layer contract, checked on a user's layer (``--import``) where its code may break it: a
constructor that skips ``super().__init__()``, a width rule its ``output_width`` contradicts,
a forward or backward that returns the wrong kind, shape or dtype, or raises. Each failure is
one line that names the layer's type (``my_layers:Scale``) and says what to change.

Built-in layers are checked by the test suite instead, so a model of built-in layers costs
nothing here.

N = rows of the probe batch, D = input features, H = output features.
"""

import copy
from collections.abc import Callable

import numpy as np

from ..errors import LayerError, MLPManualError, UserCodeError, what_was_raised

BASE_ATTRIBUTES = ("params", "grads", "buffers", "training")  # what Layer.__init__ sets
PROBE_ROWS = 8  # rows of the batch a model's user layers are tried on


def check_constructed(layer, implied_width: int | None, width: int | None) -> None:
    """LayerError unless the freshly built ``layer`` has what ``Layer.__init__`` sets, and, when
    its width rule implies an output width (``out_features``), its ``output_width(width)`` gives it."""
    name = type(layer).__name__
    missing = [a for a in BASE_ATTRIBUTES if not hasattr(layer, a)]
    if missing:
        raise LayerError(f"{name}.__init__ does not call super().__init__(), so the layer has no "
                         f"{', '.join(missing)}; call it first in __init__")
    if implied_width is None or width is None:
        return
    if not hasattr(layer, "output_width"):
        raise LayerError(f"{name} takes in_features and out_features but defines no output_width(width), so the "
                         f"layers after it would get {width} features instead of {implied_width}; define "
                         "output_width(self, width) to return self.out_features (or what your forward gives)")
    try:
        given = layer.output_width(width)
    except Exception as e:
        raise LayerError(f"{name}.output_width({width}) raised {what_was_raised(e)}") from e
    if given != implied_width:
        raise LayerError(f"{name}.output_width({width}) returns {given!r}, but the layer was built with "
                         f"out_features={implied_width}; it must return the width its forward gives")


def probe(model, x: np.ndarray, users_type: Callable[[object], str | None], rows: int = 1) -> None:
    """Try the layers of ``model`` for which ``users_type(layer)`` gives a type name (a user's;
    None for a built-in), inside the model, on the first PROBE_ROWS rows of ``x`` (N, D): forward
    and backward in training mode (when ``x`` has the ``rows`` its layers need), forward in
    evaluation mode. A copy of the model runs, so the
    model, its random generators and its statistics are left as they were. UserCodeError, naming
    the layer and its type, when one raises or returns something other than the contract says."""
    if not any(users_type(layer) for _, layer in model.named_layers()):
        return
    try:
        copied = copy.deepcopy(model)
    except Exception:  # a layer that cannot be copied is only checked when it runs for real
        return
    for name, layer in copied.named_layers():
        if type_name := users_type(layer):
            _watch(layer, f"{name} ({type_name})")
    x = x[:PROBE_ROWS]
    if len(x) >= rows:
        copied.train()
        out = copied.forward(x)
        copied.backward(np.random.default_rng(0).normal(size=out.shape).astype(out.dtype))
    copied.eval().forward(x)


def _watch(layer, what: str) -> None:
    """Replace the copy's ``forward`` and ``backward`` with ones that check what it returns;
    ``what`` names the layer in messages (``layers.1 (my_layers:Scale)``)."""
    forward, backward, seen = layer.forward, layer.backward, {}

    def checked_forward(x):
        out = _call(forward, x, what, "forward")
        try:
            own = getattr(layer, "output_width", None)  # without one, a layer keeps the width
            width = own(x.shape[1]) if own is not None else x.shape[1]
        except Exception as e:
            raise UserCodeError(f"{what}: output_width({x.shape[1]}) raised {what_was_raised(e)}") from e
        _check_array(out, (len(x), width), x.dtype, what, "forward returned", f"its input of shape {x.shape}",
                     f"output_width({x.shape[1]}) says {width} features")
        seen["x"] = x
        return out

    def checked_backward(dout):
        dx = _call(backward, dout, what, "backward")
        x = seen["x"]
        _check_array(dx, x.shape, x.dtype, what, "backward returned", f"its input of shape {x.shape}",
                     "dx has the input's shape")
        if set(layer.grads) != set(layer.params):
            raise UserCodeError(f"{what}: after backward its grads have the keys {sorted(layer.grads)}, its params "
                                f"{sorted(layer.params)}; every parameter needs its gradient, under the same key")
        for k, g in layer.grads.items():
            _check_array(g, layer.params[k].shape, layer.params[k].dtype, what, f"backward set grads[{k!r}] to",
                         f"params[{k!r}] of shape {layer.params[k].shape}", "a gradient has its parameter's shape")
        return dx

    layer.forward, layer.backward = checked_forward, checked_backward


def _call(method, array, what: str, step: str):
    try:
        return method(array)
    except MLPManualError:  # the layer used the contract's own errors (self.saved): already one line
        raise
    except Exception as e:
        raise UserCodeError(f"{what}: {step} raised {what_was_raised(e)}") from e


def _check_array(value, shape: tuple, dtype, what: str, subject: str, given: str, rule: str) -> None:
    """UserCodeError unless ``value`` is a numpy array of ``shape`` and ``dtype``; the message says
    ``<what>: <subject> <what it got>`` (``layers.1 (my_layers:Scale): forward returned ...``)."""
    if not isinstance(value, np.ndarray):
        raise UserCodeError(f"{what}: {subject} {type(value).__name__}, not a numpy array")
    if value.shape != tuple(shape):
        raise UserCodeError(f"{what}: {subject} shape {value.shape} for {given}, expected {tuple(shape)} ({rule})")
    if value.dtype != dtype:
        raise UserCodeError(f"{what}: {subject} {value.dtype}, not {np.dtype(dtype).name} as {given}; a layer "
                            "computes in the run's dtype (make every array in the dtype its constructor is given, "
                            "or its input's)")

