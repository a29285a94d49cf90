"""Probe stage, random fields on the CPU: the Philox4x32-10 + Box-Muller fields as compiled loops.

The fields of ``repro.probes.philox`` as compiled loops (numba), for speed only.

torch runs the reference as some 700 whole-tensor operations per block of 4 values; on a CPU each of
them streams its operands through memory. These kernels compute the same integer operations and the
same float32 operations in the same order (``+ - * /`` and conversions; numba does not contract a
multiply and an add into one fused operation without fastmath), so their fields are bitwise those of
``philox.normal_fields_torch`` (tests/unit/test_philox.py compares the scalar functions on every
branch, the passes on edge words, and whole fields). Per field, three passes (the Philox words, the
radii, the angles and products), each a few simple loops that the compiler vectorizes (one loop
doing all of it is not vectorized). The Philox rounds run in unsigned 64-bit arithmetic on words the
compiler can see are below 2**32 (32 x 32 -> 64-bit vector multiplies), and the logarithm's range
reduction takes its exponent from a leading-zero count. The radii and the angles are each split into
an integer loop, which writes its float32 operands to a small buffer, and a float32 loop: a loop
that holds 64-bit integers is vectorized four lanes wide, a float32-only loop eight. The fields are
split over ``threads`` worker threads (the kernels release the GIL); every value is computed on its
own, so the split changes nothing.

numba compiles the kernels on first use (a few seconds; cached on disk next to this file when
the folder is writable).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from . import philox_constants as px

try:
    import numba
    from numba.cpython.unsafe.numbers import leading_zeros
except ImportError:  # the torch reference is used instead (slow on a CPU)
    numba = None  # type: ignore[assignment]

M0, M1, W0, W1 = px.PHILOX_M0, px.PHILOX_M1, px.PHILOX_W0, px.PHILOX_W1
_M0, _M1, _32, _LOW = np.uint64(M0), np.uint64(M1), np.uint64(32), np.uint64(px.MASK32)
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
assert (
    px.SQRT_UP == (16, 8, 4, 2, 1) and px.SQRT_DOWN == (4, 2, 1) and px.NEWTON_STEPS == 3
)  # unrolled below
assert px.ROUNDS == 10


def available() -> bool:
    """Whether numba imports (the kernel is then compiled on first use)."""
    return numba is not None


def _njit(**options: Any):  # type: ignore[no-untyped-def]
    """numba.njit(**options) where numba imports; else the plain Python function.

    The plain function is never called for fields then: ``philox.normal_fields`` falls back to
    torch."""

    def wrap(fn):  # type: ignore[no-untyped-def]
        return numba.njit(**options)(fn) if numba is not None else fn

    return wrap


@_njit(inline="always", error_model="numpy")
def _neg2log_parts(x):  # type: ignore[no-untyped-def]
    """The integer half of ``_neg2log``, in 64-bit integer arithmetic.

    The two float32 operands of its one division and the exponent term."""
    t = np.int64(x) + 1
    n = 63 - leading_zeros(t)  # type: ignore[call-arg]  # floor(log2 t), exact (a vector lzcnt where the CPU has one)
    big = t << (32 - n)
    high = big > SQRT2_FIXED
    d = (1 << 33) if high else (1 << 32)
    n += 1 if high else 0
    return F32(float(big - d)), F32(float(big + d)), F32(float(32 - n))


@_njit(inline="always", error_model="numpy")
def _neg2log_finish(num, den, e):  # type: ignore[no-untyped-def]
    """The float32 half of ``_neg2log``: ``-2 ln`` from the parts ``_neg2log_parts`` gives."""
    s = num / den
    s2 = s * s
    p = s2 * A11
    p = (p + A9) * s2
    p = (p + A7) * s2
    p = (p + A5) * s2
    p = (p + A3) * s2
    p = p + ONE
    ln_m = (s * TWO) * p
    a = e * LN2 - ln_m
    return a + a


@_njit(inline="always", error_model="numpy")
def _neg2log(x):  # type: ignore[no-untyped-def]
    """``-2 ln((x + 1) / 2**32)`` in float32 for a 32-bit word ``x``.

    The torch reference's ``neg2log_unit``: its two halves in one expression."""
    num, den, e = _neg2log_parts(x)
    return _neg2log_finish(num, den, e)


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
def _angle_parts(x):  # type: ignore[no-untyped-def]
    """The integer half of ``_cos_sin``: the reduced angle, the exchange flag and the signs.

    The within-quadrant angle ``phi`` (float32), whether the cosine takes the sine polynomial
    (``swap`` xor an odd quadrant), and the signs of the cosine and the sine. Quadrant q turns
    (cos, sin) of the reduced angle into (c, s), (-s, c), (-c, -s), (s, -c); a swapped angle
    exchanges c and s first."""
    quadrant = x >> 30
    f = x & ((1 << 30) - 1)
    swap = f > (1 << 29)
    phi = F32(float((1 << 30) - f if swap else f)) * UNIT
    exchange = swap != ((quadrant & 1) == 1)
    return phi, exchange, quadrant == 1 or quadrant == 2, quadrant >= 2


