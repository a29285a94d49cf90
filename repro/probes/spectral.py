"""Probe stage, spectral bias (torch, batched, device-agnostic): top-1 counts of a model on
low-pass and high-pass filtered images, 11 cut-offs each (22 conditions) plus clean.

The filter is METHODS.md section 3 / ``eval_spectral.py``: ``F = fftshift(fft2(x))``, a square
box mask (``repro.scoring.spectral.box_mask``), ``x' = real(ifft2(ifftshift(F * mask))).clip(0, 1)``.
Each image's spectrum is computed ONCE per batch. The 22 masks use only 11 distinct radii
(the low-pass radius of c equals the high-pass radius of 1 - c), and the high-pass image of a
radius is, by linearity of the inverse transform, ``x - lowpass(x)`` before clipping; the real
part the study keeps is computed with real FFTs (``_hermitian_box``). So a batch costs one
rfft2 and 11 irfft2 instead of 22 complex fft2 and 22 ifft2 (agreement with the literal
per-image NumPy reference: tests/oracle).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch

from repro.base.results import ProbeResult
from repro.base.stats import Count
from repro.datasets.base import ImageSource
from repro.scoring import spectral as scoring

from ._common import Tally, iter_batches, labels_on, resolve_device, to_unit_float

VERSION = "1"
MEASUREMENT = "spectral"


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


def filtered(x: torch.Tensor) -> Iterator[tuple[str, torch.Tensor]]:
    """All 22 filtered versions of the float batch ``x`` (N, C, S, S) in [0, 1], as
    (condition name, tensor), grouped by radius (not in ``CUTOFFS`` order).

    Equal (up to float rounding; tests/oracle) to the study's per-image
    ``real(ifft2(ifftshift(fftshift(fft2(x)) * mask))).clip(0, 1)``: one ``rfft2`` per image,
    one ``irfft2`` per distinct radius with the Hermitian-symmetrised box, and the high-pass
    image of a radius as ``x - lowpass`` (linearity), each clipped.
    """
    if x.ndim != 4 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"spectral filter needs square images (N, C, S, S), got {tuple(x.shape)}")
    size = x.shape[-1]
    spectrum = torch.fft.rfft2(x)
    for r, members in sorted(_by_radius(size).items()):
        if r == 0:
            low = torch.zeros_like(x)
        else:
            mask = _hermitian_box(size, r, x.device).to(x.dtype)
            low = torch.fft.irfft2(spectrum * mask, s=(size, size))
        for name, kind in members:
            out = low if kind == "low" else x - low
            yield name, out.clamp(0, 1)


def run(
    model: torch.nn.Module,
    source: ImageSource,
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 64,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> ProbeResult:
    """Top-1 counts on clean and the 22 filtered conditions, the LFC/HFC ratios and the low-
    and high-frequency biases. Deterministic: ``seed`` is accepted for the common probe
    signature and not used (the result records seed None)."""
    dev = resolve_device(device)
    model = model.to(dev).eval()
    tally = Tally(["clean"] + [name for name, _, _ in scoring.conditions()])
    with torch.no_grad():
        for batch in iter_batches(source, batch_size, progress):
            labels = labels_on(batch, source, dev)
            x = to_unit_float(batch.images, dev)
            tally.add("clean", model(x), labels)
            for name, xf in filtered(x):
                tally.add(name, model(xf), labels)
    counts = tally.counts()
    result = ProbeResult(MEASUREMENT, VERSION, None, counts)
    clean = Count(counts[0].k, counts[0].n)
    if clean.k > 0:
        ratios = scoring.lfc_hfc_ratios({c.condition: Count(c.k, c.n) for c in counts[1:]}, clean)
        result.values.update(ratios)
        result.values["low_frequency_bias"] = scoring.low_frequency_bias(ratios)
        result.values["high_frequency_bias"] = scoring.high_frequency_bias(ratios)
    else:
        result.values.update({"low_frequency_bias": None, "high_frequency_bias": None})
    return result
