"""Probe stage, random fields on the CPU: the Philox4x32-10 + Box-Muller fields of
``repro.probes.philox`` as compiled loops (numba), for speed only.

torch runs the reference as some 700 whole-tensor operations per block of 4 values; on a CPU
each of them streams its operands through memory: about 100-400 ns per normal on this machine,
10 times NumPy's per-image PCG64 generators. These kernels compute the same integer operations
and the same float32 operations in the same order (``+ - * /`` and conversions; numba does not
contract a multiply and an add into one fused operation without fastmath), so their fields are
bitwise those of ``philox.normal_fields_torch`` (tests/unit/test_philox.py compares the scalar
functions on every branch and whole fields). Per field, three simple loops (the Philox words,
the radii, the angles and products), each of which the compiler vectorizes (one loop doing all
of it is not vectorized and runs 5 times slower). Measured here (1 thread, min of 8, other
engineers' load on the machine, two sessions): 9.3 and 23 ns per normal, against 31.6 and 28-36
ns for NumPy's PCG64 and 55-74 ns for the legacy ``RandomState.randn`` the study used. The fields are split over
``threads`` worker threads (the kernels release the GIL); every value is computed on its own,
so the split changes nothing.

numba compiles the kernels on first use (a few seconds; cached on disk next to this file when
the folder is writable).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from . import philox_constants as px

try:
    import numba
except ImportError:  # the torch reference is used instead (slow on a CPU)
    numba = None  # type: ignore[assignment]

M0, M1, W0, W1 = px.PHILOX_M0, px.PHILOX_M1, px.PHILOX_W0, px.PHILOX_W1
N0, N1 = (1 << 32) - M0, (1 << 32) - M1
MASK = px.MASK32
SQRT2_FIXED = px.SQRT2_FIXED
F32 = np.float32
LN2, UNIT, START = F32(px.LN2), F32(px.ANGLE_UNIT), F32(px.SQRT_START)
A11, A9, A7, A5, A3 = (F32(c) for c in px.ATANH)
S11, S9, S7, S5, S3 = (F32(c) for c in px.SIN)
C12, C10, C8, C6, C4, C2 = (F32(c) for c in px.COS)
ZERO, HALF, ONE, TWO = F32(0.0), F32(0.5), F32(1.0), F32(2.0)
U16, U8, U4, U2, U1 = (F32(4.0**e) for e in px.SQRT_UP)
V16, V8, V4, V2, V1 = (F32(2.0**-e) for e in px.SQRT_UP)
D4, D2, D1 = (F32(4.0**-e) for e in px.SQRT_DOWN)
E4, E2, E1 = (F32(2.0**e) for e in px.SQRT_DOWN)
assert px.SQRT_UP == (16, 8, 4, 2, 1) and px.SQRT_DOWN == (4, 2, 1) and px.NEWTON_STEPS == 3  # unrolled below
assert px.ROUNDS == 10


def available() -> bool:
    """Whether numba imports (the kernel is then compiled on first use)."""
    return numba is not None


def _njit(**options: Any):  # type: ignore[no-untyped-def]
    """numba.njit(**options) where numba imports; else the plain Python function (never called
    for fields then: ``philox.normal_fields`` falls back to torch)."""

    def wrap(fn):  # type: ignore[no-untyped-def]
        return numba.njit(**options)(fn) if numba is not None else fn

    return wrap


@_njit(inline="always", error_model="numpy")
def _neg2log(x):  # type: ignore[no-untyped-def]
    t = x + 1
    n = 0
    n += 32 if (t >> (n + 32)) != 0 else 0
    n += 16 if (t >> (n + 16)) != 0 else 0
    n += 8 if (t >> (n + 8)) != 0 else 0
    n += 4 if (t >> (n + 4)) != 0 else 0
    n += 2 if (t >> (n + 2)) != 0 else 0
    n += 1 if (t >> (n + 1)) != 0 else 0
    big = t << (32 - n)
    high = big > SQRT2_FIXED
    d = (1 << 33) if high else (1 << 32)
    n += 1 if high else 0
    s = F32(float(big - d)) / F32(float(big + d))
    s2 = s * s
    p = s2 * A11
    p = (p + A9) * s2
    p = (p + A7) * s2
    p = (p + A5) * s2
    p = (p + A3) * s2
    p = p + ONE
    ln_m = (s * TWO) * p
    a = F32(float(32 - n)) * LN2 - ln_m
    return a + a


@_njit(inline="always", error_model="numpy")
def _sqrt(w):  # type: ignore[no-untyped-def]
    y = w
    sc = ONE
    c = y * U16 < TWO
    y, sc = (y * U16, sc * V16) if c else (y, sc)
    c = y * U8 < TWO
    y, sc = (y * U8, sc * V8) if c else (y, sc)
    c = y * U4 < TWO
    y, sc = (y * U4, sc * V4) if c else (y, sc)
    c = y * U2 < TWO
    y, sc = (y * U2, sc * V2) if c else (y, sc)
    c = y * U1 < TWO
    y, sc = (y * U1, sc * V1) if c else (y, sc)
    c = y * D4 >= HALF
    y, sc = (y * D4, sc * E4) if c else (y, sc)
    c = y * D2 >= HALF
    y, sc = (y * D2, sc * E2) if c else (y, sc)
    c = y * D1 >= HALF
    y, sc = (y * D1, sc * E1) if c else (y, sc)
    r = (y + ONE) * START
    r = (r + y / r) * HALF
    r = (r + y / r) * HALF
    r = (r + y / r) * HALF
    return ZERO if w == ZERO else r * sc


@_njit(inline="always", error_model="numpy")
def _cos_sin(x):  # type: ignore[no-untyped-def]
    quadrant = x >> 30
    f = x & ((1 << 30) - 1)
    swap = f > (1 << 29)
    phi = F32(float((1 << 30) - f if swap else f)) * UNIT
    p2 = phi * phi
    s = p2 * S11
    s = (s + S9) * p2
    s = (s + S7) * p2
    s = (s + S5) * p2
    s = (s + S3) * p2
    s = s * phi + phi
    c = p2 * C12
    c = (c + C10) * p2
    c = (c + C8) * p2
    c = (c + C6) * p2
    c = (c + C4) * p2
    c = (c + C2) * p2
    c = c + ONE
    sn = c if swap else s
    cs = s if swap else c
    cos = cs if quadrant == 0 else (-sn if quadrant == 1 else (-cs if quadrant == 2 else sn))
    sin = sn if quadrant == 0 else (cs if quadrant == 1 else (-sn if quadrant == 2 else -cs))
    return cos, sin


@_njit(nogil=True, cache=True, error_model="numpy")
def _words(words, k0, k1, stream, id0, id1):  # type: ignore[no-untyped-def]
    """Pass 1: the Philox output words (4, B) of blocks 0 .. B - 1 of one field."""
    for j in range(words.shape[1]):
        c0, c1, c2, c3 = j, stream, id0, id1
        key0, key1 = k0, k1
        for r in range(10):
            if r:
                key0 = (key0 + W0) & MASK
                key1 = (key1 + W1) & MASK
            q0 = c0 * N0
            q1 = c2 * N1
            hi0 = c0 - ((q0 + MASK) >> 32)
            hi1 = c2 - ((q1 + MASK) >> 32)
            c0, c1, c2, c3 = hi1 ^ c1 ^ key0, (-q1) & MASK, hi0 ^ c3 ^ key1, (-q0) & MASK
        words[0, j] = c0
        words[1, j] = c1
        words[2, j] = c2
        words[3, j] = c3


@_njit(nogil=True, cache=True, error_model="numpy")
def _radii(radii, words):  # type: ignore[no-untyped-def]
    """Pass 2: the Box-Muller radii (2, B) of one field's words (4, B)."""
    for j in range(words.shape[1]):
        radii[0, j] = _sqrt(_neg2log(words[0, j]))
    for j in range(words.shape[1]):
        radii[1, j] = _sqrt(_neg2log(words[2, j]))


