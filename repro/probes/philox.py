"""Probe stage, random fields: a counter-based normal generator, Philox4x32-10 plus Box-Muller.

It runs in torch integer and float32 operations, so that a batch of noise fields is drawn in one
call on any device and comes out bitwise identical on the CPU and on CUDA.

Generator. Philox4x32-10 of Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as
1, 2, 3" (SC 2011), exactly as the Random123 reference (``philox4x32`` with 10 rounds:
multipliers 0xD2511F53 / 0xCD9E8D57, Weyl key increments 0x9E3779B9 / 0xBB67AE85; checked against
Random123's published known-answer vectors in tests/unit/test_philox.py). torch has no uint32
arithmetic for every op, so each 32-bit word is held in an int64 tensor (values 0 .. 2**32 - 1)
and no intermediate ever leaves int64's range: the 64-bit product ``x * M`` (up to 2**64) is
never formed. With ``N = 2**32 - M`` (< 2**30), ``q = x * N < 2**62`` and
``x * M = x * 2**32 - q``, so ``hi = x - ceil(q / 2**32) = x - ((q + 2**32 - 1) >> 32)`` and
``lo = (-q) & 0xFFFFFFFF`` exactly (``mulhilo``; the tests check it against Python integers on
the extreme and random operands).

Counters and keys (what makes fields independent). A field is keyed by the run seed and the
field id, and numbered by its stream:

* key = (seed & 0xFFFFFFFF, seed >> 32): the run seed (0 <= seed < 2**64);
* counter = (block, stream, id & 0xFFFFFFFF, id >> 32): ``block`` numbers the 4-value blocks of
  the field (0, 1, ...), ``stream`` is 0 for the white field and 1 + t for its t-th redraw
  field, ``id`` is the field's 64-bit id.

So under one seed every (id, stream) owns its own counter range (blocks 0 .. 2**32 - 1 with the
other three counter words fixed), ranges of different ids or streams never overlap, and
different seeds are different keys (different bijections). The critical-band probe's id of an
image and condition is ``field_id(name, condition)``: the first 8 bytes (little-endian) of
sha256(``name`` 0x1F ``condition``): file names are the image ids, as for the PCG64
per-image generator (``repro.probes._common.image_seed``), so the noise of an image depends on
nothing but (seed, name, condition): not on the batch, its position, the device or threads.

Uniforms and the normal transform (Box-Muller, Box and Muller 1958: the exact transform of two
independent uniforms into two independent standard normals). Block j of a field gives 4 words
(x0, x1, x2, x3): ``u = (x0 + 1) * 2**-32`` in (0, 1] (never 0, so the logarithm is finite;
``u = 1`` gives radius 0), ``theta = 2 pi x1 * 2**-32`` in [0, 2 pi), and
``z0 = sqrt(-2 ln u) cos(theta)``, ``z1 = sqrt(-2 ln u) sin(theta)``; likewise (x2, x3) ->
(z2, z3). A field of B blocks holds z0 of blocks 0 .. B - 1, then z1, z2, z3 (component-major,
so compiled kernels store contiguously); its first ``size`` values are used. The grid of u
truncates the normal at |z| <= sqrt(64 ln 2) = 6.66 (probability of a larger |z|: 2.7e-11).

Bitwise identity across devices. The integer part is exact everywhere. The transform is
computed in float32 with +, -, *, / only (IEEE-754 correctly rounded on CPUs and on CUDA; each a
separate torch operation, so no fused multiply-add can change a rounding) and integer-to-float
conversions with one rounding (via float64). No library log, sin, cos or sqrt is used: their
last bits differ between CPU and CUDA libraries, and torch's CPU float64 ``sqrt`` is not even
correctly rounded (it differs from ``math.sqrt`` in about 0.7% of arguments). Instead:

* ``ln u``: exact integer range reduction ``u = m * 2**(n - 32)`` with ``m = M / 2**32`` in
  [sqrt(1/2), sqrt(2)], ``ln m = 2 atanh(s)`` with ``s = (M - D) / (M + D)`` formed from exact
  integers, the series to s**11 (truncation < 1e-10);
* ``sqrt``: exact scaling by powers of 4 into [0.5, 2), 3 Newton steps from a linear start;
* ``cos``/``sin``: the quadrant from the top 2 bits of x1, the octant by exact integer
  reflection, Taylor polynomials on [0, pi/4] to degree 11/12 (truncation < 2e-9).

So the normals are float32 numbers within a few units in the last place of the exact
Box-Muller values (tests/unit/test_philox.py measures it); ``dtype=float64`` returns the same
numbers widened. The CPU fast path (``repro.probes.philox_cpu``, numba) computes the same
operations in the same order and is checked bitwise against this module.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import torch

from .philox_constants import (  # re-exported: philox.X is the documented name
    ANGLE_UNIT,
    ATANH,
    COS,
    LN2,
    MASK32,
    NEWTON_STEPS,
    PHILOX_M0,
    PHILOX_M1,
    PHILOX_W0,
    PHILOX_W1,
    ROUNDS,
    SIN,
    SQRT2_FIXED,
    SQRT_DOWN,
    SQRT_START,
    SQRT_UP,
    VALUES_PER_BLOCK,
    WHITE_STREAM,
)


def mulhilo(x: torch.Tensor, m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """High and low 32-bit words of ``x * m``, without forming the 64-bit product.

    For int64 ``x`` in [0, 2**32) and a 32-bit constant ``m >= 2**31`` (the Philox multipliers)."""
    q = x * ((1 << 32) - m)  # < 2**62
    return x - ((q + MASK32) >> 32), (-q) & MASK32


def philox4x32_10(counter: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """Philox4x32-10 of int64 ``counter`` (..., 4) and ``key`` (..., 2) -> the 4 output words.

    Words in [0, 2**32); counter and key are broadcast against each other; the output words
    (..., 4) are int64 in [0, 2**32)."""
    c0, c1, c2, c3 = counter.unbind(-1)
    k0, k1 = key.unbind(-1)
    for r in range(ROUNDS):
        if r:
            k0 = (k0 + PHILOX_W0) & MASK32
            k1 = (k1 + PHILOX_W1) & MASK32
        hi0, lo0 = mulhilo(c0, PHILOX_M0)
        hi1, lo1 = mulhilo(c2, PHILOX_M1)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return torch.stack(torch.broadcast_tensors(c0, c1, c2, c3), dim=-1)


def _to_f32(x: torch.Tensor) -> torch.Tensor:
    """int64 -> float32 with one rounding: via float64, which holds every |x| < 2**53 exactly."""
    return x.to(torch.float64).to(torch.float32)


def neg2log_unit(x: torch.Tensor) -> torch.Tensor:
    """``-2 ln u`` (float32) for ``u = (x + 1) * 2**-32``, int64 x in [0, 2**32).

    Exact integer range reduction ``u = m * 2**(n - 32)``, ``m = M / 2**32`` in [sqrt(1/2),
    sqrt(2)], then ``ln m = 2 atanh(s)``, ``s = (M - D) / (M + D)`` from the exact integers
    (module docstring)."""
    t = x + 1  # 1 .. 2**32
    n = torch.zeros_like(t)  # floor(log2 t), by binary search on the bits
    for step in (32, 16, 8, 4, 2, 1):
        n = n + torch.where((t >> (n + step)) != 0, step, 0)
    big = t << (32 - n)  # t * 2**(32 - n) in [2**32, 2**33)
    high = big > SQRT2_FIXED
    d = torch.where(high, 1 << 33, 1 << 32)
    n = n + high.to(torch.int64)
    s = _to_f32(big - d) / _to_f32(big + d)
    s2 = s * s
    p = s2 * ATANH[0]
    for c in ATANH[1:]:
        p = (p + c) * s2
    p = p + 1.0
    ln_m = (s * 2.0) * p
    a = _to_f32(32 - n) * LN2 - ln_m  # -ln u >= 0 (+0 for u = 1)
    return a + a


def sqrt_basic(w: torch.Tensor) -> torch.Tensor:
    """``sqrt(w)`` (float32, ``w`` in {0} or [2**-33, 2**15]) with + * / only.

    Exact scaling by powers of 4 into [0.5, 2), the start ``0.485 (1 + y)``, 3 Newton steps
    ``y = (y + w / y) * 0.5``, the exact power of 2 back (within 1 ulp; tests). Library square
    roots are not used: torch's CPU float64 ``sqrt`` is not even correctly rounded (it differs
    from CUDA's in the last bit for about 0.7% of arguments)."""
    y = w
    scale = torch.ones_like(w)
    for e in SQRT_UP:  # small w: multiply by 4**e while the result stays below 2
        up = (y * 4.0**e) < 2.0
        y = torch.where(up, y * 4.0**e, y)
        scale = torch.where(up, scale * 2.0**-e, scale)
    for e in SQRT_DOWN:  # large w: divide by 4**e while the result stays at least 0.5
        down = (y * 4.0**-e) >= 0.5
        y = torch.where(down, y * 4.0**-e, y)
        scale = torch.where(down, scale * 2.0**e, scale)
    r = (y + 1.0) * SQRT_START
    for _ in range(NEWTON_STEPS):
        r = (r + y / r) * 0.5
    return torch.where(w == 0, torch.zeros_like(r), r * scale)


