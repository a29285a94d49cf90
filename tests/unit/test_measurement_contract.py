"""Contract of the measurement registry (``repro.measurements.registry.MEASUREMENTS``) against the
study's protocol, METHODS.md sections 2 and 3. Every expected value below is written out here
from METHODS.md, not read from the code: the dataset each measurement reads (its size, its
preprocessing), its decision rule, stimuli, scorer and passes per image with which fixed
arguments, the summarizer and the columns it fills. A measurement added to the registry fails
``test_every_measurement_has_a_contract`` until its contract is written here.

The summarizers are checked on synthetic probe results with hand-computed answers (e.g. the
PGD published denominator 50,048 of quirk Q2, the 19-corruption ImageNet-C mean of quirk Q3).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from repro.base.registry import resolve_lazy
from repro.base.results import ConditionCount, ProbeResult
from repro.datasets import specs as ds
from repro.measurements import columns as cols
from repro.measurements import registry as ms

pytestmark = pytest.mark.unit

RESIZE_CROP = (
    "resize256-bilinear/centercrop224"  # METHODS 1: Resize(256) (PIL bilinear), CenterCrop(224)
)
AS_IS = "as-is-224"  # ToTensor only, files already 224 px

CLASSIFY = (
    "repro.benchmarks.classify:Classify"  # module paths of today's layout (update when they move)
)
STYLIZED = "repro.benchmarks.stylized:Stylized"
TOP1 = "repro.probes._common:Top1"
BENCH = "repro.scoring.benchmarks"
C15 = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",
    "snow",
    "frost",
    "fog",
    "brightness",
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
)
C_EXTRA = ("speckle_noise", "gaussian_blur", "spatter", "saturate")  # METHODS Q3
CBAR10 = (
    "blue_noise_sample",
    "brownish_noise",
    "caustic_refraction",
    "checkerboard_cutout",
    "cocentric_sine_waves",
    "inverse_sparkles",
    "perlin_noise",
    "plasma_noise",
    "single_frequency_greyscale",
    "sparkles",
)  # Mintun et al. 2021
SPECTRAL_CUTOFFS = ("0.01", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.99")


@dataclass(frozen=True)
class Contract:
    dataset: str
    images: int  # per condition
    preprocessing: str
    decision: str  # the decision rule
    summarize: str
    columns: tuple[str, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)  # exact, after resolving Lazy values
    conditions: tuple[str, ...] = ()  # corruption/severity sub-folders
    seed: int = 0
    stimuli: str = ""  # the maker of what each image is shown as ("": the image as it is)
    score: str = ""  # the scorer
    passes: tuple[int, int] = (1, 0)  # forward, backward passes per image (METHODS 7)
    seeded: bool = False  # its numbers depend on the seed


CONTRACTS: dict[str, Contract] = {
    "imagenet": Contract(
        "imagenet_val",
        50_000,
        RESIZE_CROP,
        CLASSIFY,
        "imagenet",
        ("top1_acc/imagenet",),
        score=f"{BENCH}:score_classify",
    ),
    "imagenet_v2": Contract(
        "imagenet_v2",
        10_000,
        RESIZE_CROP,
        CLASSIFY,
        "imagenet_v2",
        ("top1_acc/imagenet-v2",),
        score=f"{BENCH}:score_classify",
    ),
    "imagenet_real": Contract(
        "imagenet_val",
        50_000,
        RESIZE_CROP,
        CLASSIFY,
        "imagenet_real",
        ("top1_acc/imagenet-real",),
        score=f"{BENCH}:score_classify",
    ),
    "imagenet_a": Contract(
        "imagenet_a",
        7_500,
        RESIZE_CROP,
        CLASSIFY,
        "imagenet_a",
        ("top1_acc/imagenet-a",),
        kwargs={"class_subset": "200 ImageNet-A classes"},
        score=f"{BENCH}:score_classify",
    ),
    "imagenet_r": Contract(
        "imagenet_r",
        30_000,
        RESIZE_CROP,
        CLASSIFY,
        "imagenet_r",
        ("top1_acc/imagenet-r",),
        kwargs={"class_subset": "200 ImageNet-R classes"},
        score=f"{BENCH}:score_classify",
    ),
    "imagenet_sketch": Contract(
        "imagenet_sketch",
        50_889,
        RESIZE_CROP,
        CLASSIFY,
        "imagenet_sketch",
        ("top1_acc/imagenet-sketch",),
        score=f"{BENCH}:score_classify",
    ),
    # the top-1 count of each corruption/severity part (no per-image records, no scorer)
    "imagenet_c": Contract(
        "imagenet_c",
        50_000,
        AS_IS,
        CLASSIFY,
        "imagenet_c",
        ("top1_acc/imagenet-c",),
        conditions=tuple(f"{c}/{s}" for c in C15 + C_EXTRA for s in range(1, 6)),
    ),
    "imagenet_cbar": Contract(
        "imagenet_cbar",
        50_000,
        AS_IS,
        CLASSIFY,
        "imagenet_cbar",
        ("top1_acc/imagenet-cbar",),
        conditions=tuple(f"{c}/{s}" for c in CBAR10 for s in range(1, 6)),
    ),
    "stylized": Contract(
        "stylized",
        800,
        AS_IS,
        STYLIZED,
        "stylized",
        ("top1_acc/stylized",),
        score=f"{BENCH}:score_stylized",
    ),
    # a clean pass, 40 attack steps (a forward and a backward pass each) and the final pass
    "pgd_low": Contract(
        "imagenet_val",
        50_000,
        RESIZE_CROP,
        "repro.benchmarks.pgd:Robust",
        "pgd_low",
        ("top1_acc/PGD-40/low",),
        kwargs={"eps": 0.5 / 255, "steps": 40, "step_size": 2 / 255},
        stimuli="repro.benchmarks.pgd:maker",
        score=f"{BENCH}:score_pgd",
        passes=(42, 40),
        seeded=True,
    ),
    # issue 38: the same attack, each image stopped at its first misclassified iterate; its own
    # column (a protocol variant, never the study's), the passes per image at most pgd_low's
    "pgd_low_early_stop": Contract(
        "imagenet_val",
        50_000,
        RESIZE_CROP,
        "repro.benchmarks.pgd:Robust",
        "pgd_low_early_stop",
        ("top1_acc/PGD-40-early-stop/low",),
        kwargs={"eps": 0.5 / 255, "steps": 40, "step_size": 2 / 255, "rule": "early_stop"},
        stimuli="repro.benchmarks.pgd:maker",
        score=f"{BENCH}:score_pgd_early_stop",
        passes=(42, 40),
        seeded=True,
    ),
    "shape_bias": Contract(
        "cue_conflict",
        1_280,
        AS_IS,
        "repro.probes.shape_bias:ShapeBias",
        "shape_bias",
        ("shape-bias",),
        score="repro.scoring.shape_bias:score",
        seeded=True,
    ),
    # clean + 11 low-pass + 11 high-pass
    "spectral": Contract(
        "imagenet_val",
        50_000,
        RESIZE_CROP,
        TOP1,
        "spectral",
        tuple(f"metric/bandpass/{k}/{c}" for k in ("LFC", "HFC") for c in SPECTRAL_CUTOFFS),
        stimuli="repro.probes.spectral:maker",
        score="repro.scoring.spectral:score",
        passes=(23, 0),
    ),
    # METHODS 3 asks for white Gaussian noise; which generator draws it is ours: Philox4x32-10
    # (probe VERSION 4, issue 14), version 3's per-image PCG64 streams selectable by name; SD 0
    # once + 7 bands x 4 SDs
    "critical_band": Contract(
        "imagenet_val",
        50_000,
        RESIZE_CROP,
        TOP1,
        "critical_band",
        tuple(
            f"metric/criticalband/{k}"
            for k in ("bw_norm", "cf_norm", "pns_norm", "bw", "cf", "pns")
        ),
        kwargs={"noise": "philox"},
        stimuli="repro.probes.critical_band:maker",
        score="repro.scoring.critical_band:score",
        passes=(29, 0),
        seeded=True,
    ),
}


def accepted_parameters(m: ms.Measurement) -> set[str]:
    """The keyword arguments the measurement's maker, decision rule and scorer name."""
    fns = [resolve_lazy(ref) for ref in (m.stimuli.make, m.decision, m.score) if ref]
    return {
        p.name
        for f in fns
        for p in inspect.signature(f.__init__ if inspect.isclass(f) else f).parameters.values()
        if p.kind is p.KEYWORD_ONLY
    }


