"""Speed of the probes' input synthesis (``nox -s bench`` = ``pytest tests/bench
--benchmark-only``): a batch of 64 crops at 224 px through all 22 spectral and all 29 critical-band
conditions, batched torch against the slow per-image NumPy references of tests/unit/oracle, measured
in the same run. The speed-up is computed here and stored in ``extra_info`` (and printed past
pytest's capture, so ``nox -s bench`` shows it).

Targets (issue 14): >= 5x for the spectral filter, >= 10x for the critical band END TO END:
the noise drawn plus the synthesis on both sides. The batched side runs exactly what
``critical_band.run`` runs (``stimuli(..., reuse=True)``: grayscale, contrast, the Philox fields
of the 28 noisy conditions drawn chunk by chunk in the synthesis workers, the synthesis); the
reference, per image and condition, draws its own white field (a per-image NumPy PCG64 generator,
version 3's stream and NumPy's fastest; the study itself drew ``np.random.randn``, slower still: see
``test_noise_generators``) and runs the literal per-pixel reference. Both stream their 29
conditions to a consumer that takes each stimulus and lets it go before asking for the next, as
the probe feeds a model.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest
import torch

from repro.probes import critical_band as cbp
from repro.probes import spectral as spp
from repro.probes._common import image_seed
from tests.unit.oracle import critical_band_reference as ref
from tests.unit.oracle import spectral_reference as sref

pytestmark = pytest.mark.bench

N, SIZE, SEED = 64, 224, 0
TARGETS = {"spectral": 5.0, "critical_band": 10.0}
_TIMES: dict[str, tuple[float, float]] = {}  # name -> (min, mean) seconds


@functools.cache
def _crops() -> np.ndarray:
    """64 natural-ish crops (smooth random fields plus texture), built on first use."""
    rng = np.random.default_rng(0)
    coarse = torch.from_numpy(rng.uniform(0, 255, (N, 3, 8, 8)))
    smooth = torch.nn.functional.interpolate(
        coarse, size=(SIZE, SIZE), mode="bilinear", align_corners=False
    )
    return np.clip(smooth.numpy() + rng.normal(0, 20, (N, 3, SIZE, SIZE)), 0, 255).astype(np.uint8)


NAMES = [f"ILSVRC2012_val_{i:08d}.JPEG" for i in range(N)]
NOISY = [(c, b, s) for c, b, s in cbp.conditions() if b is not None]


def _record(benchmark, name: str) -> tuple[float, float]:
    s = benchmark.stats.stats
    _TIMES[name] = (s.min, s.mean)
    benchmark.extra_info.update(
        {
            "images": N,
            "size": SIZE,
            "torch_threads": torch.get_num_threads(),
            "load_average": os.getloadavg()[0],
        }
    )
    return _TIMES[name]


def _say(config, line: str) -> None:
    """Print past pytest's capture, so ``nox -s bench`` shows the ratios."""
    with config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print("\n" + line)


def _speedup(benchmark, probe: str, reference_fn, config) -> float:
    key = f"{probe}_reference"
    if key not in _TIMES:  # run alone (-k): measure the reference here, once
        import time

        t = time.perf_counter()
        reference_fn()
        dt = time.perf_counter() - t
        _TIMES[key] = (dt, dt)
    own_min, own_mean = _record(benchmark, f"{probe}_batched")
    ref_min, ref_mean = _TIMES[key]
    ratio_min, ratio_mean = ref_min / own_min, ref_mean / own_mean
    benchmark.extra_info.update(
        {
            "reference_min_s": ref_min,
            "reference_mean_s": ref_mean,
            "speedup_min": round(ratio_min, 2),
            "speedup_mean": round(ratio_mean, 2),
            "target": TARGETS[probe],
        }
    )
    _say(
        config,
        f"{probe}: batched torch {own_min * 1e3:.0f} ms (min) / {own_mean * 1e3:.0f} ms (mean), "
        f"per-image reference {ref_min * 1e3:.0f} / {ref_mean * 1e3:.0f} ms: "
        f"{ratio_min:.1f}x on the min, {ratio_mean:.1f}x on the mean (target {TARGETS[probe]:g}x; "
        f"{torch.get_num_threads()} torch threads)",
    )
    return ratio_min


# ----------------------------------------------------------------------------- spectral


def _spectral_reference():
    return [sref.all_conditions(_crops()[i] / 255.0) for i in range(N)]


def _spectral_batched():
    """What the probe runs (``spectral.filtered(..., reuse=True)``: one rfft2, one irfft2 per
    radius, buffers reused from condition to condition), each image taken and let go as a model
    would (the reference above holds one image's 22 results at a time)."""
    x = torch.from_numpy(_crops()).float() / 255.0
    return _consume(spp.filtered(x, reuse=True))


