"""Critical-band stimulus maths (repro.probes.noise): PIL-exact grayscale, contrast reduction,
band-limited noise (octave placement, equal RMS, requested SD), the out-of-range rule and the
per-image seeding (batch-size and order invariance)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.probes import critical_band as cbp
from repro.probes import noise as nz
from repro.scoring import critical_band as cb

pytestmark = pytest.mark.unit


def test_grayscale_is_bit_identical_to_pil(torch_threads):
    """Every (R, G) pair with every 8th B (and B = 255): 2.2M colours. (All 2**24 colours were
    checked once while writing this; too slow for the default run on a shared 2-core box.)"""
    from PIL import Image

    r, g, b = np.meshgrid(np.arange(256), np.arange(256), [*range(0, 256, 8), 255], indexing="ij")
    rgb = np.stack([r, g, b], axis=-1).reshape(256, -1, 3).astype(np.uint8)
    pil = np.asarray(Image.fromarray(rgb).convert("L"))
    ours = nz.grayscale(torch.from_numpy(rgb.transpose(2, 0, 1)[None].copy()))[0].numpy()
    np.testing.assert_array_equal(ours, pil)
    # a float formula with round-half-up is NOT the same (so the integer form matters)
    naive = np.floor(r * 0.299 + g * 0.587 + b * 0.114 + 0.5).reshape(pil.shape)
    assert (naive != pil).any()


def test_grayscale_on_random_images_and_bad_input(torch_threads):
    from PIL import Image

    rgb = np.random.default_rng(0).integers(0, 256, (3, 3, 17, 23), dtype=np.uint8)
    ours = nz.grayscale(torch.from_numpy(rgb)).numpy()
    for i in range(3):
        pil = np.asarray(Image.fromarray(rgb[i].transpose(1, 2, 0).copy()).convert("L"))
        np.testing.assert_array_equal(ours[i], pil)
    with pytest.raises(ValueError, match="uint8"):
        nz.grayscale(torch.zeros(1, 3, 4, 4))


def test_contrast_reduction():
    gray = torch.tensor([[[0, 255], [51, 102]]], dtype=torch.uint8)
    x = gray.double() / 255
    want = (x - x.mean()) * 0.2 + 0.449
    got = nz.reduce_contrast(gray)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-15)
    assert float(got.mean()) == pytest.approx(0.449, abs=1e-12)


@pytest.fixture(scope="module")
def bands():
    """Band f of the same 6 white fields, f = 0..6."""
    torch.set_num_threads(1)
    white = torch.from_numpy(np.random.default_rng(0).standard_normal((6, 224, 224)))
    return white, [nz.band_noise(white, f) for f in range(7)]


def _radial_power(b: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    p = (np.abs(np.fft.fft2(b.numpy())) ** 2).mean(axis=0)
    f = np.fft.fftfreq(b.shape[-1]) * b.shape[-1]
    return np.sqrt(f[:, None] ** 2 + f[None, :] ** 2), p


def test_band_power_lies_in_its_octave(bands):
    _, noise = bands
    centroids = []
    for f, b in enumerate(noise):
        radius, power = _radial_power(b)
        centroids.append(float((radius * power).sum() / power.sum()))
        c = cb.band_centre(f)
        if 1 <= f <= 5:
            # >= 80% of the power within the two octaves below the nominal centre 1.75 * 2**f
            # (the Laplacian band's pass band; the nominal centre is its upper edge)
            share = power[(radius >= c / 4) & (radius < c)].sum() / power.sum()
            assert share > 0.8, (f, share)

            # and the octave-wide window around c / 2 holds more power than the windows one
            # octave below or above
            def window(centre, radius=radius, power=power):
                return power[(radius >= centre / 2**0.5) & (radius < centre * 2**0.5)].sum()

            assert window(c / 2) > window(c / 4) and window(c / 2) > window(c), f
    assert all(a < b for a, b in zip(centroids, centroids[1:], strict=False)), centroids


def test_bands_have_equal_rms_and_the_requested_sd(bands):
    white, noise = bands
    rms = torch.stack([b.square().mean(dim=(-2, -1)).sqrt() for b in noise])  # (7 bands, 6 fields)
    # every band is rescaled to the RMS of the finest band of the same field
    torch.testing.assert_close(rms, rms[-1:].expand_as(rms), rtol=1e-12, atol=0)
    # the finest band of white noise with SD s has RMS g * s, g the band's gain from its
    # operator matrices: g^2 = 1 - 2 (tr M / n)^2 + (|M|_F^2 / n)^2 with M = U_0 D_0
    _, downs, ups, _ = nz._operators_np(224, 7)
    m = ups[0] @ downs[0]
    g = np.sqrt(1 - 2 * (np.trace(m) / 224) ** 2 + (np.sum(m * m) / 224) ** 2)
    assert 0.9 < g < 0.97
    for sd in cb.NOISE_SDS[1:]:
        scaled = nz.band_noise(white * sd, 3)
        measured = float(scaled.square().mean().sqrt())
        assert measured == pytest.approx(g * sd, rel=0.01)
        # linear: SD scales the band exactly
        torch.testing.assert_close(scaled, noise[3] * sd, rtol=1e-10, atol=1e-14)


def test_band_noise_rejects_bad_band_and_small_images():
    with pytest.raises(ValueError, match="band"):
        nz.band_noise(torch.zeros(1, 224, 224, dtype=torch.float64), 7)
    with pytest.raises(ValueError, match="at least 160 px"):
        nz.band_noise(torch.zeros(1, 64, 64, dtype=torch.float64), 3)


def test_out_of_range_rule_by_hand():
    image = torch.tensor([[[0.3, 0.6, 0.5, 0.5, 0.95]]], dtype=torch.float64)
    noise = torch.tensor([[[-0.5, 0.5, 0.2, 0.5, -1.0]]], dtype=torch.float64)
    # pixel 4: 0.95 - 1.0 < 0 and 0.1 + 1.0 > 1, so its noise is redrawn from N(0,1) * SD;
    # redraw fields: round 0 gives -3 (0.95 - 3 * 0.5 < 0: rejected), round 1 gives 0.02
    fields = [
        torch.full((1, 1, 5), -3.0, dtype=torch.float64),
        torch.full((1, 1, 5), 0.02, dtype=torch.float64),
    ]
    calls = []

    def redraw(t, rows):
        calls.append(t)
        return fields[t][rows]

    out = nz.push_in_range(image, noise, 0.5, redraw)[0, 0].tolist()
    assert out[0] == pytest.approx(0.1)  # below 0: image := 0.1 - noise
    assert out[1] == pytest.approx(0.9)  # above 1: image := 0.9 - noise
    assert out[2] == pytest.approx(0.7)  # in range: untouched
    assert out[3] == pytest.approx(1.0)  # exactly 1 is in range
    assert out[4] == pytest.approx(0.95 + 0.01)  # kept image, redrawn noise 0.02 * 0.5
    assert calls == [0, 1]
    with pytest.raises(RuntimeError, match="redraw"):
        nz.push_in_range(image, noise, 0.5, None)


def _crops(n, seed=0):
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.integers(0, 256, (n, 3, 224, 224), dtype=np.uint8))


def test_noise_does_not_depend_on_batch_size_or_order(torch_threads):
    images = _crops(4)
    names = [f"img{i}.JPEG" for i in range(4)]
    dev = torch.device("cpu")
    whole = dict(cbp.stimuli(images, names, 3, dev))
    halves = [dict(cbp.stimuli(images[i : i + 2], names[i : i + 2], 3, dev)) for i in (0, 2)]
    order = [3, 1, 0, 2]
    shuffled = dict(cbp.stimuli(images[order], [names[i] for i in order], 3, dev))
    for cond, _, _ in cbp.conditions():
        torch.testing.assert_close(
            torch.cat([halves[0][cond], halves[1][cond]]), whole[cond], rtol=0, atol=0
        )
        torch.testing.assert_close(shuffled[cond], whole[cond][order], rtol=0, atol=0)
    # ... but on the seed, the image name and the condition
    other_seed = dict(cbp.stimuli(images[:1], names[:1], 4, dev))
    assert not torch.equal(other_seed["f=3/sd=0.08"], whole["f=3/sd=0.08"][:1])
    renamed = dict(cbp.stimuli(images[:1], ["other.JPEG"], 3, dev))
    assert not torch.equal(renamed["f=3/sd=0.08"], whole["f=3/sd=0.08"][:1])
    assert not torch.equal(whole["f=3/sd=0.08"], whole["f=3/sd=0.16"] / 2)


def test_noise_does_not_depend_on_chunks_or_worker_threads():
    """17 images cross the 16-field chunk boundary; one worker thread or two, whole batch or
    split 1 + 16: bit-identical stimuli (each chunk is computed the same way in any case)."""
    images = _crops(17, seed=1)
    names = [f"c{i}.png" for i in range(17)]
    dev = torch.device("cpu")
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        two = dict(cbp.stimuli(images, names, 5, dev))
        assert torch.get_num_threads() == 2  # the worker threads restore the caller's setting
        torch.set_num_threads(1)
        one = dict(cbp.stimuli(images, names, 5, dev))
        split = [dict(cbp.stimuli(images[i:j], names[i:j], 5, dev)) for i, j in ((0, 1), (1, 17))]
    finally:
        torch.set_num_threads(before)
    for cond, _, _ in cbp.conditions():
        assert torch.equal(two[cond], one[cond]), cond
        assert torch.equal(torch.cat([split[0][cond], split[1][cond]]), one[cond]), cond


@pytest.mark.parametrize("shape", [(224, 224), (161, 230), (256, 200)])
def test_pyramid_steps_equal_pyrtools_operator_matrices(shape):
    """One reduction (depthwise strided convolution of the reflect-padded fields) and one
    expansion (strided transposed convolution of the extended fields) are pyrtools'
    ``corrDn`` / ``upConv`` operator matrices on both axes, times the integer-tap factor 128,
    for even and odd sizes."""
    rng = np.random.default_rng(3)
    h, w = shape
    x = rng.standard_normal((2, h, w))
    d_r, d_c = nz.reduce_matrix(h), nz.reduce_matrix(w)
    want = np.einsum("ij,kjl,ml->kim", d_r, x, d_c) * 128
    got = nz._reduce2d(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    small = rng.standard_normal((2, d_r.shape[0], d_c.shape[0]))
    u_r, u_c = nz.expand_matrix(h, d_r.shape[0]), nz.expand_matrix(w, d_c.shape[0])
    want = np.einsum("ij,kjl,ml->kim", u_r, small, u_c) * 128
    got = nz._expand2d(torch.from_numpy(small), h, w).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(224, 224), (161, 230)])
def test_composite_and_level_by_level_paths_agree(shape):
    """From level ``COMPOSITE_FROM`` on, the band is reached through the composite operator
    matrices instead of level-by-level convolutions: the same operators, so in float64 the two
    paths agree to rounding, for every band (and levels 0-2 are the same computation)."""
    white = torch.from_numpy(np.random.default_rng(4).standard_normal((3, *shape)))
    for level in range(nz.LEVELS):
        a, ra = nz._band_chunk(white, level, nz.LEVELS, composite_from=99)  # never composite
        b, rb = nz._band_chunk(white, level, nz.LEVELS, composite_from=2)  # composite from 2
        scale = float(a.abs().max())
        assert float((a - b).abs().max()) < 1e-13 * scale, level
        torch.testing.assert_close(ra, rb, rtol=1e-13, atol=0)
        assert float((a * ra.view(-1, 1, 1)).square().mean()) > 0  # not a trivially zero band


def test_band_noise_is_batch_invariant_at_odd_sizes(torch_threads):
    """A field's band noise does not depend on the batch it is computed in, bit for bit, at a
    size whose per-field blocks are not 64-byte aligned (the composite path pads them)."""
    white = torch.from_numpy(np.random.default_rng(5).standard_normal((7, 161, 230)))
    for band in range(cb.N_BANDS):
        whole = nz.band_noise(white.float(), band)
        parts = torch.cat(
            [nz.band_noise(white[i:j].float(), band) for i, j in ((0, 1), (1, 4), (4, 7))]
        )
        assert torch.equal(whole, parts), band
        assert torch.equal(nz.band_noise(white[3:5].float(), band), whole[3:5]), band


def test_reused_buffers_give_the_same_stimuli():
    """``synthesize(reuse=True)`` (what the probe runs) writes every band into the same four
    buffers and yields the same values as fresh tensors; ``out`` of the wrong shape is refused."""
    images = _crops(3, seed=2)
    names = [f"r{i}.png" for i in range(3)]
    dev = torch.device("cpu")
    fresh = dict(cbp.stimuli(images, names, 9, dev))
    seen: dict[str, torch.Tensor] = {}
    storage = set()
    for cond, x in cbp.stimuli(images, names, 9, dev, reuse=True):
        seen[cond] = x.clone()  # valid until the next band: copy to compare afterwards
        storage.add(x.untyped_storage().data_ptr())
        assert torch.equal(x, fresh[cond]), cond
    assert set(seen) == set(fresh)
    assert len(storage) == 5  # the clean images and 4 buffers, reused for all 7 bands
    base = nz.reduce_contrast(nz.grayscale(images), dtype=torch.float32)
    white = torch.zeros_like(base)
    with pytest.raises(ValueError, match="`out` needs 1 tensors"):
        nz.noisy_images(base, 3, [0.02], [white], out=[torch.empty(2, 224, 224)])


def test_white_fields_are_each_generators_first_draw_whatever_the_threads():
    seeds = [11, 12, 13]
    want = np.stack(
        [np.random.Generator(np.random.PCG64(s)).standard_normal((160, 170)) for s in seeds]
    )
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            noise = nz.ImageNoise(seeds, (160, 170))
            np.testing.assert_array_equal(noise.white_np(), want)
            # the redraws continue each generator's own stream
            follow = np.random.Generator(np.random.PCG64(seeds[1]))
            follow.standard_normal((160, 170))
            np.testing.assert_array_equal(noise.redraw_np(1, 0), follow.standard_normal((160, 170)))
    finally:
        torch.set_num_threads(before)


# ----------------------------------------------------------------------------- the two generators

#: sha256 over (condition name, float32 stimulus bytes) of the 29 stimuli of ``_v3_case()``,
#: computed by the version-3 code (commit 36f5cc4, before the Philox generator) on x86-64 with
#: torch's AVX-512 kernels (the pyramid's float32 rounding depends on the CPU kernels, so the
#: digest is checked where torch runs those kernels)
V3_DIGEST = "9fe91496fd77eb95b2d480d23a9b4ef4a0e7befca0bedf60dacd41e11ef0dd7e"
#: the same case under version 4 (Philox noise), computed by commit cb1a7fb (before the split
#: Philox passes and the compiled out-of-range scan, which are for speed only) on x86-64 with
#: torch's AVX-512 kernels
V4_DIGEST = "134c2e1c46d13f813fbb08b53f9da4f44727bba90d1849827fde06a30ba9b4a7"


def _v3_case():
    rng = np.random.default_rng(11)
    coarse = torch.from_numpy(rng.uniform(0, 255, (2, 3, 8, 8)))
    smooth = torch.nn.functional.interpolate(
        coarse, size=(224, 224), mode="bilinear", align_corners=False
    )
    images = torch.from_numpy(
        np.clip(smooth.numpy() + rng.normal(0, 20, (2, 3, 224, 224)), 0, 255).astype(np.uint8)
    )
    return images, ["ILSVRC2012_val_00000001.JPEG", "ILSVRC2012_val_00000002.JPEG"]


def test_pcg64_white_fields_are_version_3s_stream():
    """NumPy's PCG64 streams are the same on every platform: the first values of one field, as
    version 3 drew them."""
    from repro.probes._common import image_seed

    gen = nz.ImageNoise([image_seed(7, "ILSVRC2012_val_00000001.JPEG", "f=3/sd=0.08")], (224, 224))
    assert gen.white_np()[0, 0, :3].tolist() == [
        -0.1841085507401287,
        1.1252870806920734,
        0.048150186595692,
    ]


@pytest.mark.parametrize(
    "noise,version,digest", [("pcg64", "3", V3_DIGEST), ("philox", "4", V4_DIGEST)]
)
def test_each_generator_gives_its_versions_stimuli_bitwise(torch_threads, noise, version, digest):
    """Each generator's stimuli are bitwise those of the version it records: version 3's
    (``pcg64``, kept for earlier results) and version 4's (``philox``; speed work on the synthesis,
    the CPU kernel's passes and the out-of-range scan, must not move a single bit of them)."""
    import hashlib

    images, names = _v3_case()
    h = hashlib.sha256()
    for cond, x in cbp.stimuli(images, names, 7, torch.device("cpu"), noise=noise):
        h.update(cond.encode())
        h.update(x.contiguous().numpy().tobytes())
    if torch.backends.cpu.get_cpu_capability() != "AVX512":
        pytest.skip(
            f"V{version}_DIGEST was made with torch's AVX512 CPU kernels; this CPU runs "
            f"{torch.backends.cpu.get_cpu_capability()}"
        )
    assert h.hexdigest() == digest


