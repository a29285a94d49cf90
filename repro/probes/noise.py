"""Probe stage, critical-band stimuli (torch, batched, device-agnostic): their synthesis.

Grayscale and contrast reduction of the crops, band-limited noise from a Laplacian pyramid, and the
out-of-range rule.

Exactly METHODS.md section 3 / the study's ``eval_criticalband.py`` (which uses pyrtools):

* grayscale as PIL ``convert("L")``: ``L = (19595 R + 38470 G + 7471 B + 2**15) >> 16``, PIL's
  fixed-point form of ``R*299/1000 + G*587/1000 + B*114/1000`` (identical to PIL on all 2**24
  colours, checked once; 2.2M of them in the tests), then ``/255`` and
  ``x = (x - mean(x)) * 0.2 + 0.449`` (mean per image);
* Laplacian pyramid as pyrtools ``LaplacianPyramid(noise)``: filter ``binom5`` =
  ``sqrt(2) * [1, 4, 6, 4, 1] / 16`` (pyrtools' unnormalised scaling; the scale cancels in
  every band), edges ``reflect1`` (reflect about the edge pixel, i.e. ``torch`` ``reflect``
  padding), 7 levels at 224 px (224, 112, 56, 28, 14, 7, 4; 6 band-pass levels and the
  low-pass residual). Reduce: separable correlation along the width then the height, even
  samples kept. Expand: zeros inserted at odd indices, then separable convolution along the
  height then the width (both checked against pyrtools 1.1.1's ``corrDn`` / ``upConv``
  operator matrices; ``reduce_matrix`` / ``expand_matrix`` are those matrices);
  implementation (same operators, different rounding only): the 5 x 5 outer product of the
  integer taps ``[1, 4, 6, 4, 1]``, with the factor ``(sqrt(2)/16)**4 = 2**-14`` of one
  reduce-expand pair applied exactly as a power of two; a reduction is one strided depthwise
  convolution of the reflect-padded fields, an expansion one strided transposed convolution
  (both axes at once: a separable operator does not depend on the axis order); from level 3 on,
  the coarse levels are reached with the composite operator matrices (``_level_one_recon``);
* band ``f`` (0 = coarsest, 6 = finest) is the reconstruction from pyramid level ``6 - f``
  alone, rescaled so its RMS equals the RMS of the finest level's reconstruction of the SAME
  noise field (``recon * rms(first_recon) / rms(recon)``);
* out-of-range rule (the study's per-pixel loop, applied to the out-of-range pixels only; every
  pixel is independent because the loop reads the unmodified noisy image): a pixel with
  ``image + noise < 0`` gets ``image := 0.1 - noise`` (so the result is 0.1), one with
  ``image + noise > 1`` gets ``image := 0.9 - noise`` (result 0.9); if that new image value would
  itself be out of range on the other side (``0.1 - noise > 1`` or ``0.9 - noise < 0``) the image
  pixel is kept and the noise pixel is redrawn as ``N(0, 1) * SD`` (white, not band-limited, not
  rescaled: literally what the study does) until ``image + noise`` lies in [0, 1]. Pixels exactly
  at 0 or 1 are in range. With the study's SDs (<= 0.16) a redraw needs |noise| > 0.9, which
  practically never happens; tests force it with SD 1.

Randomness, two generators selectable by name (``NOISES``):

* ``philox`` (critical-band probe VERSION 4, the default): the counter-based generator of
  ``repro.probes.philox`` (Philox4x32-10 + Box-Muller), keyed by the run seed, with one 64-bit
  id per (image name, condition) (``philox.field_id``); stream 0 is the white field, stream
  1 + t the t-th redraw field. The fields of a whole batch of images and conditions are drawn
  in one call on the device, bitwise the same on the CPU and on CUDA (``PhiloxNoise``).
* ``pcg64`` (VERSION 3, kept so that earlier results stay reproducible): every (image, condition)
  has its own NumPy PCG64 generator on the CPU, seeded from (run seed, image name, condition)
  (``repro.probes._common.image_seed``). It draws the white field first, then one full (H, W)
  field per redraw round (``ImageNoise``).

Either way pixel (i, j)'s t-th redraw is the t-th redraw field at (i, j), and the noise depends
neither on batch size, device, worker count nor image order, so a reference given the same
fields reproduces it exactly.

Precision: computed in the dtype of the contrast-reduced images. The probe uses float32 (the
model input is float32; max abs difference to the float64 literal oracle 1.2e-7 given the same
noise); float64 matched the oracle exactly (after the float32 cast) on the oracle test's crop.
In float32 a pixel within ~1e-7 of 0 or 1 could fall on the other side of the out-of-range
test than in float64 (rare; no such pixel in the oracle tests).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.nn.functional as F

from . import out_of_range_cpu, philox
from ._common import run_chunks

LEVELS = 7
CONTRAST = 0.2
GRAY_MEAN = 0.449
EPSILON = 0.1
# pixels per pyramid pass on a CPU (16 fields at 224 px: 13% less CPU than 8, same as 32; results do
# not depend on it)
CPU_CHUNK_PIXELS = 16 * 224 * 224

#: pyrtools ``named_filter("binom5")``: sqrt(2) * binomial(4) / 16
BINOM5: tuple[float, ...] = tuple(math.sqrt(2) * c / 16 for c in (1, 4, 6, 4, 1))


def grayscale(images: torch.Tensor) -> torch.Tensor:
    """uint8 RGB (N, 3, H, W) -> uint8 (N, H, W), bit-identical to PIL ``convert("L")``."""
    if images.dtype != torch.uint8 or images.ndim != 4 or images.shape[1] != 3:
        raise ValueError(
            f"grayscale needs uint8 (N, 3, H, W), got {images.dtype} {tuple(images.shape)}"
        )
    x = images.to(torch.int32)
    lum = (x[:, 0] * 19595 + x[:, 1] * 38470 + x[:, 2] * 7471 + 0x8000) >> 16
    return lum.to(torch.uint8)


def reduce_contrast(gray: torch.Tensor, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """uint8 (N, H, W) -> ``(x - mean(x)) * 0.2 + 0.449`` with x = gray / 255 (mean per image)."""
    x = gray.to(dtype) / 255.0
    return (x - x.mean(dim=(-2, -1), keepdim=True)) * CONTRAST + GRAY_MEAN


def _reflect(i: int, n: int) -> int:
    """Index ``i`` reflected about the edge samples of a length-``n`` axis (pyrtools reflect1)."""
    while i < 0 or i >= n:
        i = -i if i < 0 else 2 * (n - 1) - i
    return i


def reduce_matrix(n: int) -> np.ndarray:
    """The (ceil(n/2), n) matrix of pyrtools ``corrDn(binom5, 'reflect1', step 2)`` on one axis.

    It correlates with the filter (reflected edges) and keeps even samples."""
    m = (n + 1) // 2
    d = np.zeros((m, n))
    for j in range(m):
        for t, c in enumerate(BINOM5):
            d[j, _reflect(2 * j + t - 2, n)] += c
    return d


def expand_matrix(n: int, m: int) -> np.ndarray:
    """The (n, m) matrix of pyrtools ``upConv(binom5, 'reflect1', step 2)`` to length ``n``.

    Samples placed at even indices, zeros between, convolved with the filter (reflected edges)."""
    u = np.zeros((n, m))
    for i in range(n):
        for t, c in enumerate(BINOM5):
            k = _reflect(i + t - 2, n)
            if k % 2 == 0 and k // 2 < m:
                u[i, k // 2] += c
    return u


@functools.lru_cache(maxsize=16)
def _operators_np(
    n: int, levels: int
) -> tuple[list[int], list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Per axis of length ``n``: level sizes and the reduce, expand and composite matrices.

    The reduce matrices D_l, expand matrices U_l and the composite expand-to-full-size matrices
    B_l = U_0 U_1 ... U_{l-1} (B_0 = identity)."""
    sizes = [n]
    for _ in range(levels - 1):
        sizes.append((sizes[-1] + 1) // 2)
    if sizes[-2] < len(BINOM5):
        raise ValueError(
            f"a {levels}-level pyramid needs images of at least {len(BINOM5) * 2 ** (levels - 2)} "
            f"px; got {n}"
        )
    downs = [reduce_matrix(sizes[i]) for i in range(levels - 1)]
    ups = [expand_matrix(sizes[i], sizes[i + 1]) for i in range(levels - 1)]
    full = [np.eye(n)]
    for u in ups:
        full.append(full[-1] @ u)
    return sizes, downs, ups, full


#: binom5 without pyrtools' factor sqrt(2)/16: integer taps, exact in floating point. A 2-D
#: reduce or expand with the 5 x 5 outer product of these taps is (16/sqrt(2))**2 = 128 times
#: pyrtools' (corrDn / upConv along both axes), so one reduce plus one expand is 2**14 times
#: pyrtools': a power of two, and the rescaling is exact.
TAPS: tuple[float, ...] = (1.0, 4.0, 6.0, 4.0, 1.0)
_LEVEL_GAIN = 2.0**-14


@functools.lru_cache(maxsize=32)
def _kernel(channels: int, dtype: torch.dtype, device: str) -> torch.Tensor:
    """The 5 x 5 integer kernel ``outer(TAPS, TAPS)`` once per channel: (channels, 1, 5, 5)."""
    taps = torch.tensor(TAPS, dtype=dtype, device=device)
    return torch.outer(taps, taps).expand(channels, 1, 5, 5).contiguous()


def _reduce2d(x: torch.Tensor) -> torch.Tensor:
    """One pyramid reduction of (K, R, C) -> (K, ceil(R/2), ceil(C/2)).

    As pyrtools ``corrDn(binom5, 'reflect1', step 2)`` along both axes (``reduce_matrix``), times
    128. reflect1 (reflection about the edge sample) is torch's ``reflect`` padding; the K fields
    are the channels of one depthwise convolution (each field is computed the same way whatever K
    is and wherever it sits in the batch; checked bitwise in the tests)."""
    return _reduce_padded(F.pad(x.unsqueeze(0), (2, 2, 2, 2), mode="reflect"))


def _reduce_padded(padded: torch.Tensor) -> torch.Tensor:
    """``_reduce2d`` of fields already reflect-padded by 2 on every side: (1, K, R + 4, C + 4)."""
    k = padded.shape[1]
    return F.conv2d(padded, _kernel(k, padded.dtype, str(padded.device)), stride=2, groups=k)[0]


def _reflect_padded(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``F.pad(x.to(dtype).unsqueeze(0), (2, 2, 2, 2), mode="reflect")`` in one pass over ``x``.

    The cast is written straight into the padded buffer, then the 2 + 2 edge rows and columns are
    copied: (K, R, C) -> (1, K, R + 4, C + 4)."""
    k, r, c = x.shape
    buf = torch.empty((1, k, r + 4, c + 4), dtype=dtype, device=x.device)
    buf[0, :, 2 : r + 2, 2 : c + 2].copy_(x)
    for dst, src in ((1, 3), (0, 4), (r + 2, r), (r + 3, r - 1)):  # x[-1] = x[1], x[-2] = x[2], ...
        buf[0, :, dst, 2 : c + 2].copy_(buf[0, :, src, 2 : c + 2])
    for dst, src in ((1, 3), (0, 4), (c + 2, c), (c + 3, c - 1)):  # then the columns, corners too
        buf[0, :, :, dst].copy_(buf[0, :, :, src])
    return buf


def _expand2d(x: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """One pyramid expansion of (K, r, c) to (K, rows, cols).

    As pyrtools ``upConv(binom5, 'reflect1', step 2)`` along both axes (``expand_matrix``:
    samples at even indices, zeros between, convolved with reflected edges), times 128, as a
    strided transposed convolution of the input extended by one sample on each side. The
    zero-stuffed signal reflected about its edges makes the extension x[-1] = x[1] at the start
    and, at the end, x[r] = x[r - 2] for an odd output length (torch ``reflect``) or x[r] =
    x[r - 1] for an even one."""
    k, r, c = x.shape
    ext = F.pad(x.unsqueeze(0), (1, 1, 1, 1), mode="reflect")
    if rows % 2 == 0:
        ext[:, :, r + 1].copy_(ext[:, :, r])
    if cols % 2 == 0:
        ext[:, :, :, c + 1].copy_(ext[:, :, :, c])
    # output j of the uncropped transposed convolution is sample j - 4 of the expansion: padding 4
    # crops those 4, output_padding 1 adds the last sample of an even length (2r - 1 + 1 = rows)
    out = F.conv_transpose2d(
        ext,
        _kernel(k, x.dtype, str(x.device)),
        stride=2,
        padding=4,
        output_padding=(1 - rows % 2, 1 - cols % 2),
        groups=k,
    )
    return out[0]


def _norm(x: torch.Tensor) -> torch.Tensor:
    """The L2 norm of each (H, W) field of (K, H, W), as (K,).

    Row norms first, so each field's summation order is the same whatever K is (results do not
    depend on the batch)."""
    return torch.linalg.vector_norm(torch.linalg.vector_norm(x, dim=-1), dim=-1)


def _check_size(white: torch.Tensor, levels: int) -> None:
    if white.ndim != 3:
        raise ValueError(f"band_noise needs (N, H, W) fields, got {tuple(white.shape)}")
    _operators_np(white.shape[-2], levels)  # validates the size (raises for too small images)
    _operators_np(white.shape[-1], levels)


#: From this pyramid level on, ``_band_chunk`` reaches the level-1 reconstruction through the
#: composite operators (a few small matrix products) instead of level-by-level reductions and
#: expansions (each a padding and a convolution). Results differ in rounding only.
COMPOSITE_FROM = 3


def _band_chunk(
    w: torch.Tensor,
    level: int,
    levels: int,
    dtype: torch.dtype | None = None,
    composite_from: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pyramid level ``level`` of the fields ``w`` (K, H, W) reconstructed alone, and a factor.

    The factor (K,) rescales it to the RMS of the finest level's reconstruction; computed in
    ``dtype`` (default ``w``'s).

    Level ``L`` of the Laplacian pyramid is ``G_L - expand(G_{L+1})`` (the low-pass residual
    for ``L = levels - 1``), reconstructed by expanding it L times: what pyrtools'
    ``recon_pyr(levels=L)`` computes (its expansions of all-zero levels are skipped). With the
    integer taps the Gaussian levels come out 128**l times pyrtools' (exact powers of two); the
    coefficient is rescaled by 2**(-14 L) so the reconstruction has pyrtools' scale.

    From level ``composite_from`` (default ``COMPOSITE_FROM``) on, levels 2..L are not built one
    by one: the level-1 reconstruction of level L is computed from the level-1 Gaussian with
    the composite operators (``_level_one_recon``), then expanded once to full size. Same
    operators, different rounding only (the tests compare both paths).
    """
    dtype = dtype or w.dtype
    composite_from = COMPOSITE_FROM if composite_from is None else composite_from
    sizes = [(w.shape[-2], w.shape[-1])]
    for _ in range(levels - 1):
        sizes.append(((sizes[-1][0] + 1) // 2, (sizes[-1][1] + 1) // 2))

    def up(x: torch.Tensor, lev: int) -> torch.Tensor:  # level lev + 1 -> level lev
        return _expand2d(x, *sizes[lev])

    padded = _reflect_padded(w, dtype)
    w = padded[0, :, 2:-2, 2:-2]  # the fields in dtype
    gauss = [w, _reduce_padded(padded)]
    finest = torch.add(w, up(gauss[1], 0), alpha=-_LEVEL_GAIN)  # w - E(R(w))
    if level == 0:
        return finest, torch.ones(w.shape[0], dtype=dtype, device=w.device)
    norm_finest = _norm(finest)
    del finest
    if level >= composite_from:
        recon = up(_level_one_recon(gauss[1], level, sizes[0], levels), 0)
        return recon, norm_finest / _norm(recon)
    for _ in range(1, min(level + 1, levels - 1)):
        gauss.append(_reduce2d(gauss[-1]))
    if level == levels - 1:
        coeff = gauss[level] * 2.0 ** (-14 * level)
    else:
        coeff = torch.add(gauss[level], up(gauss[level + 1], level), alpha=-_LEVEL_GAIN)
        coeff.mul_(2.0 ** (-14 * level))
    for lev in range(level - 1, -1, -1):
        coeff = up(coeff, lev)
    return coeff, norm_finest / _norm(coeff)


_ALIGN = 16  # elements (64 bytes of float32): see _level_one_recon


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


@functools.lru_cache(maxsize=64)
def _composite(
    n: int, levels: int, level: int, dtype: torch.dtype, device: str
) -> tuple[torch.Tensor, ...]:
    """The composite reduce and expand operators of one axis of length ``n``, and D_L and U_L.

    The composite reduce D_{L-1}...D_1 (level 1 -> L), the composite expand U_1...U_{L-1}
    (L -> 1) times 2**-7 (once per axis, so 2**-14 in all: it takes the integer-tap scale of
    ``_band_chunk``'s level-1 Gaussian and of its final expansion back to pyrtools' scale), and,
    below the top level, D_L and U_L (pyrtools' matrices, ``_operators_np``). Every dimension is
    zero-padded to a multiple of ``_ALIGN`` (padding rows and columns of zeros change no result)."""
    _, downs, ups, _ = _operators_np(n, levels)
    down = np.eye(downs[0].shape[0])
    expand = np.eye(downs[0].shape[0])
    for lev in range(1, level):
        down = downs[lev] @ down
        expand = expand @ ups[lev]
    mats = [down, expand * 2.0**-7]
    if level < levels - 1:
        mats += [downs[level], ups[level]]

    def padded(m: np.ndarray) -> torch.Tensor:
        out = np.zeros((_aligned(m.shape[0]), _aligned(m.shape[1])))
        out[: m.shape[0], : m.shape[1]] = m
        return torch.tensor(out, dtype=dtype, device=device)

    return tuple(padded(m) for m in mats)


def _level_one_recon(
    g1: torch.Tensor, level: int, size: tuple[int, int], levels: int
) -> torch.Tensor:
    """Pyramid level ``level`` (>= 2) reconstructed to level 1 from the level-1 Gaussian ``g1``.

    ``g1`` (K, H1, W1) is the fields' level-1 Gaussian (integer-tap scale); the reconstruction is
    ``Uc (G_L - U_L G_{L+1} U_L^T) Uc^T`` with ``G_L = Dc G_1 Dc^T`` and ``G_{L+1} = D_L G_L D_L^T``
    (the residual alone at the top level), every product on the small side of the low-rank
    operators. ``size`` is the full (H, W).

    Batch invariance: the products are batched matrix products of one shape per field, and
    every field's block starts 64-byte aligned (all dimensions padded with zeros to multiples of
    16): BLAS kernels may round differently for differently aligned data, and a field's result
    must not depend on where it sits in the batch (tested bitwise)."""
    rows = _composite(size[0], levels, level, g1.dtype, str(g1.device))
    cols = _composite(size[1], levels, level, g1.dtype, str(g1.device))
    k, h1, w1 = g1.shape
    if (_aligned(h1), _aligned(w1)) != (h1, w1):
        g1 = F.pad(g1, (0, _aligned(w1) - w1, 0, _aligned(h1) - h1))

    def both(left: torch.Tensor, x: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        y = torch.bmm(x, right.T.expand(k, -1, -1))
        return torch.bmm(left.expand(k, -1, -1), y)

    g = both(rows[0], g1, cols[0])  # G_L (K, rL, cL), zero-padded
    if level < levels - 1:
        g = g - both(rows[3], both(rows[2], g, cols[2]), cols[3])  # G_L - U_L G_{L+1} U_L^T
    return both(rows[1], g, cols[1])[:, :h1, :w1]


def _chunk_size(x: torch.Tensor) -> int:
    """Fields per pyramid pass: on a CPU, chunks that stay in cache; on an accelerator, all at once.

    Results do not depend on it."""
    if x.device.type != "cpu":
        return max(1, x.shape[0])
    return max(1, CPU_CHUNK_PIXELS // (x.shape[-2] * x.shape[-1]))


def band_noise(white: torch.Tensor, band: int, levels: int = LEVELS) -> torch.Tensor:
    """Band ``band`` of each (H, W) field in ``white`` (N, H, W), rescaled to the finest band's RMS.

    The RMS is that of the finest band of the same field. Linear in ``white`` (so scale by SD
    before or after). Computed in ``white``'s dtype."""
    if not 0 <= band < levels:
        raise ValueError(f"band must be in 0..{levels - 1}, got {band}")
    _check_size(white, levels)
    level = levels - 1 - band
    out = []
    for w in white.split(_chunk_size(white)):
        recon, ratio = _band_chunk(w.contiguous(), level, levels)
        out.append(recon if level == 0 else recon * ratio.view(-1, 1, 1))
    return torch.cat(out)


def _fix_out_of_range(
    image: torch.Tensor,
    noise: torch.Tensor,
    sd: torch.Tensor,
    redraw_at: Callable[[int, torch.Tensor], torch.Tensor] | None,
    max_rounds: int,
) -> torch.Tensor:
    """The out-of-range rule for pixels whose ``image + noise`` (1-D tensors) lies outside [0, 1].

    Returns their final values. ``sd`` (1-D, float64) is each pixel's noise SD;
    ``redraw_at(t, which)`` returns the t-th unit-normal redraw value (float64) of the pixels
    ``which`` (indices into these 1-D tensors)."""
    below = (image + noise) < 0
    newp = torch.where(below, EPSILON - noise, (1 - EPSILON) - noise)
    other = torch.where(below, newp > 1, newp < 0)
    result = newp + noise  # image := newp
    if not bool(other.any()):
        return result
    sel = other.nonzero().flatten()
    kept = image[sel]
    newn = noise[sel].clone()
    pending = torch.ones(sel.shape[0], dtype=torch.bool, device=image.device)
    t = 0
    while bool(pending.any()):
        if redraw_at is None:
            raise RuntimeError("out-of-range pixel needs a redraw, but no redraw source was given")
        if t >= max_rounds:
            raise RuntimeError(f"out-of-range redraw did not finish in {max_rounds} rounds")
        idx = pending.nonzero().flatten()
        cand = (redraw_at(t, sel[idx]).to(sd.device, torch.float64) * sd[sel[idx]]).to(noise.dtype)
        trial = kept[idx] + cand
        ok = (trial >= 0) & (trial <= 1)
        newn[idx[ok]] = cand[ok]
        pending[idx[ok]] = False
        t += 1
    result[sel] = kept + newn
    return result


def push_in_range(
    image: torch.Tensor,
    noise: torch.Tensor,
    sd: float,
    redraw: Callable[[int, torch.Tensor], torch.Tensor] | None = None,
    max_rounds: int = 10_000,
) -> torch.Tensor:
    """``image + noise`` (N, H, W) with the study's out-of-range rule (module docstring).

    ``redraw(t, rows)`` returns the t-th redraw field (unit normal) for the images ``rows``
    (a bool mask over the batch), shape (rows.sum(), H, W); it is called only while some pixel
    still needs a redraw.
    """
    noisy = image + noise
    bad = ((noisy < 0) | (noisy > 1)).flatten().nonzero().flatten()
    if bad.numel() == 0:
        return noisy
    hw = noisy.shape[-2] * noisy.shape[-1]
    img, pix = bad // hw, bad % hw

    def redraw_at(t: int, which: torch.Tensor) -> torch.Tensor:
        rows = torch.zeros(noisy.shape[0], dtype=torch.bool, device=noisy.device)
        rows[img[which]] = True
        position = torch.cumsum(rows, 0) - 1
        fields = redraw(t, rows).reshape(int(rows.sum()), hw)  # type: ignore[misc]
        return fields[position[img[which]], pix[which]]

    sds = torch.full((bad.numel(),), float(sd), dtype=torch.float64, device=noisy.device)
    fixed = _fix_out_of_range(
        image.flatten()[bad],
        noise.flatten()[bad],
        sds,
        redraw_at if redraw is not None else None,
        max_rounds,
    )
    return noisy.flatten().index_put((bad,), fixed).view_as(noisy)


def noisy_images(
    base: torch.Tensor,
    band: int,
    sds: Sequence[float],
    whites: Sequence[torch.Tensor | LazyFields],
    noises: Sequence[ImageNoise | _PhiloxCondition | None] | None = None,
    max_rounds: int = 10_000,
    out: Sequence[torch.Tensor] | None = None,
) -> list[torch.Tensor]:
    """``base + noise`` with the out-of-range rule for several SDs of one band at once.

    (N, H, W) contrast-reduced images, one unit-normal (N, H, W) white field per SD (any float
    dtype, any device) -> one (N, H, W) result per SD, in ``base``'s dtype and device (separate
    tensors, so a consumer that frees them one by one lets the allocator reuse the memory).

    Band noise of SD s is ``s * band_noise(white, band)`` (linear), computed chunk by chunk in
    ``base``'s dtype and added to the images in the same pass; only the few out-of-range pixels
    are then treated one by one (redraws from ``noises[s]``).

    ``out``: one (N, H, W) tensor per SD, in ``base``'s dtype and device, to write the results
    into (and return) instead of allocating new ones; a caller that synthesises batch after batch
    reuses them and saves the first-touch cost of fresh memory (large on a CPU).
    """
    if not 0 <= band < LEVELS:
        raise ValueError(f"band must be in 0..{LEVELS - 1}, got {band}")
    if len(whites) != len(sds) or (noises is not None and len(noises) != len(sds)):
        raise ValueError(
            f"need one white field (and generator) per SD: {len(sds)} SDs, {len(whites)} fields"
        )
    _check_size(base, LEVELS)
    n, h, w = base.shape
    level = LEVELS - 1 - band
    if out is not None and (
        len(out) != len(sds)
        or any(
            o.shape != base.shape or o.dtype != base.dtype or o.device != base.device for o in out
        )
    ):
        raise ValueError(
            f"`out` needs {len(sds)} tensors like the images ({tuple(base.shape)}, {base.dtype}, "
            f"{base.device})"
        )
    results = list(out) if out is not None else [base.new_empty((n, h, w)) for _ in sds]
    chunk = _chunk_size(base)
    for s, white in enumerate(whites):
        if tuple(white.shape) != (n, h, w):
            raise ValueError(
                f"white field {s} has shape {tuple(white.shape)}, images are {(n, h, w)}"
            )
    tasks = [(s, i0, min(i0 + chunk, n)) for s in range(len(sds)) for i0 in range(0, n, chunk)]

    def work(task: tuple[int, int, int]) -> None:
        s, i0, i1 = task
        recon, ratio = _band_chunk(
            _white_chunk(whites[s], i0, i1, base.device), level, LEVELS, base.dtype
        )
        scale = (ratio * sds[s]).view(-1, 1, 1)
        res = results[s][i0:i1]
        torch.addcmul(base[i0:i1], recon, scale, out=res)
        low, high = torch.aminmax(res)
        if low < 0 or high > 1:
            noise = noises[s] if noises is not None else None
            _fix_chunk(res, base[i0:i1], recon, scale, sds[s], noise, i0, max_rounds)

    run_chunks(work, tasks, base.device)
    return results


def _fix_chunk(
    res: torch.Tensor,
    image: torch.Tensor,
    recon: torch.Tensor,
    scale: torch.Tensor,
    sd: float,
    noise: ImageNoise | _PhiloxCondition | None,
    first: int,
    max_rounds: int,
) -> None:
    """Apply the out-of-range rule in place to the out-of-range pixels of ``res`` (k, H, W).

    Batch index ``first + i`` for the redraws of field ``i``; ``recon`` may be any view. The
    pixels are found by flat position (``out_of_range_cpu.indices``: a compiled scan on a CPU)
    and read and written through flat views: the same values as three-index gathers."""
    hw, width = res.shape[-2] * res.shape[-1], res.shape[-1]
    flat = res.view(-1) if res.is_contiguous() else None
    pos = (
        out_of_range_cpu.indices(flat)
        if flat is not None
        else ((res < 0) | (res > 1)).flatten().nonzero().flatten()
    )
    img = pos // hw
    values = image.reshape(-1)[pos]
    noise_values = recon.reshape(-1)[pos] * scale.view(-1)[img]

    def redraw_at(t: int, which: torch.Tensor) -> torch.Tensor:
        assert noise is not None
        p = pos[which].cpu().numpy()
        i, r, c = p // hw, (p % hw) // width, p % width
        got = np.empty(len(i))
        for field in np.unique(i):
            here = i == field
            got[here] = noise.redraw_np(first + int(field), t)[r[here], c[here]]
        return torch.from_numpy(got)

    sds = torch.full((pos.numel(),), float(sd), dtype=torch.float64, device=res.device)
    fixed = _fix_out_of_range(
        values, noise_values, sds, redraw_at if noise is not None else None, max_rounds
    )
    if flat is not None:
        flat[pos] = fixed
    else:
        res[img, (pos % hw) // width, pos % width] = fixed


class ImageNoise:
    """Per-(image, condition) generators: the white field first, then one redraw field per round.

    NumPy PCG64 on the CPU, so the numbers are the same on every device; the fields are drawn on
    demand."""

    def __init__(self, seeds: Sequence[int], shape: tuple[int, int]):
        self.generators = [np.random.Generator(np.random.PCG64(int(s))) for s in seeds]
        self.shape = tuple(shape)
        self._fields: list[list[np.ndarray]] = [[] for _ in seeds]  # redraw fields drawn so far

    def white_np(self) -> np.ndarray:
        """The unit-normal (N, H, W) float64 fields, the first draw of each generator.

        Drawn straight into one array, spread over ``torch.get_num_threads()`` threads (NumPy
        releases the GIL while it fills; each generator is used by one thread, so the numbers do
        not depend on it)."""
        out = np.empty((len(self.generators), *self.shape))

        def fill(i: int) -> None:
            self.generators[i].standard_normal(self.shape, out=out[i])

        workers = min(torch.get_num_threads(), len(self.generators))
        if workers <= 1:
            for i in range(len(self.generators)):
                fill(i)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(fill, range(len(self.generators))))
        return out

    def white(self, device: torch.device | str = "cpu") -> torch.Tensor:
        return torch.from_numpy(self.white_np()).to(device)

    def redraw_np(self, index: int, t: int) -> np.ndarray:
        """Image ``index``'s t-th redraw field (H, W)."""
        fields = self._fields[index]
        while len(fields) <= t:
            fields.append(self.generators[index].standard_normal(self.shape))
        return fields[t]

    def redraw(self, t: int, rows: torch.Tensor) -> torch.Tensor:
        """The t-th redraw fields of the images selected by the bool mask ``rows``."""
        idx = torch.nonzero(rows.cpu()).flatten().tolist()
        return torch.from_numpy(np.stack([self.redraw_np(i, t) for i in idx])).to(rows.device)


NOISES = ("philox", "pcg64")


class PhiloxNoise:
    """The ``philox`` fields of images ``names`` in conditions ``conditions`` under ``seed``.

    Per condition through the ``ImageNoise`` interface (``white`` and ``redraw_np``) that the
    synthesis reads.

    ``lazy=False``: all white fields in ONE call on ``device`` (float32, ``repro.probes.philox``;
    what a GPU wants). ``lazy=True``: each condition's white fields are a ``LazyFields`` that
    the synthesis draws chunk by chunk, in its worker threads, into a small buffer that stays in
    cache (what a CPU wants: the batch's fields at once are some 360 MB of fresh memory, whose
    first touch costs as much as drawing them). The values are the same either way."""

    def __init__(
        self,
        seed: int,
        names: Sequence[str],
        conditions: Sequence[str],
        shape: tuple[int, int],
        device: torch.device | str = "cpu",
        *,
        lazy: bool = False,
    ):
        self.seed, self.names, self.shape = int(seed), list(names), (int(shape[0]), int(shape[1]))
        self.conditions = list(conditions)
        self._white: dict[str, torch.Tensor | LazyFields]
        if lazy:
            self._white = {
                c: LazyFields(
                    self.seed, [philox.field_id(n, c) for n in self.names], self.shape, device
                )
                for c in self.conditions
            }
            return
        ids = [philox.field_id(n, c) for c in self.conditions for n in self.names]
        fields = philox.normal_fields(self.seed, ids, self.shape, device=device)
        n = len(self.names)
        self._white = {c: fields[i * n : (i + 1) * n] for i, c in enumerate(self.conditions)}

    def condition(self, condition: str) -> tuple[_PhiloxCondition, torch.Tensor | LazyFields]:
        """(the redraw source, the (N, H, W) white fields) of one condition."""
        return _PhiloxCondition(self, condition), self._white[condition]


class LazyFields:
    """The (N, H, W) float32 white fields of ``ids`` under ``seed``, drawn a chunk at a time.

    Not drawn until a chunk of them is asked for (``chunk``). ``shape`` is that of the whole."""

    def __init__(
        self,
        seed: int,
        ids: Sequence[int],
        shape: tuple[int, int],
        device: torch.device | str = "cpu",
    ):
        self.seed, self.ids, self.device = int(seed), list(ids), torch.device(device)
        self.shape = (len(self.ids), int(shape[0]), int(shape[1]))

    def chunk(self, first: int, last: int, out: torch.Tensor | None = None) -> torch.Tensor:
        """Fields ``first .. last - 1`` (last - first, H, W), drawn by the calling thread alone.

        Drawn into ``out`` when given: a contiguous float32 tensor of that shape."""
        return philox.normal_fields(
            self.seed, self.ids[first:last], self.shape[1:], device=self.device, out=out, threads=1
        )

    def materialize(self) -> torch.Tensor:
        """All fields at once (the eager form)."""
        return philox.normal_fields(self.seed, self.ids, self.shape[1:], device=self.device)


_BUFFERS = threading.local()


def _white_chunk(
    white: torch.Tensor | LazyFields, first: int, last: int, device: torch.device
) -> torch.Tensor:
    """Fields ``first .. last - 1`` of ``white`` on ``device``.

    A lazy one is drawn into this thread's reused buffer (valid until the thread's next draw)."""
    if not isinstance(white, LazyFields):
        return white[first:last].to(device)
    shape = (last - first, *white.shape[1:])
    key = (shape, str(white.device))
    buf = getattr(_BUFFERS, "fields", None)
    if buf is None or buf[0] != key:
        buf = (key, torch.empty(shape, dtype=torch.float32, device=white.device))
        _BUFFERS.fields = buf
    return white.chunk(first, last, out=buf[1]).to(device)


class _PhiloxCondition:
    """One condition's redraw fields (``ImageNoise.redraw_np``), drawn on demand on the CPU."""

    def __init__(self, parent: PhiloxNoise, condition: str):
        self.parent, self.condition = parent, condition

    def redraw_np(self, index: int, t: int) -> np.ndarray:
        """Image ``index``'s t-th redraw field (H, W), float64 (float32 values widened)."""
        p = self.parent
        field = philox.normal_fields(
            p.seed,
            [philox.field_id(p.names[index], self.condition)],
            p.shape,
            stream=philox.WHITE_STREAM + 1 + int(t),
        )
        return field[0].double().numpy()


def model_input(image: torch.Tensor) -> torch.Tensor:
    """(N, H, W) stimulus -> the (N, 3, H, W) float32 model input (three identical channels)."""
    return image.to(torch.float32).unsqueeze(1).expand(-1, 3, -1, -1)


def critical_band_images(
    contrast_reduced: torch.Tensor,
    band: int | None,
    sd: float,
    noise: ImageNoise | None = None,
    white: torch.Tensor | None = None,
) -> torch.Tensor:
    """The stimulus for one condition: (N, H, W) contrast-reduced images -> (N, 3, H, W) float32.

    ``band`` None or ``sd`` 0: no noise. Otherwise ``white`` (unit normal, N x H x W) defaults to
    ``noise.white()``; redraws come from ``noise``. Computed in ``contrast_reduced``'s dtype.
    """
    image = contrast_reduced
    if band is not None and sd != 0:
        if white is None:
            if noise is None:
                raise ValueError(
                    "critical_band_images needs `noise` or `white` for a noisy condition"
                )
            white = noise.white(image.device)
        image = noisy_images(image, band, [sd], [white], [noise])[0]
    return model_input(image)