def test_spectral_reference(benchmark):
    benchmark.pedantic(_spectral_reference, rounds=2, iterations=1)
    _record(benchmark, "spectral_reference")


def test_spectral_batched(benchmark, torch_threads, pytestconfig):
    out = benchmark.pedantic(_spectral_batched, rounds=3, iterations=1, warmup_rounds=1)
    assert len(out) == 22 and out["LFC/0.3"] == (N, 3, SIZE, SIZE)
    assert _speedup(benchmark, "spectral", _spectral_reference, pytestconfig) >= TARGETS["spectral"]


# ----------------------------------------------------------------------------- critical band


def _consume(stream) -> dict[str, tuple[int, ...]]:
    """Take each (condition, stimulus) of a stream and let it go: what a model does with it.
    Returns each condition's stimulus shape (a stimulus is a (N, 3, H, W) tensor or a list of
    N (3, H, W) arrays)."""
    shapes = {}
    for cond, x in stream:
        shapes[cond] = tuple(x.shape) if hasattr(x, "shape") else (len(x), *x[0].shape)
    return shapes


def _own_noise(name: str, cond: str) -> tuple[np.random.Generator, np.ndarray]:
    """One image's generator for one condition and its white field (version 3's stream)."""
    gen = np.random.Generator(np.random.PCG64(image_seed(SEED, name, cond)))
    return gen, gen.standard_normal((SIZE, SIZE))


def _cb_reference_stream():
    """Per image and condition: draw the image's own noise, then the literal reference."""
    for cond, band, sd in cbp.conditions():
        per_image = []
        for i in range(N):
            if band is None:
                per_image.append(ref.stimulus(_crops()[i], 0.0, 0, None))
                continue
            gen, white = _own_noise(NAMES[i], cond)
            redraws: list[np.ndarray] = []

            def redraw(t, gen=gen, redraws=redraws):
                while len(redraws) <= t:
                    redraws.append(gen.standard_normal((SIZE, SIZE)))
                return redraws[t]

            per_image.append(ref.stimulus(_crops()[i], sd, band, white, redraw))
        yield cond, per_image


def _cb_reference():
    return _consume(_cb_reference_stream())


def _cb_batched():
    """What the probe runs (``critical_band.stimuli``: the Philox fields drawn chunk by chunk where
    they are used, float32 synthesis, buffers reused from band to band), end to end from the
    uint8 crops."""
    images = torch.from_numpy(_crops())
    return _consume(cbp.stimuli(images, NAMES, SEED, torch.device("cpu"), reuse=True))


def test_critical_band_reference(benchmark):
    benchmark.pedantic(_cb_reference, rounds=2, iterations=1)
    _record(benchmark, "critical_band_reference")


def test_critical_band_batched(benchmark, torch_threads, pytestconfig):
    out = benchmark.pedantic(_cb_batched, rounds=3, iterations=1, warmup_rounds=1)
    assert len(out) == 29 and out["f=6/sd=0.16"] == (N, 3, SIZE, SIZE)
    assert (
        _speedup(benchmark, "critical_band", _cb_reference, pytestconfig)
        >= TARGETS["critical_band"]
    )


@pytest.mark.parametrize("generator", ["philox_batch", "pcg64_per_image", "randn_per_image"])
def test_noise_generators(benchmark, torch_threads, pytestconfig, generator):
    """Drawing the 28 x 64 white fields of one batch: the Philox fields in one call (what the probe
    does), per-image PCG64 generators (the reference above, version 3), per-image legacy
    ``RandomState.randn`` (what the study did). Printed as shares of the end-to-end times."""
    from repro.probes import philox

    conds = [c for c, b, _ in cbp.conditions() if b is not None]

    def draw():
        if generator == "philox_batch":
            return philox.normal_fields(
                SEED, [philox.field_id(n, c) for c in conds for n in NAMES], (SIZE, SIZE)
            )
        if generator == "pcg64_per_image":
            return [_own_noise(n, c)[1] for c in conds for n in NAMES]
        return [
            np.random.RandomState(image_seed(SEED, n, c) % 2**32).randn(SIZE, SIZE)
            for c in conds
            for n in NAMES
        ]

    benchmark.pedantic(
        draw, rounds=2, iterations=1, warmup_rounds=1 if generator == "philox_batch" else 0
    )
    own_min, _ = _record(benchmark, f"noise_{generator}")
    line = (
        f"noise {generator}: {own_min * 1e3:.0f} ms (min) for {len(conds) * N} fields of "
        f"{SIZE}x{SIZE}"
    )
    for probe in ("critical_band_batched", "critical_band_reference"):
        if probe in _TIMES:
            line += f"; {own_min / _TIMES[probe][0]:.0%} of {probe}"
    _say(pytestconfig, line)
