"""The checker's working copy: a float64 deep copy of a layer or model whose random generators
and buffers are put back before every forward, so each forward computes the same function.
"""

import copy
from collections.abc import Callable

import numpy as np

from ..errors import GradcheckError
from .compare import kind_of
from .contract import call_user, describe, float64_input, input_is_indices


class Target:
    """A float64 copy of a layer or model, with its random generators and buffers pinned."""

    def __init__(self, work, layers, tensors):
        self.work, self.tensors = work, tensors  # tensors: (name, owning layer, params key)
        self.restore = pin_state(layers)
        self.indices = input_is_indices(work)  # the input is integer indices: backward gives no dx

    @classmethod
    def of(cls, obj, layers, mode, tensors_of):
        work = copy_in(obj, layers, np.float64, mode)
        is_layer = any(layer is obj for layer in layers)
        return cls(work, [work] if is_layer else list(work.layers), tensors_of(work))

    def forward(self, x):
        self.restore()
        out = call_user(self.work, "forward", x)
        if not isinstance(out, np.ndarray) or out.dtype.kind != "f":
            raise GradcheckError(f"{describe(self.work)}.forward must return a float numpy array, got {kind_of(out)}")
        if out.dtype != np.float64:
            raise GradcheckError(f"{describe(self.work)}.forward returned {out.dtype} for a float64 input; the "
                                 "checker needs float64 throughout (does it cast to a fixed dtype?)")
        return out

    def backward(self, dout, x):
        """(dx, grads) after a backward of ``dout``; dx is None for an input of indices."""
        dx = call_user(self.work, "backward", dout)
        if self.indices:
            dx = None
        elif not isinstance(dx, np.ndarray) or dx.shape != x.shape:
            got = f"shape {dx.shape}" if isinstance(dx, np.ndarray) else kind_of(dx)
            raise GradcheckError(f"{describe(self.work)}.backward must return dx shaped like its input "
                                 f"{x.shape}, got {got}")
        grads = {name: owner.grads.get(key) for name, owner, key in self.tensors}
        return None if dx is None else dx.copy(), {n: v.copy() if isinstance(v, np.ndarray) else v
                                                   for n, v in grads.items()}



def copy_in(obj, layers, dtype, mode: str | None = None):
    """A deep copy of a layer or model (``layers`` are its layers) whose float parameters,
    gradients and buffers are ``dtype``, in ``mode`` ("train", "eval" or None to keep it)."""
    memo = {}  # deepcopy puts these copies wherever the originals are referenced
    for layer in layers:
        for d in (layer.params, layer.grads, getattr(layer, "buffers", {})):
            for v in d.values():
                if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                    memo[id(v)] = np.array(v, dtype=dtype, order="C")
    try:
        work = copy.deepcopy(obj, memo)
    except Exception as e:
        raise GradcheckError(f"cannot copy {describe(obj)} to check it: {type(e).__name__}: {e}") from e
    if mode is not None:
        if not callable(getattr(work, mode, None)):
            raise GradcheckError(f"{describe(obj)} has no {mode}() method to switch to {mode} mode")
        call_user(work, mode)
    return work



def pin_state(layers) -> Callable[[], None]:
    """Remember the layers' random generators and buffers as they are now; the function returned
    puts them back, so that every forward after it draws the same dropout mask and reads the same
    running statistics. A block's buffers include its inner layers'; their generators are found
    by walking into it."""
    generators = [(v, v.bit_generator.state) for layer in _within(layers)
                  for v in getattr(layer, "__dict__", {}).values() if isinstance(v, np.random.Generator)]
    buffers = [(layer.buffers, k, v, v.copy()) for layer in layers
               for k, v in getattr(layer, "buffers", {}).items() if isinstance(v, np.ndarray)]

    def restore():
        for gen, state in generators:
            gen.bit_generator.state = state
        for d, k, arr, saved in buffers:
            arr[...] = saved
            d[k] = arr
    return restore


def modes_to_check(obj, x) -> list[str | None]:
    """["train", "eval"] when a layer or model computes differently in the two modes, else [None]."""
    if not (callable(getattr(obj, "train", None)) and callable(getattr(obj, "eval", None))):
        return [None]
    layers = getattr(obj, "layers", [obj])
    outs = [Target.of(obj, layers, mode, lambda work: []).forward(float64_input(x, "x"))
            for mode in ("train", "eval")]
    return [None] if np.array_equal(*outs) else ["train", "eval"]


def _within(layers) -> list:
    """The layers and every layer nested in them (a residual's inner layers), depth first."""
    return [v for layer in layers for v in [layer, *_within(getattr(layer, "sublayers", list)())]]
