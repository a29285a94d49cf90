"""Probe stage, critical band (torch, batched, device-agnostic): the critical-band stimuli.

The stimuli of the critical-band measurements: grayscale, contrast-reduced images with band-limited
noise, 29 conditions (SD 0 once, then 7 bands x SD 0.02, 0.04, 0.08, 0.16), as METHODS.md section
3 / ``eval_criticalband.py`` (``maker``: what the probe loop, ``repro.measurements.loop``, shows the
model of each batch). The stimulus maths is in ``repro.probes.noise``; the conditions, thresholds
and the Gaussian fit are in ``repro.scoring.critical_band``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from repro.base.errors import ConfigError
from repro.datasets.base import ImageBatch
from repro.scoring.critical_band import CLEAN, N_BANDS, conditions

from . import noise as nz
from ._common import image_seed

# 4: noise from the counter-based Philox generator (noise="philox"); 3: pyramid by strided
# (transposed) convolutions and composite operators (stimuli move by rounding, max 1.8e-7 vs the
# float64 oracle); 2: float32 synthesis
VERSION = "4"
#: the probe version each noise generator gives (``noise="pcg64"`` reproduces version 3 bitwise)
VERSIONS = {"philox": VERSION, "pcg64": "3"}


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
    """Yield (condition name, (N, 3, H, W) float32 stimulus) for all 29 conditions of one batch.

    The batch is uint8 RGB crops; the noise of each image and condition is keyed by
    (seed, name, condition) alone. ``noise``: ``philox`` (all fields of the batch drawn in one call
    on ``device``; on a CPU chunk by chunk as the synthesis needs them, ``PhiloxNoise``) or
    ``pcg64`` (version 3's per-image NumPy generators; ``repro.probes.noise``).

    ``dtype`` is the precision of the synthesis: float32 by default (the model input is float32;
    it agrees with the float64 literal oracle to a few 1e-7, see tests/unit/oracle), float64 to
    follow the study's NumPy arithmetic more closely. ``reuse``: see ``synthesize``."""
    base = nz.reduce_contrast(nz.grayscale(images.to(device)), dtype=dtype)
    shape = (int(base.shape[-2]), int(base.shape[-1]))

    if noise == "philox":
        fields = nz.PhiloxNoise(
            seed,
            names,
            [c for c, b, _ in conditions() if b is not None],
            shape,
            device,
            lazy=torch.device(device).type == "cpu",
        )
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
    """The 29 stimuli of contrast-reduced images ``base`` (N, H, W), in ``conditions()`` order.

    They are made from each noisy condition's redraw source and unit-normal white fields
    (``noise_for(name)``: a NumPy array, a tensor on any device, or ``LazyFields`` drawn chunk by
    chunk as needed). The four SDs of a band are synthesised together, in ``base``'s dtype.

    ``reuse=True`` writes every band into the same four buffers: a yielded stimulus is then
    valid only until the next band's first stimulus is requested (what ``maker``'s do: each
    stimulus goes through the model before the next is asked for). It saves allocating, and on
    a CPU first touching, 4 fresh (N, H, W) tensors per band. Keep the default to hold results."""
    yield CLEAN, nz.model_input(base)
    buffers: list[torch.Tensor] | None = None
    for band in range(N_BANDS):
        conds = [(cond, sd) for cond, b, sd in conditions() if b == band]
        drawn = [noise_for(cond) for cond, _ in conds]
        whites = [
            white if isinstance(white, nz.LazyFields) else torch.as_tensor(white)
            for _, white in drawn
        ]
        images = nz.noisy_images(
            base, band, [sd for _, sd in conds], whites, [noise for noise, _ in drawn], out=buffers
        )
        if reuse:
            buffers = images
        for s, (cond, _) in enumerate(conds):
            yield cond, nz.model_input(images[s])


def maker(
    *, seed: int, noise: str = "philox", **_: Any
) -> tuple[str, Callable[..., Iterator[tuple[str, torch.Tensor]]]]:
    """The probe loop's stimuli (``repro.measurements.loop``): the 29 conditions of each batch.

    They are synthesised on the loop's device with buffers reused from band to band (each
    stimulus goes through the model before the next is asked for). ``noise`` selects the
    generator, and with it the version (``VERSIONS``)."""
    if noise not in VERSIONS:
        raise ConfigError(f"noise: expected one of {', '.join(VERSIONS)}, got {noise!r}")

    def make(
        batch: ImageBatch, part: str | None, *, device: torch.device, **_: Any
    ) -> Iterator[tuple[str, torch.Tensor]]:
        images = torch.from_numpy(np.ascontiguousarray(batch.images))
        yield from stimuli(images, batch.names, seed, device, reuse=True, noise=noise)

    return VERSIONS[noise], make


def one_condition(
    images: torch.Tensor, names: list[str], condition: str, seed: int, device: torch.device
) -> torch.Tensor:
    """Our stimuli of ``condition`` for uint8 RGB ``images``.

    Exactly what ``stimuli`` yields for that condition (float32 synthesis, the Philox field of
    (seed, image, condition))."""
    spec = {name: (band, sd) for name, band, sd in conditions()}
    if condition not in spec:
        raise ValueError(f"unknown critical-band condition {condition!r}")
    band, sd = spec[condition]
    base = nz.reduce_contrast(nz.grayscale(images.to(device)), dtype=torch.float32)
    if band is None:
        return nz.model_input(base)
    shape = (int(base.shape[-2]), int(base.shape[-1]))
    gen, white = nz.PhiloxNoise(seed, names, [condition], shape, device).condition(condition)
    return nz.model_input(nz.noisy_images(base, band, [sd], [white], [gen])[0])


def one_condition_maker(
    *, seed: int, **_: Any
) -> tuple[str, Callable[..., Iterator[tuple[str, torch.Tensor]]]]:
    """The probe loop's stimuli of one condition per batch, the batch's part (``one_condition``).

    ``repro.measurements.loop.run_matched`` regroups the images by their condition."""

    def make(
        batch: ImageBatch, part: str, *, device: torch.device, **_: Any
    ) -> Iterator[tuple[str, torch.Tensor]]:
        yield (
            part,
            one_condition(
                torch.from_numpy(np.ascontiguousarray(batch.images)),
                batch.names,
                part,
                seed,
                device,
            ),
        )

    return VERSION, make
