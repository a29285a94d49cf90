"""Probe stage, critical-band stimuli (torch, batched, device-agnostic): grayscale and contrast
reduction of the crops, band-limited noise from a Laplacian pyramid, and the out-of-range rule.

Exactly METHODS.md section 3 / the study's ``eval_criticalband.py`` (which uses pyrtools):

* grayscale as PIL ``convert("L")``: ``L = (19595 R + 38470 G + 7471 B + 2**15) >> 16``, PIL's
  fixed-point form of ``R*299/1000 + G*587/1000 + B*114/1000`` (identical to PIL on all 2**24
  colours, checked once; 2.2M of them in the tests), then ``/255`` and ``x = (x - mean(x)) * 0.2 + 0.449`` (mean per image);
* Laplacian pyramid as pyrtools ``LaplacianPyramid(noise)``: filter ``binom5`` =
  ``sqrt(2) * [1, 4, 6, 4, 1] / 16`` (pyrtools' unnormalised scaling; the scale cancels in
  every band), edges ``reflect1`` (reflect about the edge pixel, i.e. ``torch`` ``reflect``
  padding), 7 levels at 224 px (224, 112, 56, 28, 14, 7, 4; 6 band-pass levels and the
  low-pass residual). Reduce: separable correlation along the width then the height, even
  samples kept. Expand: zeros inserted at odd indices, then separable convolution along the
  height then the width (both checked against pyrtools 1.1.1's ``corrDn`` / ``upConv``
  operator matrices; ``reduce_matrix`` / ``expand_matrix`` are those matrices);
* band ``f`` (0 = coarsest, 6 = finest) is the reconstruction from pyramid level ``6 - f``
  alone, rescaled so its RMS equals the RMS of the finest level's reconstruction of the SAME
  noise field (``recon * rms(first_recon) / rms(recon)``);
* out-of-range rule (the study's per-pixel loop, vectorised; every pixel is independent because
  the loop reads the unmodified noisy image): a pixel with ``image + noise < 0`` gets
  ``image := 0.1 - noise`` (so the result is 0.1), one with ``image + noise > 1`` gets
  ``image := 0.9 - noise`` (result 0.9); if that new image value would itself be out of range
  on the other side (``0.1 - noise > 1`` or ``0.9 - noise < 0``) the image pixel is kept and the
  noise pixel is redrawn as ``N(0, 1) * SD`` (white, not band-limited, not rescaled: literally
  what the study does) until ``image + noise`` lies in [0, 1]. Pixels exactly at 0 or 1 are in
  range. With the study's SDs (<= 0.16) a redraw needs |noise| > 0.9, which practically never
  happens; tests force it with SD 1.

Randomness: every (image, condition) has its own NumPy PCG64 generator on the CPU, seeded from
(run seed, image name, condition) (``repro.probes._common.image_seed``). It draws the white
field first, then one full (H, W) field per redraw round; pixel (i, j)'s t-th redraw is the
t-th redraw field at (i, j). So the noise depends neither on batch size, device, worker count
nor image order, and a reference given the same fields reproduces it exactly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

LEVELS = 7
N_BANDS = 7
CONTRAST = 0.2
GRAY_MEAN = 0.449
EPSILON = 0.1
NOISE_SDS: tuple[float, ...] = (0.0, 0.02, 0.04, 0.08, 0.16)
CPU_CHUNK = 16  # images per pyramid pass on a CPU (cache-sized; results do not depend on it)

#: pyrtools ``named_filter("binom5")``: sqrt(2) * binomial(4) / 16
BINOM5: tuple[float, ...] = tuple(math.sqrt(2) * c / 16 for c in (1, 4, 6, 4, 1))


def band_center(band: int) -> float:
    """Nominal centre frequency of band ``f`` in cycles/image: 1.75 * 2**f."""
    return 1.75 * 2.0**band


def grayscale(images: torch.Tensor) -> torch.Tensor:
    """uint8 RGB (N, 3, H, W) -> uint8 (N, H, W), bit-identical to PIL ``convert("L")``."""
    if images.dtype != torch.uint8 or images.ndim != 4 or images.shape[1] != 3:
        raise ValueError(f"grayscale needs uint8 (N, 3, H, W), got {images.dtype} {tuple(images.shape)}")
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
    """The (ceil(n/2), n) matrix of pyrtools ``corrDn(binom5, 'reflect1', step 2)`` on one axis:
    correlate with the filter (reflected edges), keep even samples."""
    m = (n + 1) // 2
    d = np.zeros((m, n))
    for j in range(m):
        for t, c in enumerate(BINOM5):
            d[j, _reflect(2 * j + t - 2, n)] += c
    return d


def expand_matrix(n: int, m: int) -> np.ndarray:
    """The (n, m) matrix of pyrtools ``upConv(binom5, 'reflect1', step 2)`` to length ``n``:
    samples placed at even indices, zeros between, convolved with the filter (reflected edges)."""
    u = np.zeros((n, m))
    for i in range(n):
        for t, c in enumerate(BINOM5):
            k = _reflect(i + t - 2, n)
            if k % 2 == 0 and k // 2 < m:
                u[i, k // 2] += c
    return u


@functools.lru_cache(maxsize=16)
def _operators_np(n: int, levels: int) -> tuple[list[int], list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Per axis of length ``n``: level sizes, the reduce matrices D_l, expand matrices U_l and
    the composite expand-to-full-size matrices B_l = U_0 U_1 ... U_{l-1} (B_0 = identity)."""
    sizes = [n]
    for _ in range(levels - 1):
        sizes.append((sizes[-1] + 1) // 2)
    if sizes[-2] < len(BINOM5):
        raise ValueError(
            f"a {levels}-level pyramid needs images of at least {len(BINOM5) * 2 ** (levels - 2)} px; got {n}"
        )
    downs = [reduce_matrix(sizes[i]) for i in range(levels - 1)]
    ups = [expand_matrix(sizes[i], sizes[i + 1]) for i in range(levels - 1)]
    full = [np.eye(n)]
    for u in ups:
        full.append(full[-1] @ u)
    return sizes, downs, ups, full


def _reflect_pad2(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Pad 2 samples on both ends of ``dim`` by reflection about the edge samples (reflect1)."""
    n = x.shape[dim]
    head = x.narrow(dim, 1, 2).flip(dim)  # x[2], x[1]
    tail = x.narrow(dim, n - 3, 2).flip(dim)  # x[n-2], x[n-3]
    return torch.cat([head, x, tail], dim=dim)


def _reduce_axis(x: torch.Tensor, dim: int) -> torch.Tensor:
    """pyrtools corrDn(binom5, reflect1, step 2) along ``dim``: out[j] = sum_t f[t] x[2j + t - 2]."""
    m = (x.shape[dim] + 1) // 2
    xp = _reflect_pad2(x, dim)
    out = xp.narrow(dim, 0, 2 * m - 1)[_stride2(dim, x.ndim)] * BINOM5[0]
    for t in range(1, 5):
        out.add_(xp.narrow(dim, t, 2 * m - 1)[_stride2(dim, x.ndim)], alpha=BINOM5[t])
    return out


def _stride2(dim: int, ndim: int) -> tuple[slice, ...]:
    index = [slice(None)] * ndim
    index[dim] = slice(None, None, 2)
    return tuple(index)


def _expand_axis(x: torch.Tensor, n: int, dim: int) -> torch.Tensor:
    """pyrtools upConv(binom5, reflect1, step 2) along ``dim`` to length ``n`` (polyphase form).

    The zero-stuffed signal u (u[2p] = x[p], odd samples 0), reflected about its edge samples,
    is convolved with the filter: even outputs use taps 0, 2, 4 on x[p-1], x[p], x[p+1]; odd
    outputs taps 1, 3 on x[p], x[p+1]. The reflection of u gives x[-1] = x[1] and, past the
    end, x[m] = x[m-1] for even ``n`` (u[n] = u[n-2]) or x[m-2] for odd ``n`` (u[n+1] = u[n-3]).
    """
    m = x.shape[dim]
    last = x.narrow(dim, m - 1 if n % 2 == 0 else m - 2, 1)
    ext = torch.cat([x.narrow(dim, 1, 1), x, last], dim=dim)  # x[-1], x[0..m-1], x[m]
    f0, f1, f2, f3, f4 = BINOM5
    even = ext.narrow(dim, 0, m) * f0
    even.add_(x, alpha=f2).add_(ext.narrow(dim, 2, m), alpha=f4)
    n_odd = n // 2
    odd = x.narrow(dim, 0, n_odd) * f1
    odd.add_(ext.narrow(dim, 2, n_odd), alpha=f3)
    if n_odd < m:  # odd n: one more even sample than odd ones
        odd = torch.cat([odd, torch.zeros_like(odd.narrow(dim, 0, 1))], dim=dim)
    out = torch.stack([even, odd], dim=dim + 1 if dim >= 0 else dim)
    shape = list(x.shape)
    shape[dim] = 2 * m
    out = out.reshape(shape)
    return out.narrow(dim, 0, n)


def _reduce(x: torch.Tensor) -> torch.Tensor:
    """One pyramid reduction of (N, H, W): along the width, then the height (as pyrtools)."""
    return _reduce_axis(_reduce_axis(x, -1), -2)


def _expand(x: torch.Tensor, size: tuple[int, ...]) -> torch.Tensor:
    """One pyramid expansion of (N, h, w) to (N, H, W): along the height, then the width."""
    return _expand_axis(_expand_axis(x, size[0], -2), size[1], -1)


def _rms(x: torch.Tensor) -> torch.Tensor:
    return x.square().mean(dim=(-2, -1), keepdim=True).sqrt()


def band_noise(white: torch.Tensor, band: int, levels: int = LEVELS) -> torch.Tensor:
    """Band ``band`` of each (H, W) field in ``white`` (N, H, W), rescaled to the RMS of the
    finest band of the same field. Linear in ``white`` (so scale by SD before or after).

    Level ``L = 6 - band`` of the Laplacian pyramid is ``G_L - expand(G_{L+1})`` (the low-pass
    residual ``G_6`` for band 0), reconstructed alone by expanding it L times: what pyrtools'
    ``recon_pyr(levels=L)`` computes (its extra expansions of all-zero levels are skipped).
    Reduce and expand are applied as strided slices (flop-optimal, no zero multiplications).
    """
    if not 0 <= band < levels:
        raise ValueError(f"band must be in 0..{levels - 1}, got {band}")
    if white.ndim != 3:
        raise ValueError(f"band_noise needs (N, H, W) fields, got {tuple(white.shape)}")
    if white.device.type == "cpu" and white.shape[0] > CPU_CHUNK:
        # many passes over the data: on a CPU, chunks that stay in cache are ~3x faster
        return torch.cat([band_noise(c, band, levels) for c in white.split(CPU_CHUNK)])
    _operators_np(white.shape[-2], levels)  # validates the size (raises for too small images)
    _operators_np(white.shape[-1], levels)
    level = levels - 1 - band
    gauss = [white, _reduce(white)]
    sizes = [tuple(white.shape[-2:]), tuple(gauss[1].shape[-2:])]
    finest = white - _expand(gauss[1], sizes[0])
    if level == 0:
        return finest
    for _ in range(1, min(level + 1, levels - 1)):
        gauss.append(_reduce(gauss[-1]))
        sizes.append(tuple(gauss[-1].shape[-2:]))
    coeff = gauss[level] if level == levels - 1 else gauss[level] - _expand(gauss[level + 1], sizes[level])
    for lev in range(level - 1, -1, -1):
        coeff = _expand(coeff, sizes[lev])
    return coeff * (_rms(finest) / _rms(coeff))


def push_in_range(
    image: torch.Tensor,
    noise: torch.Tensor,
    sd: float,
    redraw: Callable[[int, torch.Tensor], torch.Tensor] | None = None,
    max_rounds: int = 10_000,
) -> torch.Tensor:
    """``image + noise`` with the study's out-of-range rule (module docstring).

    ``redraw(t, rows)`` returns the t-th redraw field (unit normal) for the images ``rows``
    (a bool mask over the batch), shape (rows.sum(), H, W); it is called only while some pixel
    still needs a redraw.
    """
    noisy = image + noise
    below, above = noisy < 0, noisy > 1
    if not (below.any() or above.any()):
        return noisy
    newp = torch.where(below, EPSILON - noise, (1 - EPSILON) - noise)
    other = (below & (newp > 1)) | (above & (newp < 0))
    image = torch.where((below | above) & ~other, newp, image)
    t = 0
    while other.any():
        if redraw is None:
            raise RuntimeError("out-of-range pixel needs a redraw, but no redraw source was given")
        if t >= max_rounds:
            raise RuntimeError(f"out-of-range redraw did not finish in {max_rounds} rounds")
        rows = other.flatten(1).any(dim=1)
        cand = torch.zeros_like(noise)
        cand[rows] = redraw(t, rows).to(noise.dtype) * sd
        trial = image + cand
        take = other & (trial >= 0) & (trial <= 1)
        noise = torch.where(take, cand, noise)
        other = other & ~take
        t += 1
    return image + noise


class ImageNoise:
    """Per-(image, condition) generators (NumPy PCG64 on the CPU, so the numbers are the same on
    every device): the white field first, then one redraw field per round, on demand."""

    def __init__(self, seeds: Sequence[int], shape: tuple[int, int]):
        self.generators = [np.random.Generator(np.random.PCG64(int(s))) for s in seeds]
        self.shape = tuple(shape)
        self._fields: list[list[np.ndarray]] = [[] for _ in seeds]  # redraw fields drawn so far

    def white_np(self) -> np.ndarray:
        """The unit-normal (N, H, W) float64 fields (the first draw of each generator)."""
        return np.stack([g.standard_normal(self.shape) for g in self.generators])

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


def critical_band_images(
    contrast_reduced: torch.Tensor,
    band: int | None,
    sd: float,
    noise: ImageNoise | None = None,
    white: torch.Tensor | None = None,
) -> torch.Tensor:
    """The stimulus for one condition: (N, H, W) contrast-reduced images -> (N, 3, H, W) float32.

    ``band`` None or ``sd`` 0: no noise. Otherwise ``white`` (unit normal, N x H x W) defaults to
    ``noise.white()``; redraws come from ``noise``.
    """
    image = contrast_reduced
    if band is not None and sd != 0:
        if white is None:
            if noise is None:
                raise ValueError("critical_band_images needs `noise` or `white` for a noisy condition")
            white = noise.white(image.device)
        sf = band_noise(white.to(image.dtype) * sd, band)
        image = push_in_range(image, sf, sd, noise.redraw if noise is not None else None)
    return image.to(torch.float32).unsqueeze(1).expand(-1, 3, -1, -1)