@_njit(inline="always", error_model="numpy")
def _cos_sin_poly(phi):  # type: ignore[no-untyped-def]
    """The float32 half of ``_cos_sin``: the sine and cosine polynomials of ``phi``."""
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
    return c, s


@_njit(inline="always", error_model="numpy")
def _cos_sin(x):  # type: ignore[no-untyped-def]
    """(cos, sin) of the angle ``x * 2 pi / 2**32`` of a 32-bit word ``x`` in float32.

    The torch reference's ``cos_sin_turn``: its two halves in one expression."""
    phi, exchange, neg_cos, neg_sin = _angle_parts(x)
    c, s = _cos_sin_poly(phi)
    first = s if exchange else c
    second = c if exchange else s
    return (-first if neg_cos else first), (-second if neg_sin else second)


@_njit(nogil=True, cache=True, error_model="numpy")
def _words(words, k0, k1, stream, id0, id1):  # type: ignore[no-untyped-def]
    """Pass 1: the Philox output words (4, B) of blocks 0 .. B - 1 of one field.

    In unsigned 64-bit arithmetic with every word held below 2**32 in a way the compiler can
    see (the round keys are uint32 values, the products' halves a shift and a mask), so each
    round's two products are 32 x 32 -> 64-bit vector multiplies (``mulhilo`` in one step:
    the same words as the torch reference's int64 form, checked by the known-answer tests)."""
    keys = np.empty((2, 10), dtype=np.uint32)
    key0, key1 = k0, k1
    for r in range(10):
        if r:
            key0 = (key0 + W0) & MASK
            key1 = (key1 + W1) & MASK
        keys[0, r] = key0
        keys[1, r] = key1
    s, i0, i1 = np.uint64(stream), np.uint64(id0), np.uint64(id1)
    for j in range(words.shape[1]):
        c0, c1, c2, c3 = np.uint64(j), s, i0, i1
        for r in range(10):
            p0 = c0 * _M0
            p1 = c2 * _M1
            c0, c1, c2, c3 = (
                (p1 >> _32) ^ c1 ^ np.uint64(keys[0, r]),
                p1 & _LOW,
                (p0 >> _32) ^ c3 ^ np.uint64(keys[1, r]),
                p0 & _LOW,
            )
        words[0, j] = c0
        words[1, j] = c1
        words[2, j] = c2
        words[3, j] = c3


@_njit(nogil=True, cache=True, error_model="numpy")
def _radii(radii, words, parts):  # type: ignore[no-untyped-def]
    """Pass 2: the Box-Muller radii (2, B) of one field's words (4, B).

    Two loops per radius row: the 64-bit integer half of the logarithm into ``parts`` (3, B)
    float32, then the float32 rest and the square root. Split, the float32 loop runs at twice the
    vector width (eight float32 lanes, not the four of a loop that also holds 64-bit integers)."""
    for k in range(2):
        for j in range(words.shape[1]):
            num, den, e = _neg2log_parts(words[2 * k, j])
            parts[0, j] = num
            parts[1, j] = den
            parts[2, j] = e
        for j in range(words.shape[1]):
            radii[k, j] = _sqrt(_neg2log_finish(parts[0, j], parts[1, j], parts[2, j]))


