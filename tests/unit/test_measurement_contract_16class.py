"""Contract of the three 16-class measurements of the measurement registry
(``repro.measurements.registry``) against METHODS.md section 3, "Critical band, the original
protocol" (Subramanian et al. 2023): the same noise, bands, thresholds and fit as the study's
critical band, but on GraySplit (grayscale ImageNet validation images of the 16 model-vs-human
categories, 224 px, used as they are; splits 0-4 measured, ``train`` fits their psychometric
functions) with a 16-class decision (mean softmax over each category's ImageNet classes, as for
shape bias) and the ABSOLUTE 50% criterion (chance is 1/16); their pre-made stimuli (CBMSplit)
hold one condition per image, about 30 images per (SD, band) cell over splits 0-4.

Every expected value is written out here from METHODS.md, not read from the code. Written in the
shape of ``tests/unit/test_measurement_contract.py`` (``Contract`` per measurement) so that the
entries can be folded into its ``CONTRACTS``; the protocol-specific checks (known-answer grid
with the METHODS.md reference thresholds, columns that never are benchmark.csv's) stay here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from repro.base.registry import resolve_lazy
from repro.base.results import ConditionCount, ProbeResult
from repro.datasets import specs as ds
from repro.measurements import columns as cols
from repro.measurements import registry as ms
from repro.measurements.stimuli import Passes
from tests.unit.test_measurement_contract import accepted_parameters

pytestmark = pytest.mark.unit

AS_IS = "as-is-224"  # ToTensor only, files already 224 px: "used as they are"
P16 = "repro.probes.sixteen_class"
SD = ("0.02", "0.04", "0.08", "0.16")
# METHODS 3: 29 conditions, SD 0 once (all bands pooled) + 7 bands x 4 SDs, named as
# the study's probe names them
CB_CONDITIONS = ("sd=0",) + tuple(f"f={f}/sd={s}" for f in range(7) for s in SD)
SPECTRAL_CUTOFFS = ("0.01", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.99")
SPECTRAL_CONDITIONS = ("clean",) + tuple(
    f"{k}/{c}" for k in ("LFC", "HFC") for c in SPECTRAL_CUTOFFS
)
FIT_KEYS = (
    "bw",
    "cf",
    "pns",
    "bw_norm",
    "cf_norm",
    "pns_norm",
)  # absolute first: the protocol's criterion


@dataclass(frozen=True)
class Contract:
    dataset: str
    images: int  # the measured splits 0-4
    preprocessing: str
    decision: str  # the decision rule
    summarize: str
    columns: tuple[str, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    conditions: tuple[str, ...] = ()  # dataset sub-folders (none: the splits are not conditions)
    seed: int = 0
    probe_conditions: tuple[str, ...] = ()  # the ProbeResult's conditions, in order
    variant_of: str = ""  # the study probe whose 16-class variant it is
    protocol: str = "subramanian2023-16class"
    stimuli: str = ""  # the maker of what each image is shown as ("": the image as it is)
    score: str = ""
    passes: int = 1  # forward passes per image (no backward)
    seeded: bool = False


CONTRACTS_16: dict[str, Contract] = {
    "critical_band_16": Contract(
        "graysplit",
        1_050,
        AS_IS,
        f"{P16}:SixteenRecorded",
        "critical_band_16",
        tuple(f"metric/criticalband-16class/{k}" for k in FIT_KEYS),
        probe_conditions=CB_CONDITIONS,
        variant_of="critical_band",
        stimuli="repro.probes.critical_band:maker",
        score="repro.scoring.critical_band:score_16",
        passes=29,
        seeded=True,
    ),
    "critical_band_16_premade": Contract(
        "cbmsplit",
        1_050,
        AS_IS,
        f"{P16}:Premade",
        "critical_band_16_premade",
        tuple(f"metric/criticalband-16class-premade/{k}" for k in FIT_KEYS),
        probe_conditions=CB_CONDITIONS,
        variant_of="critical_band",
        score="repro.scoring.critical_band:score_16",
    ),
    "spectral_16": Contract(
        "graysplit",
        1_050,
        AS_IS,
        f"{P16}:Sixteen",
        "spectral_16",
        tuple(f"metric/bandpass-16class/{k}/{c}" for k in ("LFC", "HFC") for c in SPECTRAL_CUTOFFS),
        probe_conditions=SPECTRAL_CONDITIONS,
        variant_of="spectral",
        stimuli="repro.probes.spectral:maker",
        score="repro.scoring.spectral:score",
        passes=23,
    ),
}


def test_the_16_class_measurements_are_exactly_these():
    variants = sorted(n for n in ms.names() if ms.get(n).variant_of and ms.get(n).kind == "probe")
    assert variants == sorted(CONTRACTS_16)


@pytest.mark.parametrize("name", sorted(CONTRACTS_16))
def test_measurement_matches_its_contract(name):
    m, c = ms.get(name), CONTRACTS_16[name]
    assert m.name == name
    assert m.dataset == c.dataset
    assert (m.decision, m.stimuli.make, m.score) == (c.decision, c.stimuli, c.score)
    assert m.passes() == Passes(
        c.passes, 0, c.passes - 1 if c.stimuli.endswith("critical_band:maker") else 0
    )
    assert m.conditions() == c.probe_conditions and m.seeded == c.seeded
    assert m.summarize == f"{cols.__name__}:{c.summarize}"
    assert m.columns == c.columns
    assert m.seed == c.seed
    assert (
        m.kwargs == c.kwargs == {}
    )  # the decision's category mapping is the probe's default (mean, below)
    assert (m.kind, m.variant_of, m.protocol) == ("probe", c.variant_of, c.protocol)
    spec = ds.get_spec(m.dataset)
    assert spec.total == c.images and c.preprocessing in spec.preprocessing
    assert (
        spec.image_size == 224
        and spec.label_space == "categories16"
        and spec.classes == "categories16"
    )
    assert tuple(spec.conditions) == (c.conditions or ("",))
    assert callable(resolve_lazy(m.summarize)) and "mapping" in accepted_parameters(m)


def test_the_study_protocol_stays_each_probes_default():
    """The 16-class variants are picked by their stimuli; a probe's default is the study's."""
    assert ms.probe_measurement("critical-band").name == "critical_band"
    assert ms.probe_measurement("spectral").name == "spectral"
    assert ms.probe_measurement("critical-band", "cbmsplit").name == "critical_band_16_premade"
    assert ms.probe_measurement("critical-band", "graysplit").name == "critical_band_16"
    assert ms.probe_measurement("spectral", "graysplit").name == "spectral_16"
    assert set(ms.probes()) == {"shape-bias", "spectral", "critical-band"}
    from repro.base.errors import ConfigError

    with pytest.raises(ConfigError) as bad:
        ms.probe_measurement("spectral", "cbmsplit")
    assert str(bad.value) == (
        "probe spectral does not read 'cbmsplit' stimuli (it reads: imagenet_val, graysplit)"
    )


def test_graysplit_and_cbmsplit_splits_and_cells():
    """GraySplit: 1,100 images, 210 in each split 0-4 and 50 in train; only 0-4 are measured."""
    from repro.datasets import critical_band_stimuli as cbs

    assert cbs.SPLITS == ("0", "1", "2", "3", "4", "train") and cbs.PROBE_SPLITS == (
        "0",
        "1",
        "2",
        "3",
        "4",
    )
    assert (
        sum(cbs.PER_SPLIT.values()) == 1_100
        and sum(cbs.PER_SPLIT[s] for s in cbs.PROBE_SPLITS) == 1_050
    )
    assert cbs.cbm_condition("0/12_cbm_noise0.04_freq3_gray_g_knife.JPEG") == (0.04, 3)
    assert cbs.CBM_NOISE_SDS == (0.0, 0.02, 0.04, 0.08, 0.16) and cbs.CBM_BANDS == 7


def test_the_decision_is_the_mean_softmax_over_each_categorys_classes():
    """METHODS 3: mean probability over each category's ImageNet classes (207 in all), argmax."""
    torch = pytest.importorskip("torch")
    from repro.datasets.categories16 import get_mapping
    from repro.probes import sixteen_class as p16

    mp = get_mapping()
    assert mp.aggregation == "mean" and mp.n_classes == 207 and len(mp.categories) == 16
    idx = dict(zip(mp.categories, mp.indices, strict=True))
    row = torch.full((1, 1000), -20.0)
    e0, e1 = idx["elephant"]
    row[0, e0], row[0, e1] = 10.0, -10.0  # softmax mean: elephant; raw-logit mean: keyboard
    row[0, list(idx["keyboard"])] = 3.0
    assert [mp.categories[i] for i in p16.decide(row, mp)] == ["elephant"]


