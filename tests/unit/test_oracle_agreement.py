"""Faithfulness: the batched torch probes agree with the slow, literal per-image NumPy oracles
(max abs difference < 1e-5 given the same input noise), and the oracle's pyramid agrees with
pyrtools itself (pyrtools 1.1.1 is a `test` dependency: the test fails, never skips, without it)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.probes import critical_band as cbp
from repro.probes import noise as nz
from repro.probes import spectral as spp
from repro.probes._common import image_seed
from tests.unit.oracle import critical_band_reference as ref
from tests.unit.oracle import spectral_reference as sref

pytestmark = pytest.mark.unit

TOL = 1e-5


def _images(n: int, size: int, seed: int = 0) -> np.ndarray:
    """Natural-ish uint8 crops: smooth random fields (upsampled) plus fine texture."""
    rng = np.random.default_rng(seed)
    coarse = torch.from_numpy(rng.uniform(0, 255, (n, 3, 8, 8)))
    smooth = torch.nn.functional.interpolate(
        coarse, size=(size, size), mode="bilinear", align_corners=False
    )
    texture = rng.normal(0, 20, (n, 3, size, size))
    return np.clip(smooth.numpy() + texture, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_spectral_filter_matches_the_literal_reference(torch_threads, dtype):
    images = _images(2, 224)
    x = torch.from_numpy(images).to(dtype) / 255.0
    got = dict(spp.filtered(x))
    assert len(got) == 22
    worst = 0.0
    for i in range(len(images)):
        want = sref.all_conditions(images[i] / 255.0)
        assert set(want) == set(got)
        for name, w in want.items():
            worst = max(worst, float(np.abs(got[name][i].numpy() - w).max()))
    print(f"spectral oracle max abs diff ({dtype}): {worst:.3g}")
    assert worst < TOL


def test_spectral_filter_at_a_small_size_too(torch_threads):
    images = _images(2, 40)  # 40 px: a size where rounding the cut-off names would change radii
    got = dict(spp.filtered(torch.from_numpy(images).double() / 255.0))
    for i in range(2):
        for name, w in sref.all_conditions(images[i] / 255.0).items():
            assert np.abs(got[name][i].numpy() - w).max() < 1e-12, name


def _reference_stimuli(images, names, seed, conditions, noise="pcg64"):
    """The literal per-image reference, given each generator's fields: ``pcg64`` (version 3's
    per-image NumPy generators) or ``philox`` (repro.probes.philox, stream 1 + t = redraw t)."""
    from repro.probes import philox

    out = {}
    for cond, band, sd in conditions:
        per_image = []
        for i, name in enumerate(names):
            if band is None:
                per_image.append(ref.stimulus(images[i], 0.0, 0, None))
                continue
            if noise == "philox":
                fid, shape = philox.field_id(name, cond), images.shape[-2:]
                white = philox.normal_fields(seed, [fid], shape)[0].double().numpy()

                def redraw(t, fid=fid, shape=shape):
                    return (
                        philox.normal_fields(seed, [fid], shape, stream=1 + t)[0].double().numpy()
                    )
            else:
                gen = nz.ImageNoise([image_seed(seed, name, cond)], images.shape[-2:])
                white = gen.white_np()[0]

                def redraw(t, gen=gen):
                    return gen.redraw_np(0, t)

            per_image.append(ref.stimulus(images[i], sd, band, white, redraw))
        out[cond] = np.stack(per_image)
    return out


@pytest.fixture(scope="module", params=["philox", "pcg64"])
def cb_case(request):
    """One natural-ish crop at 224 px and its 29 reference stimuli per noise generator (slow:
    computed once each)."""
    images = _images(1, 224, seed=1)
    names = ["a.JPEG"]
    return (
        images,
        names,
        request.param,
        _reference_stimuli(images, names, 7, cbp.conditions(), request.param),
    )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_critical_band_stimuli_match_the_literal_reference(torch_threads, cb_case, dtype):
    images, names, noise, want = cb_case
    got = dict(
        cbp.stimuli(
            torch.from_numpy(images), names, 7, torch.device("cpu"), dtype=dtype, noise=noise
        )
    )
    assert list(got) == [c for c, _, _ in cbp.conditions()]
    worst = max(float(np.abs(got[c].numpy() - want[c]).max()) for c in want)
    print(f"critical-band oracle max abs diff ({noise}, {dtype}): {worst:.3g}")
    assert worst < TOL
    for c in want:  # the model input: 3 identical float32 channels in [0, 1]
        assert got[c].dtype == torch.float32 and got[c].shape == (1, 3, 224, 224)
        assert float(got[c].min()) >= 0 and float(got[c].max()) <= 1
    # the noise really is there: SD 0.16 stimuli differ from the clean one
    assert float(np.abs(want["f=3/sd=0.16"] - want["sd=0"]).max()) > 0.1


def test_out_of_range_redraw_branch_matches_the_reference(torch_threads):
    """SD 1 forces the rare branch (shifting the image pixel would leave [0, 1] on the other
    side, so the noise pixel is redrawn); torch and the per-pixel loop agree exactly."""
    images = _images(1, 224, seed=2)
    names = ["x.png"]
    base = nz.reduce_contrast(nz.grayscale(torch.from_numpy(images)))
    seeds = [image_seed(0, n, "forced") for n in names]
    noise = nz.ImageNoise(seeds, (224, 224))
    white = noise.white()
    sf = nz.band_noise(white * 1.0, 6)
    noisy = base + sf
    newp = torch.where(noisy < 0, 0.1 - sf, 0.9 - sf)
    redraws = int((((noisy < 0) & (newp > 1)) | ((noisy > 1) & (newp < 0))).sum())
    assert redraws > 50  # the branch is really exercised
    got = nz.critical_band_images(base, 6, 1.0, noise=noise, white=white)
    for i in range(1):
        gen = nz.ImageNoise([seeds[i]], (224, 224))
        w = gen.white_np()[0]
        want = ref.stimulus(images[i], 1.0, 6, w, lambda t, gen=gen: gen.redraw_np(0, t))
        assert np.abs(got[i].numpy() - want).max() < TOL


def test_reference_pyramid_matches_pyrtools():
    try:
        import pyrtools as pt
    except ImportError as exc:  # a declared test dependency: missing means a broken install
        pytest.fail(
            f"pyrtools is not importable ({exc}); it is in the `test` extra: pip install "
            "-e '.[test]'"
        )
    rng = np.random.default_rng(3)
    for freq in range(7):
        noise = rng.standard_normal((224, 224)) * 0.08
        pyr = pt.pyramids.LaplacianPyramid(noise)
        recon = pyr.recon_pyr(levels=6 - freq)
        first = pyr.recon_pyr(levels=0)
        want = recon * np.sqrt(np.mean(first**2)) / np.sqrt(np.mean(recon**2))
        assert np.abs(ref.band_noise(noise, freq) - want).max() < 1e-12
