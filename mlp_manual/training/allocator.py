"""Keeping freed memory in the process while training, so that a step's fresh arrays are cheap.

A training step makes arrays the size of a weight matrix and drops them: a layer's new
gradient (``dW = x.T @ dout``), an optimizer's temporaries, a gathered batch. glibc's
allocator serves a block above its mmap threshold (128 KiB at first) with fresh pages from the
kernel and returns the pages when the block is freed, and it gives back the top of its heap
once more than the trim threshold is free; either way the next step's array faults its pages
in again, and zeroing them costs more than the arithmetic. Measured on the benchmark network
(784-256-256-10, batch 128, float32, 2 cores, benchmarks/README.md "Tricks"): a fresh dW of the
three layers took 0.69 ms against 0.30 ms written into kept arrays, a third of the step's
matrix products (1.05 ms). With the thresholds below, fresh arrays cost the same as kept ones
(0.32 ms against 0.34 ms), so the layers can write ``self.grads["W"] = x.T @ dout`` as the math
reads and own nothing between steps.

The thresholds are raised once per process (``keep_freed_memory``), by the trainer, before its
first step: blocks up to MMAP_THRESHOLD come from the heap, and up to TRIM_THRESHOLD of freed
heap stays with the process for the next step. Elsewhere than glibc (macOS, musl) this does
nothing: their allocators keep freed blocks of these sizes anyway, or training is only slower.
"""

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
MMAP_THRESHOLD = 32 << 20  # bytes: glibc's own ceiling when it adjusts the threshold itself
TRIM_THRESHOLD = 64 << 20  # bytes of freed heap kept for the next step

_done = False


def keep_freed_memory() -> None:
    """Raise glibc's mmap and trim thresholds for this process (once); elsewhere, nothing."""
    global _done
    if _done:
        return
    _done = True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to set
        return
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