# --------------------------------------------------------- known-answer grid (METHODS 3 reference)


def _premade_grid() -> tuple[Any, dict[str, tuple[int, int]]]:
    """CBMSplit-named images whose coded answer is right in a chosen number of each cell's 10.

    SD 0: 8 of 10 in every band (pooled 56 / 70 = 0.8). Bands 0-3 and 6: 6 of 10 at every SD
    (0.6 > 0.5 absolute; 0.75 relative). Bands 4 and 5: 7, 6, 5, 3 of 10 at SD 0.02, 0.04, 0.08,
    0.16. Counting from SD 0.16 down until accuracy EXCEEDS 50%: absolute thresholds
    [0, 0, 0, 0, 2, 2, 0] (0.3 and 0.5 fail, 0.6 passes), relative to 0.8 [0, 0, 0, 0, 1, 1, 0]
    (0.375 fails, 0.625 passes).
    """
    from repro.datasets.base import ArraySource
    from repro.datasets.specs import CATEGORIES16

    correct = {0.0: [8] * 7}
    for sd, k45 in zip((0.02, 0.04, 0.08, 0.16), (7, 6, 5, 3), strict=True):
        correct[sd] = [6, 6, 6, 6, k45, k45, 6]
    images, labels, names, truth = [], [], [], {}
    i = 0
    for sd, per_band in correct.items():
        for band, k in enumerate(per_band):
            for j in range(10):
                label = (i * 7) % 16
                answer = label if j < k else (label + 3) % 16
                img = np.full((3, 8, 8), 100, dtype=np.uint8)
                img[0, 0, 0] = 8 + 15 * answer
                images.append(img)
                labels.append(label)
                names.append(
                    f"{i % 5}/{i}_cbm_noise{sd:g}_freq{band}_gray_g_{CATEGORIES16[label]}.JPEG"
                )
                i += 1
            cond = "sd=0" if sd == 0 else f"f={band}/sd={sd:g}"
            kk, nn = truth.get(cond, (0, 0))
            truth[cond] = (kk + k, nn + 10)
    return ArraySource("cbm-grid", np.stack(images), labels, names), truth