def cos_sin_turn(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos`` and ``sin`` (float32) of ``2 pi x / 2**32``, int64 x in [0, 2**32).

    The quadrant from the top 2 bits, the octant by exact reflection, Taylor polynomials on
    [0, pi/4]."""
    quadrant = x >> 30
    f = x & ((1 << 30) - 1)
    swap = f > (1 << 29)
    phi = _to_f32(torch.where(swap, (1 << 30) - f, f)) * ANGLE_UNIT  # [0, pi/4]
    p2 = phi * phi
    s = p2 * SIN[0]
    for c in SIN[1:]:
        s = (s + c) * p2
    s = s * phi + phi
    c_ = p2 * COS[0]
    for c in COS[1:]:
        c_ = (c_ + c) * p2
    c_ = c_ + 1.0
    s, c_ = torch.where(swap, c_, s), torch.where(swap, s, c_)
    # rotate by quadrant * pi/2: (c, s) -> (c, s), (-s, c), (-c, -s), (s, -c)
    cos = torch.where(
        quadrant == 0, c_, torch.where(quadrant == 1, -s, torch.where(quadrant == 2, -c_, s))
    )
    sin = torch.where(
        quadrant == 0, s, torch.where(quadrant == 1, c_, torch.where(quadrant == 2, -s, -c_))
    )
    return cos, sin


def box_muller(words: torch.Tensor) -> torch.Tensor:
    """Philox output words (..., 4) -> 4 standard normals (..., 4), float32 (module docstring)."""
    x0, x1, x2, x3 = words.unbind(-1)
    ra = sqrt_basic(neg2log_unit(x0))
    rb = sqrt_basic(neg2log_unit(x2))
    ca, sa = cos_sin_turn(x1)
    cb, sb = cos_sin_turn(x3)
    return torch.stack([ra * ca, ra * sa, rb * cb, rb * sb], dim=-1)


def field_id(name: str, condition: str) -> int:
    """The 64-bit id of one image's field in one condition.

    The first 8 bytes (little-endian) of sha256(name 0x1F condition). The file name is the image
    id (module docstring)."""
    digest = hashlib.sha256(f"{name}\x1f{condition}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _check(seed: int, ids: Sequence[int], stream: int) -> None:
    if not 0 <= int(seed) < 1 << 64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    if not 0 <= int(stream) < 1 << 32:
        raise ValueError(f"stream must be in [0, 2**32), got {stream}")
    for i in ids:
        if not 0 <= int(i) < 1 << 64:
            raise ValueError(f"field ids must be in [0, 2**64), got {i}")


def _split(values: Sequence[int], device: torch.device | str) -> torch.Tensor:
    """64-bit unsigned values -> (len, 2) int64 tensor of their (low, high) 32-bit words."""
    return torch.tensor(
        [[int(v) & MASK32, int(v) >> 32] for v in values], dtype=torch.int64, device=device
    ).reshape(-1, 2)


def normal_fields_torch(
    seed: int,
    ids: Sequence[int],
    size: int,
    *,
    stream: int = WHITE_STREAM,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float64,
    max_blocks: int = 1 << 22,
) -> torch.Tensor:
    """``len(ids)`` fields of ``size`` standard normals each, (F, size) in ``dtype`` on ``device``.

    The reference implementation (torch operations only, any device). Value ``i * B + j`` of a
    field (B = ceil(size / 4) blocks) is normal ``i`` of block ``j`` (component-major, so that
    compiled kernels store contiguously). ``max_blocks`` bounds the blocks computed at once (the
    temporaries take about 100 bytes per block); the values do not depend on it."""
    _check(seed, ids, stream)
    blocks = -(-int(size) // VALUES_PER_BLOCK)
    dev = torch.device(device)
    idw = _split(ids, dev)  # (F, 2)
    key = _split([seed], dev)  # (1, 2), broadcast
    out = torch.empty((idw.shape[0], VALUES_PER_BLOCK * blocks), dtype=dtype, device=dev)
    step = max(1, int(max_blocks) // max(blocks, 1))
    for f0 in range(0, idw.shape[0], step):
        part = idw[f0 : f0 + step]
        counter = torch.empty((part.shape[0], blocks, 4), dtype=torch.int64, device=dev)
        counter[..., 0] = torch.arange(blocks, dtype=torch.int64, device=dev)
        counter[..., 1] = int(stream)
        counter[..., 2] = part[:, :1]
        counter[..., 3] = part[:, 1:]
        z = box_muller(philox4x32_10(counter, key))  # (f, B, 4)
        out[f0 : f0 + step] = z.transpose(1, 2).reshape(part.shape[0], -1)
    return out[:, :size]


def normal_fields(
    seed: int,
    ids: Sequence[int],
    shape: int | tuple[int, ...],
    *,
    stream: int = WHITE_STREAM,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
    backend: str = "auto",
    out: torch.Tensor | None = None,
    threads: int | None = None,
) -> torch.Tensor:
    """The fields of ``ids`` under ``seed``, (F, *shape) standard normals, in ONE call.

    Stream 0: white fields; 1 + t: the t-th redraws. The normals are in ``dtype``
    (float32 or float64) on ``device``.

    ``backend``: ``torch`` (the reference operations, on the device), ``cpu`` (the numba kernel of
    ``repro.probes.philox_cpu``, bitwise identical; needs a CPU ``device``) or ``auto`` (``cpu``
    for a CPU device when numba imports, else ``torch``). The values do not depend on it.

    ``out``: a contiguous (F, *shape) tensor of ``dtype`` on ``device`` to write the fields into
    (and return). A caller that draws chunk after chunk into the same buffer saves allocating
    and first touching fresh memory for each (on a CPU that costs as much as the drawing).
    ``threads``: the CPU kernel's threads (default ``torch.get_num_threads()``)."""
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    if backend not in ("auto", "torch", "cpu"):
        raise ValueError(f"backend must be auto, torch or cpu, got {backend!r}")
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    size = math.prod(shape)
    dev = torch.device(device)
    if out is not None and (
        tuple(out.shape) != (len(ids), *shape)
        or out.dtype != dtype
        or out.device != dev
        or not out.is_contiguous()
    ):
        raise ValueError(
            f"out must be a contiguous {dtype} tensor of shape {(len(ids), *shape)} on {dev}, "
            f"got {out.dtype} {tuple(out.shape)} on {out.device}"
        )
    if backend != "torch" and dev.type == "cpu":
        from . import philox_cpu

        if philox_cpu.available():
            _check(seed, ids, stream)
            threads = torch.get_num_threads() if threads is None else int(threads)
            if out is not None and dtype == torch.float32 and size % VALUES_PER_BLOCK == 0:
                philox_cpu.fill(
                    out.numpy().reshape(len(ids), size),
                    int(seed),
                    [int(i) for i in ids],
                    int(stream),
                    threads,
                )
                return out
            fields = philox_cpu.normal_fields(
                int(seed), [int(i) for i in ids], size, int(stream), dtype, threads
            ).reshape(len(ids), *shape)
            return fields if out is None else out.copy_(fields)
        if backend == "cpu":
            raise RuntimeError("backend 'cpu' needs numba (pip install numba)")
    elif backend == "cpu":
        raise ValueError(f"backend 'cpu' computes on the CPU, not on {dev}")
    fields = normal_fields_torch(seed, ids, size, stream=stream, device=dev, dtype=dtype).reshape(
        len(ids), *shape
    )
    return fields if out is None else out.copy_(fields)