def test_philox_is_the_default_and_each_generator_records_its_version(torch_threads):
    from repro.base.errors import ConfigError

    images, names = _v3_case()
    dev = torch.device("cpu")
    default = dict(cbp.stimuli(images, names, 7, dev))
    philox = dict(cbp.stimuli(images, names, 7, dev, noise="philox"))
    pcg = dict(cbp.stimuli(images, names, 7, dev, noise="pcg64"))
    assert all(torch.equal(default[c], philox[c]) for c in default)
    assert torch.equal(pcg["sd=0"], philox["sd=0"])  # no noise, same stimulus
    assert not torch.equal(pcg["f=3/sd=0.08"], philox["f=3/sd=0.08"])
    assert cbp.VERSIONS == {"philox": cbp.VERSION, "pcg64": "3"} and cbp.VERSION == "4"
    with pytest.raises(ConfigError, match="noise"):
        list(cbp.stimuli(images, names, 7, dev, noise="mt19937"))


def test_philox_fields_are_the_generators_fields_keyed_by_name_and_condition():
    from repro.probes import philox

    names = ["a.png", "b.png", "c.png"]
    noise = nz.PhiloxNoise(3, names, ["f=1/sd=0.02", "f=6/sd=0.16"], (40, 48))
    redraw, white = noise.condition("f=6/sd=0.16")
    want = philox.normal_fields(3, [philox.field_id(n, "f=6/sd=0.16") for n in names], (40, 48))
    assert torch.equal(white, want)
    again = philox.normal_fields(3, [philox.field_id("b.png", "f=6/sd=0.16")], (40, 48), stream=3)
    assert np.array_equal(
        redraw.redraw_np(1, 2), again[0].double().numpy()
    )  # redraw t uses stream 1 + t


