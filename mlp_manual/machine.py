"""What this machine allows a run: the memory it may ask for.

Read by the config's memory estimate (``config/memory.py``), by loaders that check a file's
size before reading it (``datasets/text.py``) and by the one-hot encoding of categorical columns
(``datasets/categories.py``), each before it allocates.
"""

import os

from .readable import readable_bytes

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


def beyond_limit(need: int) -> str | None:
    """None when a run may ask for ``need`` bytes; else the words that end a refusal: ``more
    than the 12.3 GB a run may use (half this machine's memory)``."""
    limit, why = memory_limit()
    if need <= limit:
        return None
    return f"more than the {readable_bytes(limit).removeprefix('about ')} a run may use ({why})"
