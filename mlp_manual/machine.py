"""What this machine allows a run: the memory it may ask for.

Read by the config's memory estimate (``config/memory.py``) and by loaders that check a file's
size before reading it (``datasets/text.py``).
"""

import os

FALLBACK_LIMIT = 4 << 30


def memory_limit() -> tuple[int, str]:
    """(the bytes a run may ask for, why): half the physical memory, at most half the
    address-space limit (RLIMIT_AS) when one is set; FALLBACK_LIMIT when neither is known."""
    try:
        limit, why = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2, "half this machine's memory"
    except (AttributeError, ValueError, OSError):
        limit, why = FALLBACK_LIMIT, "the limit where the memory size is unknown"
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and 0 < soft // 2 < limit:
            limit, why = soft // 2, "half the address-space limit, ulimit -v"
    except (ImportError, ValueError, OSError):
        pass
    return limit, why