def test_philox_redraw_branch_matches_the_literal_reference():
    """SD 1 forces the out-of-range redraws; with the Philox redraw fields the batched rule and the
    per-pixel loop of tests/unit/oracle agree."""
    from repro.probes import philox
    from tests.unit.oracle import critical_band_reference as ref

    images = _crops(2, seed=4)
    names = ["p.png", "q.png"]
    base = nz.reduce_contrast(nz.grayscale(images))
    noise = nz.PhiloxNoise(0, names, ["forced"], (224, 224))
    redraw, white = noise.condition("forced")
    got = nz.noisy_images(base, 6, [1.0], [white], [redraw])[0]
    for i, name in enumerate(names):
        fid = philox.field_id(name, "forced")
        want = ref.solomon_filter(
            base[i].numpy(),
            1.0,
            6,
            white[i].double().numpy(),
            lambda t, fid=fid: (
                philox.normal_fields(0, [fid], (224, 224), stream=1 + t)[0].double().numpy()
            ),
        )
        assert np.abs(got[i].numpy() - want).max() < 1e-6
    sf = nz.band_noise(white.double(), 6)
    newp = torch.where(base + sf < 0, 0.1 - sf, 0.9 - sf)
    assert (
        int((((base + sf < 0) & (newp > 1)) | ((base + sf > 1) & (newp < 0))).sum()) > 50
    )  # really exercised