@_njit(nogil=True, cache=True, error_model="numpy")
def _normals(out, words, radii, parts):  # type: ignore[no-untyped-def]
    """Pass 3: the normals of one field (4 * B,), component-major, from its words and radii.

    Two loops per pair of components: the integer half of the angle into ``parts`` (4, B) float32
    (the angle, the exchange flag, the radius with the cosine's and with the sine's sign), then
    the polynomials and the products. A sign is put on the radius, not on the polynomial's value:
    ``(-r) * c == r * (-c)`` exactly (rounding is symmetric in the sign). Split, the float32 loop
    runs at eight lanes with no 64-bit integers in it."""
    b = words.shape[1]
    for k in range(2):
        for j in range(b):
            phi, exchange, neg_cos, neg_sin = _angle_parts(words[2 * k + 1, j])
            r = radii[k, j]
            parts[0, j] = phi
            parts[1, j] = ONE if exchange else ZERO
            parts[2, j] = -r if neg_cos else r
            parts[3, j] = -r if neg_sin else r
        for j in range(b):
            c, s = _cos_sin_poly(parts[0, j])
            exchange = parts[1, j] != ZERO
            out[2 * k * b + j] = parts[2, j] * (s if exchange else c)
            out[(2 * k + 1) * b + j] = parts[3, j] * (c if exchange else s)


@_njit(nogil=True, cache=True, error_model="numpy")
def _fill(out, k0, k1, stream, ids, first, last):  # type: ignore[no-untyped-def]
    """Fields ``first .. last - 1`` of ``out`` (F, 4 * B) float32, three passes per field.

    The passes are ``_words``, ``_radii`` and ``_normals``, each made of simple loops that the
    compiler vectorizes (together in one loop they do not vectorize)."""
    words = np.empty((4, out.shape[1] // 4), dtype=np.int64)
    radii = np.empty((2, out.shape[1] // 4), dtype=np.float32)
    parts = np.empty((4, out.shape[1] // 4), dtype=np.float32)
    for f in range(first, last):
        _words(words, k0, k1, stream, ids[f, 0], ids[f, 1])
        _radii(radii, words, parts)
        _normals(out[f], words, radii, parts)


def fill(out: np.ndarray, seed: int, ids: Sequence[int], stream: int, threads: int = 1) -> None:
    """Write the fields of ``ids`` into ``out``, split over ``threads`` threads.

    ``out`` is a C-contiguous float32 (len(ids), 4 * B) array (B blocks of 4 values per field);
    ``threads=1`` is the calling thread alone, as a synthesis worker does. Every value is
    computed on its own: neither the split nor the destination changes any."""
    if numba is None:
        raise RuntimeError("the CPU Philox kernel needs numba (pip install numba)")
    if (
        out.dtype != np.float32
        or out.ndim != 2
        or out.shape[0] != len(ids)
        or out.shape[1] % 4
        or not out.flags.c_contiguous
    ):
        raise ValueError(
            f"out must be a C-contiguous float32 ({len(ids)}, 4 * blocks) array, got {out.dtype} "
            f"{out.shape}"
        )
    words = np.array([[i & MASK, i >> 32] for i in ids], dtype=np.int64).reshape(-1, 2)
    k0, k1 = int(seed) & MASK, int(seed) >> 32
    workers = max(1, min(int(threads), len(ids)))
    if workers == 1:
        _fill(out, k0, k1, int(stream), words, 0, len(ids))
        return

    bounds = np.linspace(0, len(ids), workers + 1).astype(int)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(
            pool.map(
                lambda i: _fill(
                    out, k0, k1, int(stream), words, int(bounds[i]), int(bounds[i + 1])
                ),
                range(workers),
            )
        )


def normal_fields(
    seed: int, ids: Sequence[int], size: int, stream: int, dtype: torch.dtype, threads: int
) -> torch.Tensor:
    """(len(ids), size) fields (``repro.probes.philox.normal_fields`` with the CPU backend)."""
    blocks = -(-int(size) // px.VALUES_PER_BLOCK)
    out = np.empty((len(ids), px.VALUES_PER_BLOCK * blocks), dtype=np.float32)
    fill(out, seed, ids, stream, threads)
    result = torch.from_numpy(out)
    result = result if result.shape[1] == size else result[:, :size]
    return result if dtype == torch.float32 else result.to(dtype)
