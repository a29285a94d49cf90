"""Probe stage, critical band (torch, batched, device-agnostic): top-1 counts of a model on
grayscale, contrast-reduced images with band-limited noise, 29 conditions (SD 0 once, then
7 bands x SD 0.02, 0.04, 0.08, 0.16), as METHODS.md section 3 / ``eval_criticalband.py``.
The stimulus maths is in ``repro.probes.noise``; the conditions, thresholds and the Gaussian fit
are in ``repro.scoring.critical_band``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from repro.base.errors import ConfigError
from repro.base.results import ProbeResult
from repro.datasets.base import ImageSource
from repro.scoring.critical_band import CLEAN, N_BANDS, conditions, score

from . import noise as nz
from ._common import Tally, image_seed, iter_batches, labels_on, resolve_device

VERSION = "4"  # 4: noise from the counter-based Philox generator (noise="philox"); 3: pyramid by strided (transposed) convolutions and composite operators (stimuli move by rounding, max 1.8e-7 vs the float64 oracle); 2: float32 synthesis
#: the probe version each noise generator gives (``noise="pcg64"`` reproduces version 3 bitwise)
VERSIONS = {"philox": VERSION, "pcg64": "3"}
MEASUREMENT = "critical_band"


def stimuli(
    images: torch.Tensor,
    names: list[str],
    seed: int,
    device: torch.device,
    dtype: torch.dtype = torch.float32,
    *,
    reuse: bool = False,
    noise: str = "philox",
) -> Iterator[tuple[str, torch.Tensor]]:
    """Yield (condition name, (N, 3, H, W) float32 stimulus) for all 29 conditions of one batch
    of uint8 RGB crops; the noise of each image and condition is keyed by (seed, name,
    condition) alone. ``noise``: ``philox`` (all fields of the batch drawn in one call on
    ``device``; on a CPU chunk by chunk as the synthesis needs them, ``PhiloxNoise``) or ``pcg64`` (version 3's per-image NumPy generators; ``repro.probes.noise``).

    ``dtype`` is the precision of the synthesis: float32 by default (the model input is float32;
    it agrees with the float64 literal oracle to a few 1e-7, see tests/unit/oracle), float64 to
    follow the study's NumPy arithmetic more closely. ``reuse``: see ``synthesize``."""
    base = nz.reduce_contrast(nz.grayscale(images.to(device)), dtype=dtype)
    shape = (int(base.shape[-2]), int(base.shape[-1]))

    if noise == "philox":
        fields = nz.PhiloxNoise(seed, names, [c for c, b, _ in conditions() if b is not None], shape, device,
                                lazy=torch.device(device).type == "cpu")
        yield from synthesize(base, fields.condition, reuse=reuse)
        return
    if noise != "pcg64":
        raise ConfigError(f"noise: expected one of {', '.join(nz.NOISES)}, got {noise!r}")

    def draw(cond: str) -> tuple[nz.ImageNoise, np.ndarray]:
        gen = nz.ImageNoise([image_seed(seed, n, cond) for n in names], shape)
        return gen, gen.white_np()

    yield from synthesize(base, draw, reuse=reuse)


def synthesize(
    base: torch.Tensor,
    noise_for: Callable[[str], tuple[Any, np.ndarray | torch.Tensor | nz.LazyFields]],
    *,
    reuse: bool = False,
) -> Iterator[tuple[str, torch.Tensor]]:
    """The 29 stimuli of contrast-reduced images ``base`` (N, H, W), in ``conditions()`` order,
    given each noisy condition's redraw source and unit-normal white fields (``noise_for(name)``:
    a NumPy array, a tensor on any device, or ``LazyFields`` drawn chunk by chunk as needed).
    The four SDs of a band are synthesised together, in ``base``'s dtype.

    ``reuse=True`` writes every band into the same four buffers: a yielded stimulus is then
    valid only until the next band's first stimulus is requested (what ``run`` does: each
    stimulus goes through the model before the next is asked for). It saves allocating, and on
    a CPU first touching, 4 fresh (N, H, W) tensors per band. Keep the default to hold results."""
    yield CLEAN, nz.model_input(base)
    buffers: list[torch.Tensor] | None = None
    for band in range(N_BANDS):
        conds = [(cond, sd) for cond, b, sd in conditions() if b == band]
        drawn = [noise_for(cond) for cond, _ in conds]
        whites = [white if isinstance(white, nz.LazyFields) else torch.as_tensor(white) for _, white in drawn]
        images = nz.noisy_images(
            base, band, [sd for _, sd in conds], whites, [noise for noise, _ in drawn], out=buffers
        )
        if reuse:
            buffers = images
        for s, (cond, _) in enumerate(conds):
            yield cond, nz.model_input(images[s])


def run(
    model: torch.nn.Module,
    source: ImageSource,
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 64,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    noise: str = "philox",
) -> ProbeResult:
    """Top-1 counts per condition, plus thresholds and the fitted bandwidth, centre frequency and
    peak noise sensitivity (absolute and ``_norm``; None where the fit is undefined). The
    headline ``value`` is ``cf_norm``, the centre frequency the paper correlates. ``noise``
    selects the generator (``VERSIONS``: the result records the version it gives)."""
    if noise not in VERSIONS:
        raise ConfigError(f"noise: expected one of {', '.join(VERSIONS)}, got {noise!r}")
    dev = resolve_device(device)
    model = model.to(dev).eval()
    tally = Tally([name for name, _, _ in conditions()])
    with torch.no_grad():
        for batch in iter_batches(source, batch_size, progress):
            labels = labels_on(batch, source, dev)
            images = torch.from_numpy(np.ascontiguousarray(batch.images))
            for cond, x in stimuli(images, batch.names, seed, dev, reuse=True, noise=noise):
                tally.add(cond, model(x), labels)
    counts = tally.counts()
    return score(ProbeResult(MEASUREMENT, VERSIONS[noise], int(seed), counts))
