"""Which library computes: the core's functions take their array functions from the namespace of
the arrays they are given, ``xp = namespace(x)``, so that the same lines run on numpy arrays, on
CuPy arrays on a GPU, and on array-api-strict arrays, which refuse anything outside the array
API standard (https://data-apis.org/array-api/). Method calls such as ``x.sum(0)`` are numpy's
alone; the standard spells them ``xp.sum(x, axis=0)``. The core uses the standard's 2024.12
version, which takes Python numbers beside arrays (``xp.maximum(x, 0.0)``).
"""

import array_api_compat
import numpy as np


class _Numpy:
    """numpy's namespace, its reductions called as array methods: ``np.sum(x, axis=0)`` passes
    through a Python wrapper that ``x.sum(axis=0)`` skips, 1.5 µs a call (10.5 against 9.0 µs
    for the max of a 128 x 10 batch), and a training step of the benchmark network makes about
    eight such calls: 12 µs of its 1.9 ms. Same functions, same numbers."""

    def __init__(self, base):
        self._base = base

    def __getattr__(self, name):
        """Any other name: numpy's, kept on the instance after its first use."""
        if name.startswith("__") or name == "_base":  # not set yet (a copy being made): not numpy's
            raise AttributeError(name)
        value = getattr(self._base, name)
        setattr(self, name, value)
        return value

    @staticmethod
    def sum(x, /, *, axis=None, dtype=None, keepdims=False):
        return x.sum(axis=axis, dtype=dtype, keepdims=keepdims)

    @staticmethod
    def max(x, /, *, axis=None, keepdims=False):
        return x.max(axis=axis, keepdims=keepdims)

    @staticmethod
    def mean(x, /, *, axis=None, keepdims=False):
        return x.mean(axis=axis, keepdims=keepdims)

    @staticmethod
    def argmax(x, /, *, axis=None, keepdims=False):
        return x.argmax(axis=axis, keepdims=keepdims)


# numpy >= 2.1 follows the standard in its own namespace (np.astype, np.concat, np.vecdot), at
# numpy's own speed; an older numpy is reached through array-api-compat's wrapper.
NUMPY = _Numpy(np if np.lib.NumpyVersion(np.__version__) >= "2.1.0" else array_api_compat.array_namespace(np.zeros(0)))
_KNOWN = {np.ndarray: NUMPY}  # array type -> its namespace, looked up once per type


def namespace(x):
    """The array-API namespace of array ``x`` (numpy's, NUMPY, for a numpy array)."""
    xp = _KNOWN.get(type(x))
    if xp is None:
        xp = _KNOWN[type(x)] = array_api_compat.array_namespace(x)
    return xp


def like(x, values):
    """``values`` (a numpy array) as an array of ``x``'s namespace, on ``x``'s device: how an
    array drawn from a ``np.random.Generator`` joins the computation."""
    if type(x) is np.ndarray:
        return values
    return namespace(x).asarray(values, device=array_api_compat.device(x))
