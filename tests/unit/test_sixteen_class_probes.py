"""The 16-class protocol (Subramanian et al. 2023) with known-answer inputs: the decision is
the MEAN SOFTMAX over a category's classes (logit rows built so that raw-logit means, sums
and maxima decide otherwise); the pre-made grid counts each file in its (SD, band) cell and
pools every SD-0 file into ``sd=0``; the synthesised grid and the spectral variant decide on
exactly the stimuli of the 1000-class probes; the CLI detects a CBMSplit folder."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from repro.base.errors import ConfigError  # noqa: E402
from repro.datasets.base import ArraySource  # noqa: E402
from repro.datasets.categories16 import get_mapping  # noqa: E402
from repro.datasets.specs import CATEGORIES16  # noqa: E402
from repro.measurements.loop import run, run_matched  # noqa: E402
from repro.measurements.probe_data import select  # noqa: E402
from repro.measurements.registry import probe_measurement  # noqa: E402
from repro.probes import critical_band as cb  # noqa: E402
from repro.probes import sixteen_class as p16  # noqa: E402
from repro.probes import spectral as sp  # noqa: E402

pytestmark = pytest.mark.unit
M = get_mapping()


def trap_rows() -> tuple[torch.Tensor, list[str]]:
    """Logit rows whose mean-softmax decision differs from the raw-logit mean, the sum and the max.

    Row 0: elephant's 2 classes at (10, -10), keyboard's 2 at (3, 3): softmax mean -> elephant,
    raw-logit mean -> keyboard (0 < 3). Row 1: airplane's 1 class at 5, dog's 109 classes at
    4.5: mean -> airplane, sum -> dog. Row 2: knife's 1 class at 3 (mean e^3 = 20.1), bear's 4
    at (3.5, -30, -30, -30) (mean e^3.5 / 4 = 8.3, max e^3.5 = 33.1), bird's 49 at 1.5 (sum
    49 e^1.5 = 219.6): mean -> knife, max -> bear, sum -> bird. Everything else at -20.
    """
    rows = torch.full((3, 1000), -20.0)
    idx = dict(zip(M.categories, M.indices, strict=True))
    e0, e1 = idx["elephant"]
    rows[0, e0], rows[0, e1] = 10.0, -10.0
    rows[0, list(idx["keyboard"])] = 3.0
    rows[1, list(idx["airplane"])] = 5.0
    rows[1, list(idx["dog"])] = 4.5
    rows[2, list(idx["bird"])] = 1.5
    rows[2, list(idx["knife"])] = 3.0
    rows[2, list(idx["bear"])] = torch.tensor([3.5, -30.0, -30.0, -30.0])
    return rows, ["elephant", "airplane", "knife"]


def test_decide_is_the_mean_of_the_softmax_per_category():
    rows, want = trap_rows()
    got = [M.categories[i] for i in p16.decide(rows, M)]
    assert got == want
    # the traps bite: other aggregations decide otherwise
    probs = torch.softmax(rows, 1).numpy()
    maxed = [
        M.categories[i]
        for i in np.argmax(np.stack([probs[:, list(ix)].max(1) for ix in M.indices], 1), axis=1)
    ]
    assert maxed[2] == "bear"
    raw_mean = [M.categories[i] for i in np.argmax(M.category_scores(rows.numpy()), axis=1)]
    assert raw_mean[0] == "keyboard"
    summed = [
        M.categories[i]
        for i in np.argmax(np.stack([probs[:, list(ix)].sum(1) for ix in M.indices], 1), axis=1)
    ]
    assert summed[1] == "dog" and summed[2] == "bird"
    assert got == M.decisions(torch.softmax(rows, 1).numpy())  # exactly the shape-bias decision


def category_logits(idx: torch.Tensor) -> torch.Tensor:
    table = torch.full((16, 1000), -5.0)
    for c, classes in enumerate(M.indices):
        table[c, list(classes)] = 8.0
    return table[idx]


class CodeReader(torch.nn.Module):
    """Answers the category coded in the red channel of pixel (0, 0): value 8 + 15 * index."""

    def forward(self, x):
        return category_logits(torch.round((x[:, 0, 0, 0] * 255 - 8) / 15).long().clamp(0, 15))


def premade_source():
    """One image per (SD, band) cell, twice; the coded answer is wrong for every third image."""
    images, labels, names, truth = [], [], [], {}
    i = 0
    for rep in range(2):
        for sd in (0, 0.02, 0.04, 0.08, 0.16):
            for band in range(7):
                label = (i * 5) % 16
                answer = label if i % 3 else (label + 1) % 16
                img = np.full((3, 8, 8), 100, dtype=np.uint8)
                img[0, 0, 0] = 8 + 15 * answer
                images.append(img)
                labels.append(label)
                names.append(
                    f"{rep}/{i}_cbm_noise{sd:g}_freq{band}_gray_g_{CATEGORIES16[label]}.JPEG"
                )
                cond = "sd=0" if sd == 0 else f"f={band}/sd={sd:g}"
                k, n = truth.get(cond, (0, 0))
                truth[cond] = (k + int(answer == label), n + 1)
                i += 1
    return ArraySource("cbm-test", np.stack(images), labels, names), truth


def test_premade_grid_counts_each_cell_and_pools_sd0():
    src, truth = premade_source()
    res = run("critical_band_16_premade", CodeReader(), src, batch_size=8)
    assert res.measurement == "critical_band_16_premade" and res.seed is None
    assert [c.condition for c in res.conditions] == [name for name, _, _ in cb.conditions()]
    got = {c.condition: (c.k, c.n) for c in res.conditions}
    assert got == truth
    assert got["sd=0"][1] == 14 and got["f=3/sd=0.08"][1] == 2  # 7 bands x 2 pooled; one cell x 2
    assert sum(c.n for c in res.conditions) == len(src) == 70
    assert (
        len(res.records) == 70
        and res.records[0]["condition"] == "sd=0"
        and res.records[0]["band"] == 0
    )
    assert {r["object_response"] for r in res.records} <= set(CATEGORIES16)
    assert "threshold/f=0" in res.values and "threshold_norm/f=0" in res.values
    assert res.value == res.values["cf"]


def test_premade_grid_with_an_empty_cell_reports_it_instead_of_fitting():
    src, _ = premade_source()
    keep = [i for i, n in enumerate(src.names) if "_freq6_" not in n or "noise0.16" not in n]
    part = ArraySource("cbm-part", src.images[keep], src.labels[keep], [src.names[i] for i in keep])
    res = run("critical_band_16_premade", CodeReader(), part, batch_size=8)
    assert {c.condition: c.n for c in res.conditions}["f=6/sd=0.16"] == 0
    assert (
        res.value is None
        and res.values["cf_norm"] is None
        and res.values["empty_conditions"] == 1.0
    )


def test_unlabelled_or_1000_class_labels_are_refused():
    src, _ = premade_source()
    bad = ArraySource("imagenet-like", src.images[:4], [0, 1, 200, 3], src.names[:4])
    with pytest.raises(Exception, match=r"items without a 16-class label \(0..15\)"):
        run("critical_band_16_premade", CodeReader(), bad)


class MeanReader(torch.nn.Module):
    """Logits from image statistics, so decisions change with noise and filtering."""

    def forward(self, x):
        m = x.mean(dim=(1, 2, 3))
        s = x.std(dim=(1, 2, 3))
        idx = (torch.floor(m * 40) + torch.floor(s * 80)).long() % 16
        return category_logits(idx)


def gray_source(n: int = 6, size: int = 224):
    rng = np.random.default_rng(5)
    base = rng.integers(0, 256, (n, 1, size, size), dtype=np.uint8)
    images = np.repeat(base, 3, axis=1)
    labels = [(3 * i) % 16 for i in range(n)]
    names = [f"0/{i}_color_gray_g_{CATEGORIES16[y]}.JPEG" for i, y in enumerate(labels)]
    return ArraySource("gray-test", images, labels, names)


def test_critical_band_16_decides_on_the_synthesised_stimuli(torch_threads):
    src = gray_source()
    res = run("critical_band_16", MeanReader(), src, batch_size=4, seed=11)
    assert res.measurement == "critical_band_16" and res.seed == 11
    assert res.version == f"{cb.VERSION}.16c{p16.OWN_VERSION}"
    want = {}
    labels = src.labels
    for cond, x in cb.stimuli(torch.from_numpy(src.images), src.names, 11, torch.device("cpu")):
        d = p16.decide(MeanReader()(x), M)
        want[cond] = (int((d == labels).sum()), len(labels))
    assert {c.condition: (c.k, c.n) for c in res.conditions} == want
    assert (
        len({k for k, _ in want.values()}) > 1
    )  # the model's decisions do change across conditions
    again = run("critical_band_16", MeanReader(), src, batch_size=5, seed=11)  # per-image seeding
    assert [(c.k, c.n) for c in again.conditions] == [(c.k, c.n) for c in res.conditions]
    assert "bw" in res.values and "bw_norm" in res.values and res.value == res.values["cf"]


def test_spectral_16_decides_on_the_filtered_images(torch_threads):
    src = gray_source(4)
    res = run("spectral_16", MeanReader(), src, batch_size=3)
    assert res.measurement == "spectral_16" and res.seed is None and len(res.conditions) == 23
    x = torch.from_numpy(src.images).float() / 255
    want = {"clean": int((p16.decide(MeanReader()(x), M) == src.labels).sum())}
    for name, xf in sp.filtered(x):
        want[name] = int((p16.decide(MeanReader()(xf), M) == src.labels).sum())
    assert {c.condition: c.k for c in res.conditions} == want
    assert all(c.n == 4 for c in res.conditions)


# --------------------------------------------------------------------------- variants and the CLI
def test_variants_are_registry_entries_and_detection_picks_them(tmp_path):
    assert probe_measurement("critical-band", "cbmsplit").decision.endswith("sixteen_class:Premade")
    assert (
        probe_measurement("critical-band").name == "critical_band"
    )  # the study's protocol stays the default
    assert select("critical-band", tmp_path).dataset == "imagenet_val"
    assert select("spectral", tmp_path, "graysplit").name == "spectral_16"
    write_cbm_train(tmp_path / "CBMSplit")
    assert select("critical-band", tmp_path / "CBMSplit").name == "critical_band_16_premade"
    with pytest.raises(
        ConfigError,
        match=r"probe shape-bias does not read 'graysplit' stimuli \(it reads: cue_conflict\)",
    ):
        probe_measurement("shape-bias", "graysplit")
    with pytest.raises(ConfigError, match=r"probe shape-bias does not read 'cbmsplit' stimuli"):
        select("shape-bias", tmp_path / "CBMSplit")


def write_cbm_train(root, n: int = 50):
    """A CBMSplit train split of real 224 px JPEGs (random gray patterns)."""
    from PIL import Image

    rng = np.random.default_rng(0)
    (root / "train").mkdir(parents=True)
    for i in range(n):
        sd = (0, 0.02, 0.04, 0.08, 0.16)[i % 5]
        name = f"{i}_cbm_noise{sd:g}_freq{i % 7}_gray_g_{CATEGORIES16[i % 16]}.JPEG"
        arr = rng.integers(0, 256, (28, 28), dtype=np.uint8).repeat(8, 0).repeat(8, 1)
        Image.fromarray(arr).convert("RGB").save(root / "train" / name, format="JPEG")
    return root


def test_matched_synthesis_gives_the_full_grids_stimuli_and_decisions(torch_threads):
    """``run_matched`` (one condition per image, images of a condition forwarded
    together) synthesises bit for bit what the 29-condition grid synthesises for those pairs,
    and so decides the same; the full grid keeps one record per (image, condition)."""
    src = gray_source(6)
    full = run("critical_band_16", MeanReader(), src, batch_size=4, seed=11)
    assert len(full.records) == 6 * 29
    assert {(r["imagename"], r["condition"]) for r in full.records} == {
        (n, c) for n in src.names for c, _, _ in cb.conditions()
    }
    decided = {(r["imagename"], r["condition"]): r["object_response"] for r in full.records}
    names = [name for name, _, _ in cb.conditions()]
    assign = {n: names[(7 * i + 3) % 29] for i, n in enumerate(src.names)}
    assign[src.names[1]] = assign[src.names[4]] = (
        "f=6/sd=0.16"  # two images share a condition (one batch)
    )
    assign[src.names[5]] = "sd=0"
    res = run_matched(MeanReader(), src, assign, batch_size=2, seed=11)
    assert len(res.records) == 6 and sum(c.n for c in res.conditions) == 6
    for r in res.records:
        assert decided[r["imagename"], r["condition"]] == r["object_response"]
    images = torch.from_numpy(src.images)
    for cond in set(assign.values()):
        idx = [i for i, n in enumerate(src.names) if assign[n] == cond]
        want = dict(cb.stimuli(images[idx], [src.names[i] for i in idx], 11, torch.device("cpu")))[
            cond
        ]
        got = cb.one_condition(
            images[idx], [src.names[i] for i in idx], cond, 11, torch.device("cpu")
        )
        assert torch.equal(got, want), cond
    # another seed draws other noise: the same pair gives another stimulus
    noisy = next(c for c in assign.values() if c != "sd=0")
    idx = [i for i, n in enumerate(src.names) if assign[n] == noisy][:1]
    a = cb.one_condition(images[idx], [src.names[idx[0]]], noisy, 11, torch.device("cpu"))
    b = cb.one_condition(images[idx], [src.names[idx[0]]], noisy, 12, torch.device("cpu"))
    assert not torch.equal(a, b)


def test_matched_synthesis_refuses_unknown_conditions_and_absent_images():
    src = gray_source(2)
    with pytest.raises(ValueError, match="unknown critical-band conditions"):
        run_matched(MeanReader(), src, {src.names[0]: "f=7/sd=0.02"})
    with pytest.raises(Exception, match="not in the source"):
        run_matched(MeanReader(), src, {"0/99_color_gray_g_oven.JPEG": "sd=0"})