def test_every_measurement_has_a_contract():
    """A new measurement fails here until its METHODS.md contract is added to CONTRACTS (the
    study protocol) or to CONTRACTS_16 (the 16-class protocol of Subramanian et al. 2023,
    tests/unit/test_measurement_contract_16class.py); no measurement has two."""
    from tests.unit.test_measurement_contract_16class import CONTRACTS_16

    assert not set(CONTRACTS) & set(CONTRACTS_16)
    known = set(CONTRACTS) | set(CONTRACTS_16)
    assert sorted(ms.names()) == sorted(known), (
        f"without contract: {sorted(set(ms.names()) - known)}; "
        f"contract without measurement: {sorted(known - set(ms.names()))}"
    )


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_measurement_matches_its_contract(name):
    m, c = ms.get(name), CONTRACTS[name]
    assert m.name == name
    assert m.dataset == c.dataset
    assert (m.decision, m.stimuli.make, m.score) == (c.decision, c.stimuli, c.score)
    assert (
        (m.passes().forward, m.passes().backward) == c.passes and m.seeded == c.seeded and not m.run
    )
    assert m.summarize == f"{cols.__name__}:{c.summarize}"
    assert m.columns == c.columns
    assert m.seed == c.seed
    assert set(m.kwargs) == set(c.kwargs)
    plain = {k: v for k, v in m.kwargs.items() if isinstance(v, (str, int, float))}
    assert plain == {k: v for k, v in c.kwargs.items() if k in plain}, (
        name
    )  # written-out values, exactly
    spec = ds.get_spec(m.dataset)
    assert spec.total == c.images and c.preprocessing in spec.preprocessing
    assert tuple(spec.conditions) == (c.conditions or ("",))
    if spec.preprocessing.endswith(AS_IS + "/v1"):
        assert spec.image_size == 224
    # its pieces take the registered arguments (the probe loop refuses any none of them names)
    assert set(m.kwargs) <= accepted_parameters(m), name
    assert callable(resolve_lazy(m.summarize))


