"""Edges of the decision paths that mutation testing (``nox -s mutants``) found unchecked: each
test pins a boundary or a branch where a plausible slip (``>`` for ``>=``, a dropped argument,
``size / 2`` for ``size // 2``, a swapped condition) changes a published quantity or lets bad
input through. Expected values are hand-computed (the comments say how) or scipy's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.datasets.categories16 import categories16
from repro.measurements.loop import run
from repro.scoring import critical_band as cb
from repro.scoring import spectral as sp
from repro.scoring.shape_bias import MISSING, ShapeBiasScore, _cell

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------ shape bias: the shape class


def test_shape_class_comes_from_the_label_and_must_agree_with_the_name():
    from repro.probes.shape_bias import _shape_of

    cats = categories16()
    assert len(cats) == 16 and cats[0] != cats[2]
    other = cats[2]
    # label 0 (the first index counts as a label) decides, even when the name holds no class
    assert _shape_of("xyz1-abc2.png", 0, cats, "src") == cats[0]
    assert _shape_of(f"{cats[0]}1-{other}2.png", 0, cats, "src") == cats[0]
    assert _shape_of(f"{cats[15]}1-{other}2.png", 15, cats, "src") == cats[15]
    # without a label (-1) the name's first token is the shape class
    assert _shape_of(f"{other}3-{cats[0]}1.png", -1, cats, "src") == other
    with pytest.raises(DataError) as e:
        _shape_of(f"{cats[0]}1-{other}2.png", 16, cats, "src")
    assert (
        str(e.value)
        == f"src: image {cats[0]}1-{other}2.png: label 16 is not a 16-class index (0..15)"
    )
    with pytest.raises(DataError) as e:
        _shape_of(
            f"{other}1-{cats[0]}2.png", 0, cats, "src"
        )  # label 0 names cats[0], the name another class
    assert str(e.value) == (
        f"src: image {other}1-{cats[0]}2.png: label 0 ({cats[0]}) disagrees with the shape "
        f"class in its name ({other})"
    )
    with pytest.raises(DataError) as e:
        _shape_of("xyz1-abc2.png", -1, cats, "src")
    assert str(e.value) == (
        "src: image xyz1-abc2.png: cannot read a shape class from the name; expected "
        "<shape><n>-<texture><n>.png with 16-class names (e.g. airplane1-bicycle2.png)"
    )


def test_shape_bias_interval_defaults_to_the_95_percent_wilson_interval():
    # Wilson 95% for 7/10 (z = 1.959964): centre (0.7 + z^2/20) / (1 + z^2/10) = 0.644493,
    # half-width z * sqrt(0.7*0.3/10 + z^2/400) / (1 + z^2/10) = 0.247716
    lo, hi = ShapeBiasScore(n=12, shape=7, texture=3, shape_bias=0.7).interval()
    assert lo == pytest.approx(0.396777, abs=2e-6) and hi == pytest.approx(0.892209, abs=2e-6)
    assert ShapeBiasScore(n=5, shape=0, texture=0, shape_bias=None).interval() is None


def test_a_missing_decision_is_written_as_missing_not_as_none_or_nan():
    assert _cell(None) == MISSING and _cell(float("nan")) == MISSING
    assert _cell(0.25) == "0.25" and _cell("cat") == "cat"


# ------------------------------------------------------------------ spectral: radii and ratios


def test_radius_at_odd_sizes_uses_the_integer_half_and_accepts_the_end_cutoffs():
    # size 225: half = 225 // 2 = 112; 0.9 * 112 = 100.8 -> 100 (112.5 would give 101)
    assert sp.radius(225, 0.9, "low") == 100
    assert sp.radius(225, 0.4, "low") == 44  # 0.4 * 112 = 44.8 (112.5: 45)
    assert sp.radius(224, 0.0, "low") == 0 and sp.radius(224, 1.0, "low") == 112
    assert sp.radius(224, 1.0, "high") == 0 and sp.radius(224, 0.0, "high") == 112
    # a cut-off that is not one of the study's named ones is used as given: 0.37 * 112 = 41.44
    assert (
        sp.radius(224, 0.37, "low") == 41 and sp.radius(224, 0.37, "high") == 70
    )  # 0.63 * 112 = 70.56
    for bad in (-0.01, 1.01):
        with pytest.raises(ValueError, match=r"cut-off must be in \[0, 1\]"):
            sp.radius(224, bad, "low")


def test_ratios_with_a_single_clean_image_and_a_single_image_per_condition():
    # n = 1 is a valid count (a one-image run): 0/1 over 1/1 is 0, 1/1 over 1/1 is 1
    ratios = sp.lfc_hfc_ratios({"LFC/0.1": Count(0, 1), "HFC/0.1": Count(1, 1)}, Count(1, 1))
    assert ratios == {"LFC/0.1": 0.0, "HFC/0.1": 1.0}
    with pytest.raises(ValueError, match=r"condition 'LFC/0.1' has no images \(n = 0\)"):
        sp.lfc_hfc_ratios({"LFC/0.1": Count(0, 0)}, Count(1, 2))
    with pytest.raises(
        ValueError, match=r"clean accuracy is 0/3: the LFC/HFC ratios are undefined"
    ):
        sp.lfc_hfc_ratios({"LFC/0.1": Count(1, 3)}, Count(0, 3))
    with pytest.raises(ValueError, match=r"clean accuracy is 0/0"):
        sp.lfc_hfc_ratios({"LFC/0.1": Count(1, 3)}, Count(0, 0))


def test_a_bias_with_a_missing_ratio_names_what_is_missing():
    ratios = {sp.condition_name("low", c): 0.5 for c in sp.BIAS_CUTOFFS[:-1]}
    with pytest.raises(KeyError, match=r"LFC bias needs the ratios .*missing \['LFC/0.5'\]"):
        sp.low_frequency_bias(ratios)


# ------------------------------------------------------------------ critical band: the grid


def test_thresholds_refuse_accuracies_above_one():
    grid = np.full((len(cb.NOISE_SDS), cb.N_BANDS), 0.3)
    grid[0] = 0.9
    assert cb.thresholds(grid).tolist() == [4] * cb.N_BANDS  # every noisy level at 0.3 <= 0.5
    grid[2, 3] = 1.5  # a value in (1, 2]: not a fraction
    with pytest.raises(ValueError) as e:
        cb.thresholds(grid)
    assert str(e.value) == "accuracy grid must hold fractions in [0, 1] (not percentages, no NaN)"


# ------------------------------------------------------------------ leave-one-out Spearman


def test_leave_one_out_spearman_at_the_smallest_size_matches_scipy():
    x = np.array([0.3, 1.2, 0.7, 2.0])
    y = np.array([1.0, 3.0, 4.0, 2.0])
    from repro.analysis.correlation import spearman_leave_one_out

    rho, p = spearman_leave_one_out(x, y)  # n = 4: three pairs left each time
    for i in range(4):
        ref = stats.spearmanr(np.delete(x, i), np.delete(y, i))
        assert rho[i] == pytest.approx(ref.statistic, abs=1e-12)
        assert p[i] == pytest.approx(ref.pvalue, abs=1e-12)
    assert not math.isnan(float(rho.sum()))
    for bad in ((x[:3], y[:3]), (x, y[:3]), (np.ones((2, 2)), np.ones((2, 2)))):
        with pytest.raises(ValueError, match=r"needs two 1-d arrays of equal length >= 4"):
            spearman_leave_one_out(*bad)


# ------------------------------------------------------------------ shape bias: the probe's loop


def _recording_lookup():
    """The study-rule lookup model (tests/known_models.py), recording every input batch."""
    import torch

    from tests import known_models as km

    class Recorder(km.CueConflictLookup):
        def __init__(self):
            super().__init__()
            self.inputs: list[torch.Tensor] = []

        def forward(self, x):
            self.inputs.append(x.clone())
            return super().forward(x)

    return Recorder()


def test_shape_bias_probe_feeds_pixels_over_255_and_records_every_trial(torch_threads):
    import torch

    from tests import known_models as km

    source = km.cue_conflict_source()
    model, seen = _recording_lookup(), []
    res = run("shape_bias", model, source, batch_size=5, seed=7, progress=seen.append)
    # the model sees the uint8 pixels divided by 255 (white is exactly 1.0)
    fed = torch.cat(model.inputs)
    assert torch.equal(fed, torch.from_numpy(source.images).float() / 255.0)
    assert seen == [5, 10, 12]  # images done after each batch
    assert (res.measurement, res.version, res.seed) == ("shape_bias", "1", 7)
    assert res.values == {"n": 11.0, "shape": 4.0, "texture": 6.0}  # see test_probe_decisions.py
    assert [r["trial"] for r in res.records] == list(range(1, 13))
    cats = categories16()
    assert [r["category"] for r in res.records] == [cats[int(lab)] for lab in source.labels]
    assert {r["subj"] for r in res.records} == {"Recorder"}  # default: the model's class name
    # defaults: seed 0, batches of 64 images
    many = km.ArraySource(
        "many",
        np.repeat(source.images[:1], 70, axis=0),
        [source.labels[0]] * 70,
        [f"{cats[int(source.labels[0])]}{i}-{cats[5]}{i}.png" for i in range(70)],
    )
    seen.clear()
    res = run("shape_bias", _recording_lookup(), many, progress=seen.append)
    assert res.seed == 0 and seen == [64, 70]


def test_shape_bias_probe_refuses_wrong_logits_and_unreadable_textures(torch_threads):
    import torch

    from tests import known_models as km

    source = km.cue_conflict_source()

    class Shaped(torch.nn.Module):
        def __init__(self, shape):
            super().__init__()
            self.shape = shape

        def forward(self, x):
            return torch.zeros((x.shape[0], *self.shape))

    for shape in ((999,), (1000, 1)):
        with pytest.raises(ValueError) as e:
            run("shape_bias", Shaped(shape), source, batch_size=4)
        assert str(e.value) == f"model must return (N, 1000) logits, got {(4, *shape)}"
    cats = categories16()
    bad = km.ArraySource(
        "src", source.images[:2], [0, 0], [f"{cats[0]}1-{cats[1]}2.png", f"{cats[0]}3-xyz4.png"]
    )
    with pytest.raises(DataError) as e:
        run("shape_bias", _recording_lookup(), bad)
    assert str(e.value) == (
        f"src: image {cats[0]}3-xyz4.png: cannot read a texture class from the name; expected "
        "<shape><n>-<texture><n>.png with 16-class names (e.g. airplane1-bicycle2.png)"
    )
    # the probe checks each label against the shape class in the image's name
    disagrees = km.ArraySource("src", source.images[:1], [2], [f"{cats[0]}1-{cats[1]}2.png"])
    with pytest.raises(
        DataError, match=r"label 2 \(.*\) disagrees with the shape class in its name"
    ):
        run("shape_bias", _recording_lookup(), disagrees)
    # a label decides the shape class where the name holds none: the records say the label's class
    unnamed = km.ArraySource("src", source.images[:1], [2], [f"img1-{cats[1]}2.png"])
    assert [r["category"] for r in run("shape_bias", _recording_lookup(), unnamed).records] == [
        cats[2]
    ]
    wrong_label = km.ArraySource("src", source.images[:1], [16], [f"{cats[0]}1-{cats[1]}2.png"])
    with pytest.raises(DataError, match=r"^src: image .*: label 16 is not a 16-class index"):
        run("shape_bias", _recording_lookup(), wrong_label)


# ------------------------------------------------------------- spectral: the filters and the probe


def _study_filter(img: np.ndarray, cutoff: float, kind: str) -> np.ndarray:
    """METHODS' per-image definition: real(ifft2(ifftshift(fftshift(fft2(x))
    * mask))).clip(0, 1)."""
    mask = sp.box_mask(img.shape[-1], cutoff, kind)
    spec = np.fft.fftshift(np.fft.fft2(img), axes=(-2, -1)) * mask
    return np.real(np.fft.ifft2(np.fft.ifftshift(spec, axes=(-2, -1)))).clip(0, 1)


@pytest.mark.parametrize("size", [8, 9])
def test_filtered_images_match_the_study_definition_at_even_and_odd_sizes(torch_threads, size):
    import torch

    from repro.probes.spectral import filtered

    rng = np.random.default_rng(size)
    x = rng.random((2, 3, size, size)).astype(np.float32)
    out = dict(filtered(torch.from_numpy(x)))
    assert len(out) == 22
    for name, kind, cutoff in sp.conditions():
        got = out[name]
        assert got.dtype == torch.float32 and tuple(got.shape) == x.shape, name
        want = _study_filter(x.astype(np.float64), cutoff, kind)
        assert np.abs(got.numpy() - want).max() < 1e-5, name
    # the clip matters on these inputs: unclipped high-pass images go below 0, low-pass ones above 1
    assert float(out["HFC/0.5"].min()) == 0.0 and float(out["LFC/0.5"].max()) <= 1.0
    for bad in ((1, 3, 8, 6), (3, 8, 8)):
        with pytest.raises(ValueError) as e:
            list(filtered(torch.zeros(bad)))
        assert str(e.value) == f"spectral filter needs square images (N, C, S, S), got {bad}"


class _Constant:
    """A model that answers class ``c`` for every image."""

    def __new__(cls, c: int):
        import torch

        class Constant(torch.nn.Module):
            def forward(self, x):
                out = torch.zeros((x.shape[0], 1000))
                out[:, c] = 1.0
                return out

        return Constant()


def test_spectral_probe_with_one_and_with_no_correct_clean_image(torch_threads):
    from tests import known_models as km

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (70, 3, 8, 8), dtype=np.uint8)
    labels = [3] + [
        4
    ] * 69  # the constant model (class 3) is right on image 0 only, in every condition
    source = km.ArraySource("spec", images, labels, [f"i{i}.png" for i in range(70)])
    seen: list[int] = []
    res = run("spectral", _Constant(3), source, progress=seen.append)
    assert seen == [64, 70]  # default batches of 64
    assert (res.measurement, res.version, res.seed) == ("spectral", "1", None)
    assert {c.condition: (c.k, c.n) for c in res.conditions} == {
        name: (1, 70) for name in ["clean", *(n for n, _, _ in sp.conditions())]
    }
    assert res.values["low_frequency_bias"] == 1.0 and res.values["high_frequency_bias"] == 1.0
    assert res.values["LFC/0.1"] == 1.0 and len(res.values) == 24
    none_right = run("spectral", _Constant(7), source)
    assert none_right.values == {"low_frequency_bias": None, "high_frequency_bias": None}


# ------------------------------------------------------------------ shape bias: the decisions file


def test_decisions_file_round_trip_keeps_every_row_across_blank_lines(tmp_path):
    from repro.scoring.shape_bias import (
        COLUMNS,
        decision_rows,
        read_decisions_csv,
        shape_bias,
        write_decisions_csv,
    )

    cats = categories16()
    names = [f"{cats[i % 16]}{i}-{cats[(i + 1) % 16]}{i}.png" for i in range(6)]
    decisions = [
        cats[i % 16] if i % 3 else cats[(i + 1) % 16] for i in range(6)
    ]  # 4 shape, 2 texture
    rows = decision_rows(decisions, names, subj="m")
    assert [r["rt"] for r in rows] == ["NaN"] * 6 and [r["condition"] for r in rows] == ["NaN"] * 6
    path = write_decisions_csv(rows, tmp_path / "a" / "b" / "decisions.csv")  # parent folders made
    raw = path.read_bytes()
    assert b"\r" not in raw and raw.startswith((",".join(COLUMNS) + "\n").encode())
    assert sorted(p.name for p in path.parent.iterdir()) == ["decisions.csv"]  # no temporary left
    # a blank line in the middle of the file is skipped, not the end of the file
    lines = raw.decode().splitlines(keepends=True)
    path.write_text("".join(lines[:3]) + "\n" + "".join(lines[3:]))
    back = read_decisions_csv(path)
    assert len(back) == 6 and [r["object_response"] for r in back] == decisions
    score = shape_bias(back)
    assert (score.shape, score.texture, score.n) == (4, 2, 6)
    with pytest.raises(ValueError) as e:
        decision_rows(decisions, names[:5], subj="m")
    assert str(e.value) == "6 decisions for 5 images"


def test_decisions_from_probabilities_with_the_mapping_given_by_name(torch_threads):
    import torch

    from repro.datasets.categories16 import DEFAULT_MAPPING
    from repro.scoring.shape_bias import decision_from_probabilities
    from tests import known_models as km

    probs = torch.softmax(km.cue_conflict_logit_table().double(), dim=1).numpy()
    by_default = decision_from_probabilities(probs)
    assert decision_from_probabilities(probs, DEFAULT_MAPPING) == by_default
    assert by_default[:5] == [
        "knife",
        "oven",
        "bear",
        "car",
        "elephant",
    ]  # the table's cases, see test_probe_decisions
