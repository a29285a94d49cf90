"""Probe stage, critical-band stimuli on the CPU: the pixels outside [0, 1], by a compiled loop.

The positions of the pixels outside [0, 1] in a float32 tensor, as a compiled loop (numba), for
speed only.

The out-of-range rule touches a few pixels per field (up to some 3% at the study's largest SD 0.16,
none at 0.02); finding them with whole-tensor operations (two comparisons, an ``or``, ``nonzero``,
then three-index gathers) passes over every value several times. This loop tests blocks of 64 values
with vector compares and lists the positions only in blocks that hold one. The comparisons are the
same as torch's (``x < 0`` or ``x > 1``: NaN and -0.0 are in range), and the positions come out in
increasing order, as ``nonzero`` gives them (tests/unit/test_out_of_range_cpu.py).
"""

from __future__ import annotations

import numpy as np
import torch

try:
    import numba
except ImportError:  # torch's comparisons are used instead
    numba = None  # type: ignore[assignment]

BLOCK = 64
_ZERO, _ONE = np.float32(0.0), np.float32(1.0)


def _scan_py(x, out):  # type: ignore[no-untyped-def]
    """Write the flat positions i with ``x[i] < 0 or x[i] > 1`` into ``out``, in increasing order.

    Returns how many."""
    n = x.shape[0]
    found = 0
    blocks = n // BLOCK
    for b in range(blocks + 1):
        b0 = b * BLOCK
        b1 = b0 + BLOCK if b < blocks else n
        hits = 0
        for i in range(b0, b1):
            hits += (x[i] < _ZERO) | (x[i] > _ONE)
        if hits:
            for i in range(b0, b1):
                if x[i] < _ZERO or x[i] > _ONE:
                    out[found] = i
                    found += 1
    return found


_scan = (
    numba.njit(nogil=True, cache=True, error_model="numpy")(_scan_py) if numba is not None else None
)


def indices(flat: torch.Tensor) -> torch.Tensor:
    """The positions (int64, increasing) of the values of the 1-D tensor ``flat`` outside [0, 1].

    The values below 0 or above 1: ``((flat < 0) | (flat > 1)).nonzero().flatten()``, computed by
    the compiled loop for a contiguous float32 CPU tensor when numba imports, by torch otherwise."""
    if flat.ndim != 1:
        raise ValueError(f"indices needs a 1-D tensor, got shape {tuple(flat.shape)}")
    if (
        _scan is None
        or flat.device.type != "cpu"
        or flat.dtype != torch.float32
        or not flat.is_contiguous()
    ):
        return ((flat < 0) | (flat > 1)).nonzero().flatten()
    out = np.empty(flat.shape[0], dtype=np.int64)
    found = _scan(flat.numpy(), out)
    return torch.from_numpy(out[:found].copy())
