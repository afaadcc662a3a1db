"""What the gradient checker accepts: a layer, a loss or a model following the contract, and
its calls into a user's code, whose exceptions become one-line GradcheckErrors.

N = batch size, K = model outputs.
"""

import numpy as np

from ..errors import GradcheckError, MLPManualError, what_was_raised
from ..layers.registry import row_of
from .compare import kind_of

LAYER_MEMBERS = ("forward", "backward", "params", "grads")



def require_layer(obj, what: str | None = None) -> None:
    """Raise GradcheckError unless ``obj`` follows the layer contract closely enough to be checked;
    ``what`` names it in the message."""
    problem = _layer_problem(obj)
    if problem:
        raise GradcheckError(f"{what or describe(obj)} is not a layer: {problem}")



def _layer_problem(obj) -> str | None:
    missing = [m for m in LAYER_MEMBERS if not hasattr(obj, m)]
    if missing:
        return f"it has no {', '.join(missing)} (a layer needs {', '.join(LAYER_MEMBERS)})"
    for m in ("forward", "backward"):
        if not callable(getattr(obj, m)):
            return f"its {m} is not a method"
    for d in ("params", "grads"):
        if not hasattr(getattr(obj, d), "items"):
            return f"its {d} is {kind_of(getattr(obj, d))}, not a dict of arrays"
    for k, v in obj.params.items():
        if not isinstance(v, np.ndarray) or v.dtype.kind != "f":
            return f"params[{k!r}] is {kind_of(v)}, not a float numpy array"
    return None



def require_model(model) -> list:
    """The model's layers, each checked against the layer contract; GradcheckError if unfit."""
    for m in ("forward", "backward"):
        if not callable(getattr(model, m, None)):
            raise GradcheckError(f"{describe(model)} is not a model: it has no {m} method")
    layers = getattr(model, "layers", None)
    if not isinstance(layers, (list, tuple)):
        raise GradcheckError(f"{describe(model)} is not a model: it needs a list 'layers'")
    for i, layer in enumerate(layers):
        require_layer(layer, f"layers.{i} ({describe(layer)})")
    return list(layers)



def describe(obj) -> str:
    """The object's repr when it has a useful one, else its type name."""
    text = repr(obj)
    return type(obj).__name__ if text.startswith("<") else text



def call_user(obj, method, *args):
    """Call a method of a user's object; its exceptions become one-line GradcheckErrors."""
    try:
        return getattr(obj, method)(*args)
    except MLPManualError:
        raise
    except Exception as e:
        raise GradcheckError(f"{describe(obj)}.{method} raised {what_was_raised(e)}") from e





def call_loss(fn, logits, targets):
    try:
        result = fn(logits, targets)
    except MLPManualError:
        raise
    except Exception as e:
        raise GradcheckError(f"the loss raised {what_was_raised(e)}") from e
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], np.ndarray)):
        raise GradcheckError("a loss must return (loss, dlogits) with dlogits a numpy array")
    loss, dlogits = result
    if dlogits.shape != logits.shape:
        raise GradcheckError(f"the loss returned dlogits of shape {dlogits.shape} for logits of shape {logits.shape}")
    return float(loss), dlogits



def input_is_indices(obj) -> bool:
    """Whether a layer, or a model's first layer, takes integer indices (an embedding): its
    input has no gradient to check."""
    layers = getattr(obj, "layers", None)
    first = layers[0] if isinstance(layers, (list, tuple)) and layers else obj
    return row_of(first).takes_indices



def float64_input(x, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind not in "fiu" or x.ndim == 0:
        raise GradcheckError(f"{name} must be a numeric array with at least one dimension, got {kind_of(x)}")
    return np.array(x, dtype=np.float64, order="C")



def float64_targets(y) -> np.ndarray:
    y = np.asarray(y)
    return np.array(y, dtype=np.float64) if y.dtype.kind == "f" else y.copy()
