"""Where training computes: the ``device`` config key and the estimators' ``device=``.

The core computes in the namespace of its arrays (core/namespace.py); a device says which
arrays those are. A run's data and model move to the device once, when training starts, and
come back as numpy arrays when it ends; checkpoints, model files, metrics and figures are numpy
on disk, so a run started on one device resumes on another.

| device           | arrays                 | needs                                               |
|------------------|------------------------|-----------------------------------------------------|
| cpu              | numpy                  | nothing                                             |
| cuda             | CuPy, on an NVIDIA GPU | CuPy and a CUDA GPU: ``pip install 'mlp-manual[gpu]'`` |
| array-api-strict | array-api-strict       | ``pip install array-api-strict``                    |

``array-api-strict`` computes on the CPU with numpy's numbers, through a namespace that refuses
anything outside the array API standard: a layer that trains there trains on a GPU too.
"""

import functools
import importlib
from dataclasses import dataclass

import numpy as np

from .errors import DeviceError


@dataclass(frozen=True)
class Device:
    """One place arrays can live: its ``name`` (the config's value), the ``module`` that makes
    its arrays, and the ``install`` line that brings that module."""

    name: str
    module: str | None  # None: numpy, nothing to import
    install: str

    @property
    def on_host(self) -> bool:
        """Whether the arrays are numpy's own: every move is then nothing."""
        return self.module is None

    def namespace(self):
        """The array namespace of this device's arrays; DeviceError naming what is missing."""
        return np if self.on_host else _namespace(self)

    def put(self, a):
        """A numpy array as an array of this device (the same numbers, a copy); None stays None."""
        if self.on_host or a is None:
            return a
        return self.namespace().asarray(np.asarray(a, order="C"), copy=True)


@functools.cache
def _namespace(device: Device):
    """``device.namespace()`` for a device that is not the host, found once a process."""
    try:
        module = importlib.import_module(device.module)
    except ImportError as e:  # a missing package, or one whose own imports fail (no CUDA runtime)
        raise DeviceError(f"device {device.name} needs {device.module}, which could not be imported ({e}): "
                          f"{device.install}") from None
    _check_reachable(device, module)
    import array_api_compat
    return array_api_compat.array_namespace(module.asarray(np.zeros(1)))


def _check_reachable(device: Device, module) -> None:
    """DeviceError when CuPy imports but finds no GPU it can use."""
    if device.module != "cupy":
        return
    try:
        count = module.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA's own errors: no driver, no device, a driver too old
        raise DeviceError(f"device cuda: CuPy found no usable CUDA GPU ({type(e).__name__}: {e}); "
                          "use device: cpu, or run where nvidia-smi lists a GPU") from None
    if count == 0:
        raise DeviceError("device cuda: CuPy found no CUDA GPU; use device: cpu, or run where nvidia-smi lists a GPU")


DEVICES = {d.name: d for d in (
    Device("cpu", None, ""),
    Device("cuda", "cupy", "pip install 'mlp-manual[gpu]' (CuPy for CUDA 12; see docs/guides/training.md, GPU)"),
    Device("array-api-strict", "array_api_strict", "pip install array-api-strict"),
)}


HOST = DEVICES["cpu"]  # numpy's arrays, where everything comes back to


def device(name: str) -> Device:
    """The device called ``name``; DeviceError naming the choices otherwise."""
    if name not in DEVICES:
        raise DeviceError(f"unknown device {name!r}; choose one of: {', '.join(DEVICES)}")
    return DEVICES[name]


def to_numpy(a):
    """Any array (numpy, CuPy, array-api-strict) as a numpy array; a numpy array as itself, a
    number (a numpy scalar, a Python float) as a 0-d array."""
    if a is None or isinstance(a, np.ndarray):
        return a
    if isinstance(a, (np.generic, int, float)):
        return np.asarray(a)
    if hasattr(a, "get") and type(a).__module__.startswith("cupy"):
        return a.get()  # from the GPU's memory
    return np.from_dlpack(a)


def move(a, dev: Device):
    """Array ``a`` (of any device) as an array of ``dev``; None stays None."""
    return to_numpy(a) if dev.on_host else dev.put(to_numpy(a))


def is_device_array(value) -> bool:
    """Whether ``value`` is an array of a device, not numpy's (a CuPy array has no
    ``__array_namespace__`` method: array-api-compat knows it by its type)."""
    import array_api_compat
    return array_api_compat.is_array_api_obj(value) and not isinstance(value, (np.ndarray, np.generic))


def move_model(model, dev: Device) -> None:
    """Every parameter, gradient and buffer of ``model`` (any layer's, a block's inner ones
    too) as an array of ``dev``, in place of the old ones: ``put`` for a device, ``to_numpy``
    back to the host, where what the forward passes kept for their backward is dropped
    (``Model.drop_caches``: it holds the device's memory)."""
    for layer in model.layers:
        for d in (layer.params, layer.grads, layer.buffers):
            for k in list(d):
                d[k] = move(d[k], dev)
    if dev.on_host:
        model.drop_caches()


def move_optimizer_state(optimizer, dev: Device) -> None:
    """The per-parameter slots of ``optimizer.state`` (core/optimizers.py) on ``dev``."""
    for slot in optimizer.slots:
        found = optimizer.state[slot]
        for name in list(found):
            found[name] = move(found[name], dev)