def test_lazy_philox_fields_are_the_eager_ones_chunk_by_chunk(torch_threads):
    """On a CPU the probe draws each condition's fields chunk by chunk in the synthesis workers
    (``PhiloxNoise(lazy=True)``) instead of all at once: the same fields, and the same stimuli."""
    names = [f"z{i}.png" for i in range(5)]
    conds = ["f=1/sd=0.02", "f=6/sd=0.16"]
    eager = nz.PhiloxNoise(4, names, conds, (40, 48))
    lazy = nz.PhiloxNoise(4, names, conds, (40, 48), lazy=True)
    for cond in conds:
        fields = lazy.condition(cond)[1]
        assert isinstance(fields, nz.LazyFields) and fields.shape == (5, 40, 48)
        want = eager.condition(cond)[1]
        assert torch.equal(fields.materialize(), want)
        assert torch.equal(fields.chunk(1, 4), want[1:4])
        buf = torch.empty(2, 40, 48)
        assert fields.chunk(3, 5, out=buf) is buf and torch.equal(buf, want[3:5])
    images = _crops(3, seed=6)
    names = names[:3]
    noisy = [c for c, b, _ in cbp.conditions() if b is not None]
    base = nz.reduce_contrast(nz.grayscale(images), dtype=torch.float32)
    want = dict(cbp.synthesize(base, nz.PhiloxNoise(4, names, noisy, (224, 224)).condition))
    got = dict(cbp.stimuli(images, names, 4, torch.device("cpu")))  # lazy on a CPU
    assert set(got) == set(want)
    for cond, x in got.items():
        assert torch.equal(x, want[cond]), cond
