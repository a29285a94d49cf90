"""Spectral probe (repro.probes.spectral): the 22 filtered conditions per batch, run()'s counts,
ratios and biases, undefined biases at zero clean accuracy, unlabelled data refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.base.errors import DataError
from repro.datasets.base import ArraySource
from repro.measurements.loop import run
from repro.probes import spectral as spp
from repro.scoring import spectral as sp

pytestmark = pytest.mark.unit


def test_filtered_yields_every_condition_once_in_range(torch_threads):
    x = torch.rand(2, 3, 16, 16)
    out = dict(spp.filtered(x))
    assert set(out) == {name for name, _, _ in sp.conditions()}
    for t in out.values():
        assert t.shape == x.shape and float(t.min()) >= 0 and float(t.max()) <= 1
    # r = int(0.99 * 8) = 7 < 8: the low-pass at 0.99 is not the identity; r = 0 gives zeros
    assert float(out["LFC/0.01"].abs().max()) == 0.0
    torch.testing.assert_close(out["HFC/0.99"], x)  # high-pass radius int(0.01 * 8) = 0: identity
    with pytest.raises(ValueError, match="square"):
        list(spp.filtered(torch.rand(1, 3, 16, 12)))


class MeanThreshold(torch.nn.Module):
    def forward(self, x):
        logits = torch.zeros(x.shape[0], 1000)
        logits[:, 1] = x.mean(dim=(1, 2, 3)) - 0.3
        return logits


def _source(labels):
    images = np.full((len(labels), 3, 32, 32), 200, dtype=np.uint8)
    return ArraySource("flat", images, labels, [f"{i}.png" for i in range(len(labels))])


def test_run_counts_ratios_and_biases(torch_threads):
    # bright flat images: clean -> class 1; low-pass keeps the DC (except r = 0) -> class 1;
    # high-pass removes the DC -> 0 -> class 0
    res = run("spectral", MeanThreshold(), _source([1, 1, 1, 0]), batch_size=3)
    counts = {c.condition: (c.k, c.n) for c in res.conditions}
    assert counts["clean"] == (3, 4)
    assert counts["LFC/0.5"] == (3, 4) and counts["LFC/0.01"] == (1, 4)  # r = 0: all-zero image
    assert counts["HFC/0.5"] == (1, 4)
    assert res.values["LFC/0.5"] == 1.0 and res.values["HFC/0.5"] == pytest.approx(1 / 3)
    assert res.values["low_frequency_bias"] == pytest.approx(1.0)
    assert res.values["high_frequency_bias"] == pytest.approx(1 / 3)
    assert res.measurement == "spectral" and res.version == spp.VERSION and res.seed is None


def test_zero_clean_accuracy_leaves_biases_undefined(torch_threads):
    res = run("spectral", MeanThreshold(), _source([0, 0]), batch_size=2)
    assert res.conditions[0].k == 0
    assert res.values["low_frequency_bias"] is None and res.values["high_frequency_bias"] is None


def test_unlabelled_images_are_refused(torch_threads):
    with pytest.raises(DataError, match="without a label"):
        run("spectral", MeanThreshold(), _source([-1, 1]), batch_size=2)


def _full_product_filter(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The previous form of ``filtered``: the whole batch in one transform, the full half-spectrum
    multiplied by the mask, fresh tensors."""
    size = x.shape[-1]
    spectrum = torch.fft.rfft2(x)
    out = {}
    for r, members in sorted(spp._by_radius(size).items()):
        low = (
            torch.zeros_like(x)
            if r == 0
            else torch.fft.irfft2(
                spectrum * spp._hermitian_box(size, r, x.device).to(x.dtype), s=(size, size)
            )
        )
        for name, kind in members:
            out[name] = (low if kind == "low" else x - low).clamp(0, 1)
    return out


@pytest.mark.parametrize("threads", [1, 2])
def test_chunked_reused_filter_is_bitwise_the_whole_batch_product(threads, monkeypatch):
    """The masked region only, one transform per image chunk in worker threads, buffers reused:
    the same values as the full product on the whole batch (the mask's 0, 1/2, 1 make every
    product exact), for chunks of 1 and 2 images and the whole batch, at an odd and an even size."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for size in (20, 33):
            x = torch.rand(5, 3, size, size, generator=torch.Generator().manual_seed(size))
            want = _full_product_filter(x)
            per_image = x[0].numel() // size * (size // 2 + 1) * 8
            for step_bytes in (per_image, 2 * per_image, 1 << 30):
                monkeypatch.setattr(spp, "CPU_TRANSFORM_BYTES", step_bytes)
                seen = set()
                for name, got in spp.filtered(x, reuse=True):
                    assert torch.equal(got, want[name]), (size, step_bytes, name)
                    seen.add(got.untyped_storage().data_ptr())
                assert len(seen) == 2  # one low-pass and one high-pass buffer for all 22
                fresh = dict(spp.filtered(x))
                assert all(torch.equal(fresh[k], want[k]) for k in want)
    finally:
        torch.set_num_threads(before)


def test_the_high_pass_is_clamped_at_one_where_the_low_pass_rings_below_zero(torch_threads):
    """On a black-and-white image the low-pass rings below 0 at some white pixels, so
    ``x - low`` exceeds 1 there: the high-pass conditions clamp it to [0, 1], as the study does
    (the reference is the whole-batch product above)."""
    x = (torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(3)) > 0.5).float()
    want = _full_product_filter(x)
    got = {name: t.clone() for name, t in spp.filtered(x, reuse=True)}
    for name in want:
        assert torch.equal(got[name], want[name]), name
    spectrum, size = torch.fft.rfft2(x), 32
    above = [
        float(
            (
                x
                - torch.fft.irfft2(spectrum * spp._hermitian_box(size, r, x.device), s=(size, size))
            ).max()
        )
        for r in spp._by_radius(size)
        if r
    ]
    assert max(above) > 1.05  # the clamp at 1 is reached
    assert all(float(got[n].max()) <= 1.0 for n in got if n.startswith("HFC"))


def test_each_image_is_transformed_once_per_radius(monkeypatch, torch_threads):
    """The chunks partition the batch: every image goes through one forward transform and one
    inverse transform per distinct radius, whatever the chunk size (no image twice)."""
    x = torch.rand(5, 3, 20, 20, generator=torch.Generator().manual_seed(1))
    radii = [r for r in spp._by_radius(20) if r]
    per_image = x[0].numel() // 20 * (20 // 2 + 1) * 8
    seen = {"forward": 0, "inverse": 0}
    real_fwd, real_inv = torch.fft.rfft2, torch.fft.irfft2

    def forward(t, *args, **kwargs):
        seen["forward"] += t.shape[0]
        return real_fwd(t, *args, **kwargs)

    def inverse(t, *args, **kwargs):
        seen["inverse"] += t.shape[0]
        return real_inv(t, *args, **kwargs)

    monkeypatch.setattr(torch.fft, "rfft2", forward)
    monkeypatch.setattr(torch.fft, "irfft2", inverse)
    for step_bytes in (per_image, 2 * per_image, 1 << 30):
        monkeypatch.setattr(spp, "CPU_TRANSFORM_BYTES", step_bytes)
        seen.update(forward=0, inverse=0)
        for _ in spp.filtered(x, reuse=True):
            pass
        assert seen == {"forward": 5, "inverse": 5 * len(radii)}, step_bytes
