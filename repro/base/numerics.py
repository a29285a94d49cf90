"""Base: what a float64 result computed in this process depends on beyond its inputs and code.

NumPy and OpenBLAS pick their kernels for the CPU they run on, and kernels round differently.
The suite does not pin them: every stored statistic is compared at the precision it has (a
critical-band fit at its measured conditioning, ``repro.scoring.fit_conditioning``; the rest at
1e-7; counts exactly), and what is printed is stable across kernels (docs/testing.md, "Kernels
and CPUs", with the kernel matrix that checks it). So a result cached on disk is keyed by the
libraries that compute it and the machine's architecture, not by the kernel family: a cached
replication computed under another kernel family differs from a fresh one in the seventh
digit at most, below every printed digit.
"""

from __future__ import annotations

import platform


def numerics() -> str:
    """NumPy's and SciPy's versions and the machine's architecture.

    Part of the key of every result cached on disk (``repro.base.result_cache``,
    ``repro.diagnostics.count_grids``)."""
    import numpy
    import scipy

    return f"numpy {numpy.__version__}; scipy {scipy.__version__}; {platform.machine()}"