def test_pgd_low_is_the_studys_linf_pgd_40():
    """METHODS 2: LinfPGD(steps=40, abs_stepsize=2/255), eps = 0.5/255 in [0, 1] pixel units."""
    kw = ms.get("pgd_low").resolve_kwargs()
    assert kw == {"eps": 0.5 / 255, "steps": 40, "step_size": 2 / 255}
    assert kw["eps"] == pytest.approx(0.00196078, abs=1e-8) and kw["step_size"] == pytest.approx(
        0.00784314, abs=1e-8
    )
    assert kw["step_size"] / kw["eps"] == pytest.approx(4.0)  # the absolute step is 4 x eps
    assert cols.PGD_PUBLISHED_BATCH == 128


def test_pgd_low_starts_at_a_random_point_of_the_eps_ball(monkeypatch, torch_threads):
    """Random start uniform in [-eps, eps] (METHODS 2): the registered run draws it with the
    registered eps, and the attack starts from it (not from x0)."""
    import torch

    from repro.benchmarks import pgd
    from repro.datasets.base import ArraySource
    from repro.measurements.loop import run

    drawn: list[tuple[float, torch.Tensor]] = []
    real = pgd.random_start_noise

    def spy(names, shape, *, seed, eps):
        noise = real(names, shape, seed=seed, eps=eps)
        drawn.append((eps, noise))
        return noise

    monkeypatch.setattr(pgd, "random_start_noise", spy)

    class Linear(torch.nn.Module):
        def forward(self, x):
            z = x.flatten(1).mean(dim=1, keepdim=True) - 0.5
            return torch.cat([z, -z, torch.zeros(len(x), 998)], dim=1)

    images = np.full((4, 3, 8, 8), 128, dtype=np.uint8)
    result = run(
        "pgd_low", Linear(), ArraySource("tiny", images, [0, 1, 0, 1], list("abcd")), batch_size=4
    )
    assert len(drawn) == 1 and drawn[0][0] == 0.5 / 255
    noise = drawn[0][1]
    assert float(noise.abs().max()) <= 0.5 / 255 and float(noise.abs().max()) > 0.4 / 255
    assert float(noise.std()) > 0.1 / 255  # really random, not zeros
    assert result.values["eps"] == 0.5 / 255 and result.values["steps"] == 40


def test_shape_bias_and_stylized_use_the_mean_16_class_decision():
    """METHODS 3: softmax over 1000, MEAN probability over each category's ImageNet classes
    (207 classes in all), argmax; no resize of the 224 px cue-conflict images."""
    from repro.datasets.categories16 import get_mapping

    mp = get_mapping()
    assert mp.aggregation == "mean" and mp.n_classes == 207
    assert mp.categories == (
        "airplane",
        "bear",
        "bicycle",
        "bird",
        "boat",
        "bottle",
        "car",
        "cat",
        "chair",
        "clock",
        "dog",
        "elephant",
        "keyboard",
        "knife",
        "oven",
        "truck",
    )
    assert ms.get("shape_bias").kwargs == {} and ms.get("stylized").kwargs == {}
    assert ds.get_spec("cue_conflict").preprocessing == ds.AS_IS_224


