"""The C allocator told to keep freed memory: every ``python -m repro`` command, before its work.

glibc hands a freed block of 128 KiB or more back to the system and maps a fresh one for the next
request, and the first write to each fresh page is a page fault: NumPy's temporaries (bootstrap
and permutation arrays of megabytes) and torch's activations pay it again on every call. Raising
the mmap threshold (to glibc's cap, 32 MiB on 64-bit) and the trim threshold (1 GiB) keeps such
blocks in the heap for reuse: the same as setting ``MALLOC_MMAP_THRESHOLD_=33554432
MALLOC_TRIM_THRESHOLD_=1073741824`` before the process starts. It changes where memory comes from,
never a value computed in it.
"""

from __future__ import annotations

import ctypes

#: glibc ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: bytes: allocations below this come from the heap, and freed heap memory above the trim
#: threshold is kept (glibc caps the mmap threshold at 32 MiB on 64-bit: HEAP_MAX / 2)
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 1024 * 1024 * 1024


def keep_freed_memory() -> bool:
    """Make glibc keep freed large blocks for reuse (see the module docstring).

    Returns whether it could (False on a C library without ``mallopt``: macOS, musl). Call once,
    before the first big array."""
    try:  # the process's own symbols, libc's among them (find_library would run ldconfig -p)
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
            libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
        )
    except (OSError, AttributeError):
        return False
