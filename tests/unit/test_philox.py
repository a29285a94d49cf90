"""The counter-based normal generator (repro.probes.philox, repro.probes.philox_cpu):
Random123's known-answer vectors of Philox4x32-10, the 64-bit products checked exactly, the
Box-Muller transform against the exact maths, the compiled CPU kernel bitwise against the torch
operations, moments and a Kolmogorov-Smirnov test of the normals, independence across keys and
streams, and invariance to threads, batches and order."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from repro.probes import philox as px
from repro.probes import philox_cpu as pc

pytestmark = pytest.mark.unit

#: Random123 tests/kat_vectors, philox4x32 10: (counter words, key words, output words)
KAT = [
    (
        (0x00000000, 0x00000000, 0x00000000, 0x00000000),
        (0x00000000, 0x00000000),
        (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8),
    ),
    (
        (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
        (0xFFFFFFFF, 0xFFFFFFFF),
        (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD),
    ),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]

needs_numba = pytest.mark.skipif(
    not pc.available(), reason="numba not installed (the CPU kernel is optional)"
)


def _philox_python(ctr: tuple[int, ...], key: tuple[int, ...]) -> tuple[int, ...]:
    """An independent Philox4x32-10 on Python integers (the Random123 round, literally)."""
    c, k = list(ctr), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & 0xFFFFFFFF, (k[1] + 0xBB67AE85) & 0xFFFFFFFF]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ k[1], p0 & 0xFFFFFFFF]
    return tuple(c)


@pytest.mark.parametrize("ctr,key,want", KAT, ids=["zeros", "ones", "pi"])
def test_known_answer_vectors(ctr, key, want):
    got = px.philox4x32_10(torch.tensor([ctr]), torch.tensor([key]))[0].tolist()
    assert got == list(want)
    assert _philox_python(ctr, key) == want  # the test's own reference agrees with Random123


@needs_numba
def test_cpu_kernel_known_answer_zero_counter():
    words = np.empty((4, 1), dtype=np.int64)
    pc._words(words, 0, 0, 0, 0, 0)
    assert words[:, 0].tolist() == list(KAT[0][2])


def test_random_counters_and_keys_match_python_integers():
    rng = np.random.default_rng(0)
    ctr = rng.integers(0, 1 << 32, (2000, 4), dtype=np.int64)
    key = rng.integers(0, 1 << 32, (2000, 2), dtype=np.int64)
    ctr[:4] = [[0, 0, 0, 0], [0xFFFFFFFF] * 4, [1 << 31] * 4, [0xFFFFFFFF, 0, 0xFFFFFFFF, 0]]
    got = px.philox4x32_10(torch.from_numpy(ctr), torch.from_numpy(key)).numpy()
    for i in range(len(ctr)):
        assert tuple(got[i]) == _philox_python(
            tuple(int(v) for v in ctr[i]), tuple(int(v) for v in key[i])
        ), i


def test_mulhilo_is_exact_on_extreme_and_random_words():
    rng = np.random.default_rng(1)
    xs = [0, 1, 2, 0xFFFF, 0x10000, (1 << 31) - 1, 1 << 31, 0xFFFFFFFE, 0xFFFFFFFF]
    xs += rng.integers(0, 1 << 32, 5000).tolist()
    x = torch.tensor(xs, dtype=torch.int64)
    for m in (px.PHILOX_M0, px.PHILOX_M1):
        hi, lo = px.mulhilo(x, m)
        assert hi.tolist() == [(v * m) >> 32 for v in xs]
        assert lo.tolist() == [(v * m) & 0xFFFFFFFF for v in xs]
        assert int(hi.max()) < 1 << 32 and int(lo.min()) >= 0


# ----------------------------------------------------------------------------- the transform

#: words that hit every branch: u = 1 and the smallest u, the sqrt(2) mantissa boundary at every
#: exponent (x = t - 1 with t * 2**(32 - n) next to sqrt(2) * 2**32),
#: powers of 2 (the exponent search), quadrant and octant boundaries of the angle
EDGE_WORDS = sorted(
    {
        0,
        1,
        2,
        3,
        0xFFFFFFFF,
        0xFFFFFFFE,
        *[(px.SQRT2_FIXED >> k) + d - 1 for k in range(1, 31) for d in (-1, 0, 1, 2)],
        *[(1 << k) - 1 for k in range(1, 33)],
        *[1 << k for k in range(32)],
        *[
            q * (1 << 30) + o
            for q in range(4)
            for o in (0, 1, (1 << 29) - 1, 1 << 29, (1 << 29) + 1, (1 << 30) - 1)
        ],
    }
)


def _words_under_test(n: int = 200_000) -> torch.Tensor:
    assert min(EDGE_WORDS) >= 0 and max(EDGE_WORDS) < 1 << 32
    rng = np.random.default_rng(2)
    random = rng.integers(0, 1 << 32, n, dtype=np.int64)
    return torch.from_numpy(np.concatenate([np.array(EDGE_WORDS, dtype=np.int64), random]))


def test_transform_is_within_a_few_float32_ulps_of_the_exact_box_muller():
    """-2 ln u, sqrt, cos and sin of the float32 transform against float64 maths (the exact
    values to 1e-16): a few float32 ulps at most (relative 2**-23 = 1.2e-7 is one ulp at 1)."""
    x = _words_under_test()
    xd = x.numpy().astype(np.float64)
    exact_w = np.abs(-2.0 * np.log((xd + 1.0) * 2.0**-32))  # abs: -0.0 for u = 1
    w = px.neg2log_unit(x).double().numpy()
    ulp_w = np.spacing(np.abs(exact_w).astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(w - exact_w) <= 3 * ulp_w), np.max(np.abs(w - exact_w) / ulp_w)
    assert w[xd == 0xFFFFFFFF].tolist() == [0.0]  # u = 1: radius exactly 0
    r = px.sqrt_basic(px.neg2log_unit(x)).double().numpy()
    exact_r = np.sqrt(exact_w)
    ulp_r = np.spacing(exact_r.astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(r - exact_r) <= 3 * ulp_r), np.max(np.abs(r - exact_r) / ulp_r)
    theta = 2 * np.pi * xd * 2.0**-32
    c, s = (t.double().numpy() for t in px.cos_sin_turn(x))
    assert np.max(np.abs(c - np.cos(theta))) < 3e-7 and np.max(np.abs(s - np.sin(theta))) < 3e-7
    assert np.all(c * c + s * s <= 1 + 1e-6)


def test_sqrt_basic_on_its_whole_domain():
    w = torch.from_numpy(np.concatenate([[0.0], np.logspace(-10, 4.5, 20001)]).astype(np.float32))
    got = px.sqrt_basic(w).double().numpy()
    want = np.sqrt(w.double().numpy())
    ulp = np.spacing(want.astype(np.float32)).astype(np.float64)
    assert got[0] == 0.0 and np.all(np.abs(got - want) <= 1.0 * ulp + 1e-30)


@needs_numba
def test_cpu_kernel_scalar_functions_are_bitwise_the_torch_ones():
    x = _words_under_test(50_000)
    w_ref = px.neg2log_unit(x).numpy()
    r_ref = px.sqrt_basic(px.neg2log_unit(x)).numpy()
    c_ref, s_ref = (t.numpy() for t in px.cos_sin_turn(x))
    w = np.array([pc._neg2log(int(v)) for v in x.tolist()], dtype=np.float32)
    r = np.array([pc._sqrt(np.float32(v)) for v in w_ref], dtype=np.float32)
    cs = np.array([pc._cos_sin(int(v)) for v in x.tolist()], dtype=np.float32)
    assert np.array_equal(w.view(np.int32), w_ref.view(np.int32))
    assert np.array_equal(r.view(np.int32), r_ref.view(np.int32))
    assert np.array_equal(cs[:, 0].view(np.int32), c_ref.view(np.int32))
    assert np.array_equal(cs[:, 1].view(np.int32), s_ref.view(np.int32))


@needs_numba
def test_cpu_kernel_passes_are_bitwise_box_muller_on_edge_words():
    """The compiled passes (words -> radii -> normals, each split into an integer and a float32
    loop) on words chosen for their branches: the logarithm's ends (0, 2**32 - 1) and its
    mantissa switch (SQRT2_FIXED), every quadrant with and without the angle swap, against the
    torch transform ``box_muller`` on the same words."""
    x = _words_under_test(20_000).numpy()
    angles = np.array(
        [
            0,
            1,
            (1 << 29),
            (1 << 29) + 1,
            (1 << 30) - 1,
            1 << 30,
            (1 << 30) + (1 << 29) + 1,
            (1 << 31) - 1,
            1 << 31,
            0xC0000000,
            0xE0000001,
            0xFFFFFFFF,
        ],
        dtype=np.int64,
    )
    blocks = len(x)
    words = np.empty((4, blocks), dtype=np.int64)
    words[0], words[2] = x, x[::-1]
    words[1] = np.resize(np.concatenate([angles, x[: blocks // 2]]), blocks)
    words[3] = np.resize(np.concatenate([x[::3], angles]), blocks)
    radii = np.empty((2, blocks), dtype=np.float32)
    parts = np.empty((4, blocks), dtype=np.float32)
    out = np.empty(4 * blocks, dtype=np.float32)
    pc._radii(radii, words, parts)
    pc._normals(out, words, radii, parts)
    want = px.box_muller(torch.from_numpy(words.T.copy())).numpy().T.reshape(-1)  # component-major
    assert np.array_equal(out.view(np.int32), want.view(np.int32))
    assert (out == 0).sum() >= 2  # the radius-0 words (2**32 - 1) went through


@needs_numba
@pytest.mark.parametrize("size", [4 * 3001, 4 * 3001 - 3, 1])
def test_cpu_kernel_fields_are_bitwise_the_torch_fields(size):
    ids = [0, 1, (1 << 64) - 1, px.field_id("ILSVRC2012_val_00000001.JPEG", "f=3/sd=0.08")]
    for seed, stream in ((0, 0), ((1 << 64) - 1, 7), (12345, 1)):
        ref = px.normal_fields(seed, ids, size, stream=stream, backend="torch")
        got = px.normal_fields(seed, ids, size, stream=stream, backend="cpu")
        assert got.dtype == torch.float32 and got.shape == (4, size)
        assert torch.equal(got.view(torch.int32), ref.view(torch.int32)), (seed, stream)
    wide = px.normal_fields(5, ids, size, dtype=torch.float64)
    assert wide.dtype == torch.float64 and torch.equal(
        wide, px.normal_fields(5, ids, size).double()
    )


# ----------------------------------------------------------------------------- statistics


@pytest.fixture(scope="module")
def many_normals() -> np.ndarray:
    """64 fields of 224 x 224 (3.2 million normals) under seed 3."""
    return px.normal_fields(3, list(range(1000, 1064)), (224, 224)).double().numpy()


def test_moments(many_normals):
    z = many_normals.ravel()
    n = z.size
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / n)
    assert abs(stats.skew(z)) < 5 * math.sqrt(6 / n)
    assert abs(stats.kurtosis(z)) < 5 * math.sqrt(24 / n)
    assert np.abs(z).max() <= math.sqrt(64 * math.log(2)) + 1e-5  # the grid's truncation


def test_kolmogorov_smirnov(many_normals):
    z = many_normals.ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    for field in many_normals[:8]:  # each field on its own too
        assert stats.kstest(field.ravel(), "norm").pvalue > 1e-4


def test_components_and_neighbours_are_uncorrelated(many_normals):
    """Within a field: the 4 components of a block (z0..z3, in the 4 quarters of the field),
    pixel neighbours; across fields: neighbouring ids, seeds and streams."""
    n = 50176 // 4
    bound = 5 / math.sqrt(n)
    f = many_normals[0].ravel()
    parts = f.reshape(4, n)
    for i in range(4):
        for j in range(i + 1, 4):
            assert abs(np.corrcoef(parts[i], parts[j])[0, 1]) < bound, (i, j)
    assert abs(np.corrcoef(f[:-1], f[1:])[0, 1]) < 5 / math.sqrt(f.size)
    assert (
        abs(np.corrcoef(parts[0] ** 2, parts[1] ** 2)[0, 1]) < bound
    )  # one radius, yet independent normals
    bound = 5 / math.sqrt(50176)
    a = px.normal_fields(3, [1000], 50176)[0].double().numpy()
    for other in (
        px.normal_fields(3, [1001], 50176),
        px.normal_fields(4, [1000], 50176),
        px.normal_fields(3, [1000], 50176, stream=1),
        px.normal_fields(3, [1000 + (1 << 32)], 50176),
    ):
        assert abs(np.corrcoef(a, other[0].double().numpy())[0, 1]) < bound


def test_field_ids_of_the_study_never_share_a_counter_range():
    """Every (image, condition) of a 50,000-image validation set x 29 conditions gets its own
    64-bit id, so its own counter range under a seed (counter words 2-3 are the id)."""
    from repro.probes import critical_band as cbp

    conds = [c for c, _, _ in cbp.conditions()]
    ids = {px.field_id(f"ILSVRC2012_val_{i:08d}.JPEG", c) for i in range(1, 50_001) for c in conds}
    assert len(ids) == 50_000 * len(conds)
    assert px.field_id("a.png", "f=0/sd=0.02") == px.field_id("a.png", "f=0/sd=0.02")
    assert px.field_id("a.png", "f=0/sd=0.02") != px.field_id("a.png", "f=0/sd=0.04")


# ----------------------------------------------------------------------------- invariance


def test_fields_do_not_depend_on_threads_batch_or_order():
    ids = [px.field_id(f"img{i}.JPEG", "f=2/sd=0.16") for i in range(7)]
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = px.normal_fields(9, ids, (33, 40))
        torch.set_num_threads(2)
        two = px.normal_fields(9, ids, (33, 40))
    finally:
        torch.set_num_threads(before)
    assert torch.equal(one, two)
    alone = torch.cat([px.normal_fields(9, [i], (33, 40)) for i in ids])
    assert torch.equal(alone, one)
    order = [5, 0, 6, 2, 1, 4, 3]
    assert torch.equal(px.normal_fields(9, [ids[i] for i in order], (33, 40)), one[order])
    chunked = px.normal_fields_torch(
        9, ids, 33 * 40, dtype=torch.float32, max_blocks=330
    )  # 1 field per chunk
    assert torch.equal(chunked.reshape(7, 33, 40), one)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="seed"):
        px.normal_fields(-1, [0], 4)
    with pytest.raises(ValueError, match="seed"):
        px.normal_fields(1 << 64, [0], 4)
    with pytest.raises(ValueError, match="field ids"):
        px.normal_fields(0, [1 << 64], 4)
    with pytest.raises(ValueError, match="stream"):
        px.normal_fields(0, [0], 4, stream=-1)
    with pytest.raises(ValueError, match="dtype"):
        px.normal_fields(0, [0], 4, dtype=torch.float16)
    with pytest.raises(ValueError, match="backend"):
        px.normal_fields(0, [0], 4, backend="gpu")