@_njit(nogil=True, cache=True, error_model="numpy")
def _normals(out, words, radii):  # type: ignore[no-untyped-def]
    """Pass 3: the normals of one field (4 * B,), component-major, from its words and radii."""
    b = words.shape[1]
    for j in range(b):
        c, s = _cos_sin(words[1, j])
        out[j] = radii[0, j] * c
        out[b + j] = radii[0, j] * s
    for j in range(b):
        c, s = _cos_sin(words[3, j])
        out[2 * b + j] = radii[1, j] * c
        out[3 * b + j] = radii[1, j] * s


@_njit(nogil=True, cache=True, error_model="numpy")
def _fill(out, k0, k1, stream, ids, first, last):  # type: ignore[no-untyped-def]
    """Fields ``first .. last - 1`` of ``out`` (F, 4 * B) float32, two passes per field (each
    one a simple loop that the compiler vectorizes; together they do not vectorize)."""
    words = np.empty((4, out.shape[1] // 4), dtype=np.int64)
    radii = np.empty((2, out.shape[1] // 4), dtype=np.float32)
    for f in range(first, last):
        _words(words, k0, k1, stream, ids[f, 0], ids[f, 1])
        _radii(radii, words)
        _normals(out[f], words, radii)


def normal_fields(seed: int, ids: Sequence[int], size: int, stream: int, dtype: torch.dtype, threads: int) -> torch.Tensor:
    """(len(ids), size) fields (``repro.probes.philox.normal_fields`` with the CPU backend)."""
    if numba is None:
        raise RuntimeError("the CPU Philox kernel needs numba (pip install numba)")
    fill = _fill
    blocks = -(-int(size) // px.VALUES_PER_BLOCK)
    out = np.empty((len(ids), px.VALUES_PER_BLOCK * blocks), dtype=np.float32)
    words = np.array([[i & MASK, i >> 32] for i in ids], dtype=np.int64).reshape(-1, 2)
    k0, k1 = int(seed) & MASK, int(seed) >> 32
    workers = max(1, min(int(threads), len(ids)))
    if workers == 1:
        fill(out, k0, k1, int(stream), words, 0, len(ids))
    else:
        from concurrent.futures import ThreadPoolExecutor

        bounds = np.linspace(0, len(ids), workers + 1).astype(int)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(lambda i: fill(out, k0, k1, int(stream), words, int(bounds[i]), int(bounds[i + 1])),
                          range(workers)))
    result = torch.from_numpy(out)
    result = result if result.shape[1] == size else result[:, :size]
    return result if dtype == torch.float32 else result.to(dtype)