def _code_reader():
    import torch

    from repro.datasets.categories16 import get_mapping

    mp = get_mapping()
    table = torch.full((16, 1000), -5.0)
    for c, classes in enumerate(mp.indices):
        table[c, list(classes)] = 8.0

    class CodeReader(torch.nn.Module):
        """Answers the category coded in the red channel of pixel (0, 0): 8 + 15 * index."""

        def forward(self, x):
            return table[torch.round((x[:, 0, 0, 0] * 255 - 8) / 15).long().clamp(0, 15)]

    return CodeReader()


def test_premade_grid_thresholds_use_the_absolute_criterion_and_the_same_fit(torch_threads):
    """The METHODS 3 reference: thresholds [0,0,0,0,2,2,0] give bandwidth 1.00 octave, centre
    frequency 39.6 cycles/image, PNS 1.00; the headline value is the ABSOLUTE fit's centre."""
    from repro.measurements.loop import run

    src, truth = _premade_grid()
    m = ms.get("critical_band_16_premade")
    res = run(m, _code_reader(), src, batch_size=32)
    assert tuple(c.condition for c in res.conditions) == CB_CONDITIONS
    assert {c.condition: (c.k, c.n) for c in res.conditions} == truth and truth["sd=0"] == (56, 70)
    assert [res.values[f"threshold/f={f}"] for f in range(7)] == [0, 0, 0, 0, 2, 2, 0]
    assert [res.values[f"threshold_norm/f={f}"] for f in range(7)] == [0, 0, 0, 0, 1, 1, 0]
    assert res.values["bw"] == pytest.approx(1.00, abs=0.005)
    assert res.values["cf"] == pytest.approx(39.6, abs=0.05)
    assert res.values["pns"] == pytest.approx(1.00, abs=0.005)
    assert res.value == res.values["cf"] and res.values["cf_norm"] != pytest.approx(
        res.values["cf"], abs=0.05
    )
    out = {
        v.column: v.value
        for v in resolve_lazy(m.summarize)(res, cols.SummaryContext(m.dataset, len(src)))
    }
    assert out == {
        f"metric/criticalband-16class-premade/{k}": pytest.approx(res.values[k]) for k in FIT_KEYS
    }


def test_premade_grid_with_an_empty_cell_is_undefined_not_fitted(torch_threads):
    src, _ = _premade_grid()
    from repro.datasets.base import ArraySource
    from repro.measurements.loop import run

    keep = [i for i, n in enumerate(src.names) if "_noise0.16_freq6_" not in n]
    part = ArraySource("cbm-part", src.images[keep], src.labels[keep], [src.names[i] for i in keep])
    m = ms.get("critical_band_16_premade")
    res = run(m, _code_reader(), part, batch_size=32)
    assert {c.condition: c.n for c in res.conditions}["f=6/sd=0.16"] == 0
    out = {
        v.column: v
        for v in resolve_lazy(m.summarize)(res, cols.SummaryContext(m.dataset, len(part)))
    }
    assert set(out) == set(CONTRACTS_16["critical_band_16_premade"].columns)
    assert all(v.value is None and "undefined" in v.note for v in out.values())


def test_spectral_16_summary_divides_by_the_clean_count():
    conds = [ConditionCount("clean", 600, 1_050)]
    conds += [
        ConditionCount(f"{t}/{c}", 100 + 10 * i, 1_050)
        for t in ("LFC", "HFC")
        for i, c in enumerate(SPECTRAL_CUTOFFS)
    ]
    m = ms.get("spectral_16")
    out = {
        v.column: v.value
        for v in resolve_lazy(m.summarize)(
            ProbeResult("spectral_16", "1", None, conds), cols.SummaryContext(m.dataset, 1_050)
        )
    }
    assert set(out) == set(CONTRACTS_16["spectral_16"].columns)
    assert out["metric/bandpass-16class/LFC/0.01"] == pytest.approx(100 / 600)
    assert out["metric/bandpass-16class/HFC/0.99"] == pytest.approx(200 / 600)
