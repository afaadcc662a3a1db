"""Keeping freed memory in the process while training, so that a step's fresh arrays are cheap.

A training step makes arrays the size of a weight matrix and drops them: a layer's new
gradient (``dW = x.T @ dout``), an optimizer's temporaries, a gathered batch. glibc's
allocator serves a block above its mmap threshold (128 KiB at first) with fresh pages from the
kernel and returns the pages when the block is freed, and it gives back the top of its heap
once more than the trim threshold is free; either way the next step's array faults its pages
in again, and zeroing them costs more than the arithmetic. Measured on the benchmark network
(784-256-256-10, batch 128, float32, 2 cores; benchmarks/README.md, "Tricks kept and
removed"): a fresh dW of the three layers took 0.69 ms against 0.30 ms written into kept
arrays, a third of the step's matrix products (1.05 ms). With the thresholds below, fresh
arrays cost what kept ones did (0.32 ms against 0.34 ms), so the layers write
``self.grads["W"] = x.T @ dout`` as the math reads and own nothing between steps.

The thresholds are raised once per process, when the first trainer is made: blocks up to
MMAP_THRESHOLD come from the heap, and up to TRIM_THRESHOLD of freed heap stays with the
process for later. In a program that trains through the Python API (a scikit-learn estimator
in a notebook), that is up to 64 MiB more kept after training. Nothing is changed where the
user tunes the allocator (GLIBC_TUNABLES, MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ set:
those settings stand), nor elsewhere than glibc (macOS, musl, Windows), where training is
only slower.
"""

import os
import platform

try:
    import ctypes
except ImportError:  # a Python built without ctypes: nothing to set
    ctypes = None

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
MMAP_THRESHOLD = 32 << 20  # bytes: glibc's own ceiling when it adjusts the threshold itself
TRIM_THRESHOLD = 64 << 20  # bytes of freed heap kept for the next step
USER_SETTINGS = ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

_done = False


def keep_freed_memory() -> None:
    """Raise glibc's mmap and trim thresholds for this process (once), unless the user tunes
    the allocator or the C library is not glibc."""
    global _done
    if _done:
        return
    _done = True
    if ctypes is None or platform.libc_ver()[0] != "glibc" or any(k in os.environ for k in USER_SETTINGS):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already runs on
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