def test_spectral_protocol():
    """METHODS 3: cut-offs 0.01, 0.1 .. 0.9, 0.99; r = int(c * 112) low-pass, int((1 - c) * 112)
    high-pass at 224 px; biases = mean ratio at c = 0.1..0.5."""
    from repro.scoring import spectral as sp

    assert sp.CUTOFFS == tuple(float(c) for c in SPECTRAL_CUTOFFS)
    assert sp.BIAS_CUTOFFS == (0.1, 0.2, 0.3, 0.4, 0.5)
    assert len(sp.conditions()) == 22
    assert [sp.radius(224, c, "low") for c in sp.CUTOFFS] == [
        1,
        11,
        22,
        33,
        44,
        56,
        67,
        78,
        89,
        100,
        110,
    ]
    assert [sp.radius(224, c, "high") for c in sp.CUTOFFS] == [
        110,
        100,
        89,
        78,
        67,
        56,
        44,
        33,
        22,
        11,
        1,
    ]


def test_critical_band_protocol():
    """METHODS 3: SD in {0, .02, .04, .08, .16}, 7 bands centred at 1.75 * 2^f, 29 conditions
    (SD 0 once + 7 x 4), contrast (x - mean) * 0.2 + 0.449, 50% criterion."""
    from repro.probes import critical_band as cbp
    from repro.probes import noise as nz
    from repro.scoring import critical_band as cb

    conds = cbp.conditions()
    assert len(conds) == 29 and conds[0] == ("sd=0", None, 0.0)
    assert sorted({sd for _, _, sd in conds[1:]}) == [0.02, 0.04, 0.08, 0.16]
    assert sorted({b for _, b, _ in conds[1:]}) == list(range(7))
    assert cb.NOISE_SDS == (0.0, 0.02, 0.04, 0.08, 0.16) and cb.N_BANDS == 7 and cb.CRITERION == 0.5
    assert [cb.band_centre(f) for f in range(7)] == [1.75 * 2**f for f in range(7)]
    assert nz.CONTRAST == 0.2 and nz.GRAY_MEAN == 0.449


def test_critical_band_noise_generator_and_version():
    """The registered noise is Philox (probe VERSION 4, stored as version 4+1); version 3's
    per-image PCG64 streams stay selectable by name and give version 3; any
    other name is refused."""
    from repro.base.errors import ConfigError
    from repro.probes import critical_band as cbp
    from repro.probes import noise as nz

    m = ms.get("critical_band")
    assert m.kwargs == {"noise": "philox"} and m.resolve_kwargs() == {"noise": "philox"}
    assert cbp.VERSION == "4" and m.version() == "4+1"
    assert cbp.VERSIONS == {"philox": "4", "pcg64": "3"} and tuple(cbp.VERSIONS) == tuple(nz.NOISES)
    assert cbp.maker(seed=0)[0] == "4" and cbp.maker(seed=0, noise="pcg64")[0] == "3"
    with pytest.raises(ConfigError, match="noise"):
        cbp.maker(seed=0, noise="threefry")


def test_a_registered_noise_generator_gives_the_registered_version():
    """A measurement that names its noise generator stores the version that generator gives
    (``Measurement.version`` reads the module's VERSION; a pcg64 entry would store version 3
    stimuli under version 4)."""
    import importlib

    for name in ms.names():
        m = ms.get(name)
        if "noise" in m.kwargs:
            module = importlib.import_module(m.versioned_by)
            assert module.VERSIONS[m.kwargs["noise"]] == module.VERSION, name
            assert (
                resolve_lazy(m.stimuli.make)(seed=0, noise=m.kwargs["noise"])[0] == module.VERSION
            ), name


# ------------------------------------------------------------------ summarizers, hand-computed


def _ctx(dataset: str, n: int) -> cols.SummaryContext:
    return cols.SummaryContext(dataset, n)


def _summarize(name: str, result: ProbeResult, n: int):
    m = ms.get(name)
    return resolve_lazy(m.summarize)(result, _ctx(m.dataset, n))


