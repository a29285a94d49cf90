"""Known answers for the spectral probe: a model that decides from one LOW spatial frequency
keeps its accuracy under low-pass filtering and falls to chance under high-pass; its mirror,
deciding from one HIGH frequency, does the reverse. Small generated images (32 px), no weights.

A column-frequency component k (constant along rows) survives the box low-pass of radius r iff
r >= k (at least its -k side, at index half - k, is inside the box) and survives the high-pass
iff r <= k (its +k side, at index half + k, is outside) -- half of it is enough for a detector.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.datasets.base import ArraySource
from repro.measurements.loop import run
from repro.probes import spectral as spp
from repro.scoring import spectral as sp

pytestmark = pytest.mark.integration

SIZE = 32
LOW_K, HIGH_K = 1, 12
N = 64  # 32 per class


class FrequencyDetector(torch.nn.Module):
    """Class 1 iff the power of column frequency ``k`` (row-averaged, channel 0) exceeds a
    threshold; class 0 otherwise. 1000 logits, all 0 except class 1's."""

    def __init__(self, k: int, threshold: float = (0.15 / 8) ** 2):
        super().__init__()
        self.k, self.threshold = k, threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        row = x[:, 0].double().mean(dim=1)  # (N, W)
        w = row.shape[-1]
        phase = torch.arange(w, dtype=torch.float64) * (2 * np.pi * self.k / w)
        amp = torch.complex(row @ torch.cos(phase), -(row @ torch.sin(phase))).abs() / (w / 2)
        logits = torch.zeros(x.shape[0], 1000, dtype=torch.float32)
        logits[:, 1] = (amp.square() - self.threshold).float()
        return logits


def _source() -> ArraySource:
    """Class 0: a flat grey image (random brightness); class 1: the same plus cosines at column
    frequencies 1 and 12 (amplitude 0.15, random phases)."""
    rng = np.random.default_rng(0)
    cols = np.arange(SIZE)
    labels = np.arange(N) % 2
    images = np.empty((N, 3, SIZE, SIZE), dtype=np.uint8)
    for i, y in enumerate(labels):
        row = np.full(SIZE, 0.5 + rng.uniform(-0.1, 0.1))
        if y == 1:
            for k in (LOW_K, HIGH_K):
                row += 0.15 * np.cos(2 * np.pi * k * cols / SIZE + rng.uniform(0, 2 * np.pi))
        images[i] = np.round(np.clip(row, 0, 1) * 255).astype(np.uint8)[None, None, :]
    return ArraySource("two-frequency", images, labels, [f"{i:03d}.png" for i in range(N)])


def _survives(k: int, kind: str, cutoff: float) -> bool:
    r = sp.radius(SIZE, cutoff, kind)
    return r >= k if kind == "low" else r <= k


@pytest.mark.parametrize("k", [LOW_K, HIGH_K], ids=["low-frequency-model", "high-frequency-model"])
def test_frequency_model_keeps_accuracy_exactly_where_its_frequency_survives(torch_threads, k):
    result = run("spectral", FrequencyDetector(k), _source(), batch_size=24)
    counts = {c.condition: c for c in result.conditions}
    assert counts["clean"].k == N and counts["clean"].n == N
    for name, kind, cutoff in sp.conditions():
        expected = N if _survives(k, kind, cutoff) else N // 2  # chance: always "class 0"
        assert (counts[name].k, counts[name].n) == (expected, N), (
            name,
            sp.radius(SIZE, cutoff, kind),
        )
    assert (
        result.measurement == "spectral" and result.version == spp.VERSION and result.seed is None
    )


def test_low_and_high_frequency_models_are_mirror_images(torch_threads):
    low = run("spectral", FrequencyDetector(LOW_K), _source(), batch_size=64)
    high = run("spectral", FrequencyDetector(HIGH_K), _source(), batch_size=64)
    # the low-frequency model keeps its accuracy under every low-pass with r >= 1 and is at
    # chance under every high-pass with r >= 2; the high-frequency model the reverse
    for c in sp.CUTOFFS:
        if sp.radius(SIZE, c, "low") >= 1:
            assert low.values[f"LFC/{c:g}"] == 1.0
        if sp.radius(SIZE, c, "high") >= 2:
            assert low.values[f"HFC/{c:g}"] == 0.5
        if sp.radius(SIZE, c, "low") < HIGH_K:
            assert high.values[f"LFC/{c:g}"] == 0.5
        if sp.radius(SIZE, c, "high") <= HIGH_K:
            assert high.values[f"HFC/{c:g}"] == 1.0
    assert low.values["low_frequency_bias"] == 1.0 and low.values["high_frequency_bias"] == 0.5
    # c = 0.1..0.5: low-pass radii 1, 3, 4, 6, 8 < 12; high-pass radii 14 (>12), 12, 11, 9, 8
    assert high.values["low_frequency_bias"] == 0.5
    assert high.values["high_frequency_bias"] == pytest.approx((0.5 + 1 + 1 + 1 + 1) / 5)
