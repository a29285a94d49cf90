"""Known answer for the critical-band probe: a linear template observer whose templates are
band-limited to where band 3's noise dominates (a ring at 6-8 cycles/image) is masked most by
band-3 noise; its threshold curve peaks at band 3 and the fitted centre frequency lies within
one octave of the nominal 1.75 * 2**3 = 14 cycles/image. Generated 224 px images, no weights.
The assertions hold for seeds 0-3 of both noise generators (checked when the generator changed).

(Band 3 of the 7-level Laplacian pyramid carries its power at about 3.5-14 cycles/image and is
the band with the highest noise power density at 5-9 cycles/image: see tests/unit/test_noise.py.)
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.datasets.base import ArraySource
from repro.measurements.loop import run
from repro.probes import critical_band as cbp
from repro.scoring import critical_band as cb

pytestmark = pytest.mark.integration

K = 8  # classes
N = 40  # images, 5 per class
AMPLITUDE = 4.0  # template RMS in grey levels (before the probe's contrast reduction)


def _templates() -> torch.Tensor:
    rng = np.random.default_rng(0)
    f = np.fft.fftfreq(224) * 224
    radius = np.sqrt(f[:, None] ** 2 + f[None, :] ** 2)
    ring = (radius >= 6.0) & (radius < 8.0)
    spectrum = (rng.standard_normal((K, 224, 224)) + 1j * rng.standard_normal((K, 224, 224))) * ring
    t = torch.from_numpy(np.fft.ifft2(spectrum).real)
    t = t - t.mean(dim=(1, 2), keepdim=True)
    return t / t.square().mean(dim=(1, 2), keepdim=True).sqrt()


class TemplateObserver(torch.nn.Module):
    """Logit of class j = <x - mean(x), T_j> on channel 0 (classes 0..K-1; others -inf)."""

    def __init__(self, templates: torch.Tensor):
        super().__init__()
        self.register_buffer("templates", templates.float())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = x[:, 0] - x[:, 0].mean(dim=(1, 2), keepdim=True)
        logits = torch.full((x.shape[0], 1000), -torch.inf)
        logits[:, :K] = torch.einsum("nhw,khw->nk", g, self.templates)
        return logits


def test_band_3_observer_peaks_at_band_3(torch_threads):
    templates = _templates()
    labels = np.arange(N) % K
    grey = np.clip(np.round(128 + AMPLITUDE * templates[labels].numpy()), 0, 255).astype(np.uint8)
    source = ArraySource(
        "band3-templates",
        np.repeat(grey[:, None], 3, axis=1),
        labels,
        [f"t{i}.png" for i in range(N)],
    )

    result = run("critical_band", TemplateObserver(templates), source, batch_size=N, seed=0)
    counts = {c.condition: c for c in result.conditions}
    assert len(counts) == 29 and all(c.n == N for c in counts.values())
    assert counts["sd=0"].k == N  # noiseless: the observer is perfect
    grid = cb.accuracy_grid(result.conditions)
    # the observer is hurt most by band-3 noise: the lowest accuracy over the noisy SDs
    assert int(np.argmin(grid[1:].mean(axis=0))) == 3, grid
    # the threshold curve peaks at band 3, above every band that is not its neighbour. (Band 4
    # may tie: its accuracy at SD 0.08 is about 0.5, the criterion itself, so 2 of the first 4
    # seeds of either generator tie there; the earlier strict "above all" held for seed 0 of the
    # version-3 noise only by chance: tests/unit and issue 14's report.)
    th = [int(result.values[f"threshold_norm/f={f}"]) for f in range(7)]
    assert th[3] == max(th) and th[3] > max(th[:2] + th[5:]), th
    cf = result.values["cf_norm"]
    print(f"band-3 observer: thresholds_norm={th} cf_norm={cf} bw_norm={result.values['bw_norm']}")
    assert cf is not None and cb.band_centre(3) / 2 <= cf <= cb.band_centre(3) * 2, (th, cf)
    assert result.value == cf and result.seed == 0 and result.version == cbp.VERSION
