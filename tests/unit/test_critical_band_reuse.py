"""``synthesize(reuse=True)`` writes all seven bands into the same four buffers (what the probe
runs: no fresh (N, H, W) tensors per band) and yields the values fresh tensors would have. A
small, fast version of ``test_noise.py::test_reused_buffers_give_the_same_stimuli`` (that file is
outside ``nox -s mutants``' test selection), on 160 x 160 images (the smallest a
7-level pyramid takes)."""

from __future__ import annotations

import pytest
import torch

from repro.probes import critical_band as cbp
from repro.probes import noise as nz

pytestmark = pytest.mark.unit


def _base() -> torch.Tensor:
    gen = torch.Generator().manual_seed(5)
    return nz.reduce_contrast(torch.rand(2, 160, 160, generator=gen), dtype=torch.float32)


def _noise_for(cond: str):
    gen = nz.ImageNoise([7, 8], (160, 160))
    return gen, gen.white_np()


def test_reuse_writes_every_band_into_four_buffers_with_the_fresh_values():
    fresh = dict(cbp.synthesize(_base(), _noise_for))
    assert len(fresh) == 29
    storage: set[int] = set()
    for cond, x in cbp.synthesize(_base(), _noise_for, reuse=True):
        assert torch.equal(x, fresh[cond]), cond
        storage.add(x.untyped_storage().data_ptr())
    assert len(storage) == 5  # the clean images and 4 buffers, reused for all 7 bands
    # without reuse every noisy stimulus has its own memory
    assert len({x.untyped_storage().data_ptr() for x in fresh.values()}) == 29


def _loud_noise_for(cond: str):
    """White fields 30x too loud: band noise beyond +-1 somewhere, so the out-of-range rule
    must redraw from the generator (shifting the image cannot bring such a pixel into [0, 1])."""
    gen = nz.ImageNoise([7, 8], (160, 160))
    return gen, gen.white_np() * 30.0


def test_every_noisy_stimulus_is_the_single_condition_reference_with_its_redraws():
    """Each of the 28 noisy stimuli equals ``critical_band_images`` for that condition alone, with
    a fresh generator of the same seeds and the same (loud) white field: pixels whose noise alone
    leaves [0, 1] are redrawn from the condition's own generator, so a synthesis that dropped the
    generators would fail (no redraw source) or differ."""
    base = _base()
    stimuli = dict(cbp.synthesize(base, _loud_noise_for))
    for cond, band, sd in cbp.conditions():
        if band is None:
            continue
        gen, white = _loud_noise_for(cond)
        want = nz.critical_band_images(base, band, sd, noise=gen, white=torch.as_tensor(white))
        assert torch.equal(stimuli[cond], want), cond
        assert float(stimuli[cond].min()) >= 0.0 and float(stimuli[cond].max()) <= 1.0