def test_pgd_summary_standard_and_q2_published_denominator():
    # 50,000 images, 49,000 successes: standard 1,000/50,000 = 2 %; published 1 - 49,000/50,048
    res = ProbeResult(
        "pgd",
        "1",
        0,
        [
            ConditionCount("clean", 38_000, 50_000),
            ConditionCount("robust", 1_000, 50_000),
            ConditionCount("robust_published", 1_048, 50_048),
        ],
    )
    out = {v.variant: v for v in _summarize("pgd_low", res, 50_000)}
    assert out["standard"].column == out["published"].column == "top1_acc/PGD-40/low"
    assert (out["standard"].k, out["standard"].n) == (1_000, 50_000) and out[
        "standard"
    ].value == pytest.approx(2.0)
    assert (out["published"].k, out["published"].n) == (1_048, 50_048)
    assert out["published"].value == pytest.approx(100 * (1 - 49_000 / 50_048))


def test_imagenet_c_summary_is_the_mean_over_19_corruptions_published_and_15_standard():
    rng = np.random.default_rng(0)
    k = {(c, s): int(rng.integers(0, 51)) for c in C15 + C_EXTRA for s in range(1, 6)}
    res = ProbeResult(
        "conditions", "1", 0, [ConditionCount(f"{c}/{s}", v, 50) for (c, s), v in k.items()]
    )
    out = {
        v.variant: v for v in _summarize("imagenet_c", res, 50) if v.column == "top1_acc/imagenet-c"
    }
    assert out["published"].value == pytest.approx(100 * sum(k.values()) / (95 * 50))
    assert out["standard"].value == pytest.approx(
        100 * sum(v for (c, _), v in k.items() if c in C15) / (75 * 50)
    )
    assert out["published"].value != pytest.approx(out["standard"].value)


def test_imagenet_cbar_summary_is_the_mean_over_10_corruptions_x_5_severities():
    k = {(c, s): (i * 7 + s * 3) % 51 for i, c in enumerate(CBAR10) for s in range(1, 6)}
    res = ProbeResult(
        "conditions", "1", 0, [ConditionCount(f"{c}/{s}", v, 50) for (c, s), v in k.items()]
    )
    (out,) = _summarize("imagenet_cbar", res, 50)
    assert out.column == "top1_acc/imagenet-cbar" and out.value == pytest.approx(
        100 * sum(k.values()) / (50 * 50)
    )


def test_spectral_summary_divides_by_the_clean_count():
    conds = [ConditionCount("clean", 40, 50)]
    conds += [
        ConditionCount(f"{t}/{c}", 10 + i, 50)
        for t in ("LFC", "HFC")
        for i, c in enumerate(SPECTRAL_CUTOFFS)
    ]
    out = {
        v.column: v.value
        for v in _summarize("spectral", ProbeResult("spectral", "1", None, conds), 50)
    }
    assert set(out) == set(CONTRACTS["spectral"].columns)
    assert out["metric/bandpass/LFC/0.01"] == pytest.approx((10 / 50) / (40 / 50))  # 0.25
    assert out["metric/bandpass/HFC/0.99"] == pytest.approx((20 / 50) / (40 / 50))  # 0.5


def test_shape_bias_summary_counts_shape_and_texture_decisions():
    rows = [
        {"category": "cat", "imagename": "cat1-dog2.png", "object_response": r}
        for r in ("cat", "cat", "dog", "knife")
    ]
    rows.append(
        {"category": "cat", "imagename": "cat3-cat4.png", "object_response": "cat"}
    )  # dropped
    (out,) = _summarize("shape_bias", ProbeResult("shape_bias", "1", 0, [], records=rows), 5)
    assert (
        out.column == "shape-bias"
        and (out.k, out.n) == (2, 3)
        and out.value == pytest.approx(2 / 3)
    )


def test_critical_band_summary_passes_the_fit_through_and_marks_undefined():
    res = ProbeResult(
        "critical_band",
        "3",
        0,
        [],
        values={
            "bw_norm": 2.0,
            "cf_norm": 14.0,
            "pns_norm": 1.0,
            "bw": None,
            "cf": None,
            "pns": None,
        },
    )
    out = {v.column: v.value for v in _summarize("critical_band", res, 10)}
    assert out == {
        "metric/criticalband/bw_norm": 2.0,
        "metric/criticalband/cf_norm": 14.0,
        "metric/criticalband/pns_norm": 1.0,
        "metric/criticalband/bw": None,
        "metric/criticalband/cf": None,
        "metric/criticalband/pns": None,
    }
    assert math.isclose(out["metric/criticalband/cf_norm"], 1.75 * 2**3)
