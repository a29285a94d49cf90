"""Base, the float64 kernels of NumPy and of its and SciPy's OpenBLAS, pinned so that the same
inputs give the same results on every x86-64 CPU with AVX2.

NumPy and OpenBLAS pick their kernels for the CPU they find (SSE3, AVX2, AVX-512 ones), and
kernels round differently. For most numbers that is the 16th digit. For the critical band's
least-squares fits of ill-conditioned threshold vectors it is not: curve_fit stops where the
rounding sends it along a near-flat valley. Measured on one CPU (AVX-512), forcing each kernel
family in turn, the bandwidth of the vector 4,4,2,4,4,4,4 (alexnet's, in Subramanian et al.'s
data) came out 62.9877069, 62.9877085, 62.9877816 or 62.9878246, its centre frequency 17421.39
to 17421.65, and the flat all-4 fit's centre anywhere in 3,682-4,953: claim snapshots
(relative tolerance 1e-7) and REPORT.md's digits then depended on the machine that ran them.

So ``python -m repro``, the ``repro`` console script and the test suite pin, before anything
imports NumPy (both libraries read the variables once, when they load):

- ``OPENBLAS_CORETYPE=Haswell``: OpenBLAS's AVX2 kernels, the ones it picks on an AVX2 CPU
  (Intel Haswell and later, AMD Zen); only where the CPU has AVX2 and FMA (``/proc/cpuinfo``),
  since a forced kernel the CPU cannot run would stop the process;
- ``NPY_DISABLE_CPU_FEATURES``: NumPy's AVX-512 code paths off (under both NumPy 2's and 1's
  names), so that an AVX-512 CPU runs the AVX2 paths an AVX2 CPU runs.

An AVX2 CPU computes exactly what it computed before (the committed snapshots and REPORT.md were
written on one); an AVX-512 CPU now computes the same. A value already in the environment is
kept. The cost is small: the analyses' arrays are small, and the torch work uses neither
(torch has its own kernels). Other architectures (aarch64) and CPUs without AVX2 are left as
they are, and may differ in those digits.
"""

from __future__ import annotations

import functools
import os
import platform
from collections.abc import MutableMapping
from pathlib import Path

OPENBLAS = "OPENBLAS_CORETYPE"
OPENBLAS_CORE = "Haswell"
NUMPY = "NPY_DISABLE_CPU_FEATURES"
#: NumPy 2's AVX-512 dispatch groups, then NumPy 1's feature names (unknown names are ignored)
NUMPY_AVX512 = (
    "X86_V4 AVX512_ICL AVX512_SPR "
    "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL"
)
X86_64 = ("x86_64", "amd64")
NEEDED_FLAGS = ("avx2", "fma")


@functools.lru_cache(maxsize=4)
def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags (Linux ``/proc/cpuinfo``; empty where it cannot be read), read
    once per process and file."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def pin_kernels(
    environ: MutableMapping[str, str] | None = None,
    machine: str | None = None,
    flags: set[str] | frozenset[str] | None = None,
) -> dict[str, str]:
    """Set ``OPENBLAS_CORETYPE`` and ``NPY_DISABLE_CPU_FEATURES`` in ``environ`` (default
    ``os.environ``) on an x86-64 CPU with AVX2 and FMA, each unless it is set already; returns
    the two variables in force ({} where nothing is pinned). Effective only before NumPy is
    imported."""
    env = os.environ if environ is None else environ
    if (machine or platform.machine()).lower() not in X86_64:
        return {}
    if not set(NEEDED_FLAGS) <= (cpu_flags() if flags is None else flags):
        return {}
    return {
        OPENBLAS: env.setdefault(OPENBLAS, OPENBLAS_CORE),
        NUMPY: env.setdefault(NUMPY, NUMPY_AVX512),
    }


def numerics() -> str:
    """What float64 results computed in this process depend on beyond their inputs and code:
    NumPy's and SciPy's versions, the machine, the kernel variables in force and the CPU's
    feature flags (their sha256). Part of the key of every result cached on disk
    (``repro.claims.result_cache``, ``repro.claims.count_grids``): a result computed under other
    kernels is another result, and is never read back in their place."""
    import hashlib

    import numpy
    import scipy

    flags = hashlib.sha256(" ".join(sorted(cpu_flags())).encode()).hexdigest()[:16]
    return (
        f"numpy {numpy.__version__}; scipy {scipy.__version__}; {platform.machine()}; "
        f"{OPENBLAS}={os.environ.get(OPENBLAS, '')}; {NUMPY}={os.environ.get(NUMPY, '')}; "
        f"cpu flags {flags}"
    )
