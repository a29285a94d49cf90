"""Probe stage, spectral bias (torch, batched, device-agnostic): the low- and high-pass stimuli.

The stimuli of the spectral measurements: low-pass and high-pass filtered images, 11 cut-offs each
(22 conditions) plus clean (``maker``: what the probe loop, ``repro.measurements.loop``, shows the
model of each batch).

The filter is METHODS.md section 3 / ``eval_spectral.py``: ``F = fftshift(fft2(x))``, a square
box mask (``repro.scoring.spectral.box_mask``), ``x' = real(ifft2(ifftshift(F * mask))).clip(0,
1)``. Each image's spectrum is computed ONCE per batch. The 22 masks use only 11 distinct radii
(the low-pass radius of c equals the high-pass radius of 1 - c), and the high-pass image of a
radius is, by linearity of the inverse transform, ``x - lowpass(x)`` before clipping; the real
part the study keeps is computed with real FFTs (``_hermitian_box``). So a batch costs one
rfft2 and 11 irfft2 instead of 22 complex fft2 and 22 ifft2 (agreement with the literal
per-image NumPy reference: tests/oracle).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

from repro.datasets.base import ImageBatch
from repro.scoring import spectral as scoring

from ._common import run_chunks, to_unit_float

VERSION = "1"


def _by_radius(size: int) -> dict[int, list[tuple[str, str]]]:
    groups: dict[int, list[tuple[str, str]]] = {}
    for name, kind, cutoff in scoring.conditions():
        groups.setdefault(scoring.radius(size, cutoff, kind), []).append((name, kind))
    return groups


def _hermitian_box(size: int, r: int, device: torch.device) -> torch.Tensor:
    """The low-pass box of radius ``r`` made Hermitian-symmetric, on the rfft2 half-spectrum.

    The study's box (shifted rows/columns ``[half - r, half + r)``) is frequencies
    ``k in [-r, r - 1]`` on each axis: not symmetric, so ``ifft2`` of the masked spectrum is
    complex and the study keeps its real part. For a real image that real part is exactly the
    inverse transform with the symmetrised mask ``(m(k) + m(-k)) / 2``, which ``irfft2`` can
    invert from half the spectrum.
    """
    k = torch.fft.fftfreq(size, d=1.0 / size).round().long()  # integer frequency of each index
    a = ((k >= -r) & (k <= r - 1)).double()
    b = a[(-torch.arange(size)) % size]  # b(k) = a(-k)
    cols = size // 2 + 1
    mask = (torch.outer(a, a[:cols]) + torch.outer(b, b[:cols])) / 2
    return mask.to(device)


@functools.lru_cache(maxsize=64)
def _box_region(
    size: int, r: int, device: torch.device, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """The half-spectrum rows where the Hermitian box of radius ``r`` is non-zero, and the box.

    The rows of frequencies -r .. r, and the box on those rows and its first r + 1 columns
    (cached per shape, radius, device and dtype: the masks are the same for every batch)."""
    rows = torch.tensor(sorted({k % size for k in range(-r, r + 1)}), dtype=torch.long)
    mask = _hermitian_box(size, r, torch.device("cpu"))[rows][:, : r + 1]
    assert int(torch.count_nonzero(_hermitian_box(size, r, torch.device("cpu")))) == int(
        torch.count_nonzero(mask)
    )
    return rows.to(device), mask.to(device=device, dtype=dtype)


#: bytes of half-spectrum per inverse transform on a CPU (see ``_images_per_transform``)
CPU_TRANSFORM_BYTES = 1 << 20


def _images_per_transform(x: torch.Tensor) -> int:
    """Images per transform on a CPU (at least one; one at 224 px).

    The inverse transform copies its input first (it overwrites it): a whole batch's copy (some
    40 MB at 64 x 3 x 224 px) is fresh memory every time, whose first touch costs more than the
    transform, while a small one is served from memory the previous call freed and stays in
    cache; and the chunks go to single-threaded workers (``run_chunks``). Each image is
    transformed on its own either way, so the values do not depend on it
    (tests/unit/test_spectral_probe.py)."""
    per_image = x[0].numel() // x.shape[-1] * (x.shape[-1] // 2 + 1) * 2 * x.element_size()
    return max(1, CPU_TRANSFORM_BYTES // per_image)


def filtered(x: torch.Tensor, *, reuse: bool = False) -> Iterator[tuple[str, torch.Tensor]]:
    """All 22 filtered versions of the float batch ``x`` (N, C, S, S) in [0, 1].

    They come as (condition name, tensor), grouped by radius (not in ``CUTOFFS`` order).

    Equal (up to float rounding; tests/oracle) to the study's per-image
    ``real(ifft2(ifftshift(fftshift(fft2(x)) * mask))).clip(0, 1)``: one ``rfft2`` per image,
    one ``irfft2`` per distinct radius with the Hermitian-symmetrised box, and the high-pass
    image of a radius as ``x - lowpass`` (linearity), each clipped.

    The box is applied to its non-zero rows and columns only (its values are 0, 1/2 and 1, so
    the products are exact and the masked spectrum is the same as the full product, up to the
    sign of zeros). ``reuse=True`` writes every condition into the same few buffers: a yielded
    image is then valid only until the next one is requested (what ``maker`` does: each goes
    through the model before the next is asked for); it saves allocating and first touching
    fresh memory for each of the 22 (on a CPU, a large part of the cost).
    """
    if x.ndim != 4 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"spectral filter needs square images (N, C, S, S), got {tuple(x.shape)}")
    size, n = x.shape[-1], x.shape[0]
    step = _images_per_transform(x) if x.device.type == "cpu" else max(1, n)
    chunks = [(i, min(i + step, n)) for i in range(0, n, step)]
    spectrum = torch.empty(
        (*x.shape[:-1], size // 2 + 1),
        dtype=torch.complex64 if x.dtype == torch.float32 else torch.complex128,
        device=x.device,
    )
    masked = torch.zeros_like(spectrum)
    low_raw = torch.empty_like(x)
    kept: dict[str, torch.Tensor] = {}

    def buffer(kind: str) -> torch.Tensor:
        if not reuse:
            return torch.empty_like(x)
        if kind not in kept:
            kept[kind] = torch.empty_like(x)
        return kept[kind]

    def forward(chunk: tuple[int, int]) -> None:
        torch.fft.rfft2(x[chunk[0] : chunk[1]], out=spectrum[chunk[0] : chunk[1]])

    run_chunks(forward, chunks, x.device)
    for r, members in sorted(_by_radius(size).items()):  # growing radii: each box covers the last
        outs = [(name, kind, buffer(kind)) for name, kind in members]
        region = _box_region(size, r, x.device, x.dtype) if r else None

        def one(chunk: tuple[int, int], r: int = r, region=region, outs=outs) -> None:  # type: ignore[no-untyped-def]
            i0, i1 = chunk
            low = low_raw[i0:i1]
            if region is None:
                low.zero_()
            else:
                rows, mask = region
                part = masked[i0:i1]
                part[..., rows, : r + 1] = spectrum[i0:i1, ..., rows, : r + 1] * mask
                torch.fft.irfft2(part, s=(size, size), out=low)
            for _, kind, out in outs:
                if kind == "low":
                    torch.clamp(low, 0, 1, out=out[i0:i1])
                else:
                    torch.sub(x[i0:i1], low, out=out[i0:i1]).clamp_(0, 1)

        run_chunks(one, chunks, x.device)
        for name, _, out in outs:
            yield name, out


def maker(**_: Any) -> tuple[str, Callable[..., Iterator[tuple[str, torch.Tensor]]]]:
    """The probe loop's stimuli: each batch as it is, then its 22 filtered versions.

    For ``repro.measurements.loop``: the batch as it is (``clean``), then its 22 filtered
    versions, buffers reused (each goes through the model before the next is asked for).
    Deterministic: the measurement has no seed."""

    def make(
        batch: ImageBatch, part: str | None, *, device: torch.device, **_: Any
    ) -> Iterator[tuple[str, torch.Tensor]]:
        x = to_unit_float(batch.images, device)
        yield "clean", x
        yield from filtered(x, reuse=True)

    return VERSION, make
