"""The report section "Models measured here" from a hand-made store (records as the runner writes
them, with chosen counts): the critical-band grids and the paired agreement, the spectral ratios
with counts, for the models the report places (the store's, without a run); every missing,
failed, stale or partial result listed as such (never a value); deterministic figures; the
time per part of stored jobs (``repro.runner.timing``: printed by the measuring commands, never
in the report). Shape bias, on the study's scale, is the section "Placement"'s
(tests/claims/test_placement_report.py)."""

from __future__ import annotations

import pytest

from repro.analysis import noise_agreement as na
from repro.measurements.registry import current_versions
from repro.report import ReportContext
from repro.scoring.spectral import CUTOFFS
from repro.store.files import Store
from repro.store.record import JobRecord
from repro.studies.gavrikov2024 import models_here

pytestmark = pytest.mark.claims
L0, L1, L2 = "efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2"
PROV = {
    "dataset_fingerprint": "f",
    "dataset_items": 1050,
    "dataset_mini": False,
    "dataset_partial": False,
}
CATS = ["knife", "oven", "bear"]


def _record(
    model: str, measurement: str, counts: dict[str, tuple[int, int]], values: dict, **kw
) -> JobRecord:
    version = current_versions([measurement])[measurement]
    return JobRecord(
        model,
        measurement,
        kw.pop("version", version),
        kw.pop("status", "ok"),
        conditions=[{"condition": c, "k": k, "n": n} for c, (k, n) in counts.items()],
        values=values,
        provenance={**PROV, **kw.pop("provenance", {})},
        **kw,
    )


def _grids():
    """Pre-made: 2 files per cell (3 in `f=1/sd=0.04`, where ours is right and theirs wrong on
    all 3); our matching decisions otherwise equal theirs. Returns (ours
    records, theirs records)."""
    ours, theirs, i = [], [], 0
    for cond in na.CONDITIONS:
        sd, band = ("0", 0) if cond == na.CLEAN else (cond.split("sd=")[1], int(cond[2]))
        for j in range(3 if cond == "f=1/sd=0.04" else 2):
            cat = CATS[i % 3]
            right_theirs = cond != "f=1/sd=0.04" and j == 0
            right_ours = cond == "f=1/sd=0.04" or j == 0
            theirs.append(
                {
                    "imagename": f"{i % 5}/{i}_cbm_noise{sd}_freq{band}_gray_g_{cat}.JPEG",
                    "condition": cond,
                    "category": cat,
                    "object_response": cat if right_theirs else "truck",
                }
            )
            gray = f"{i % 5}/{i}_color_gray_g_{cat}.JPEG"
            for c in na.CONDITIONS:  # our full grid: every condition of every image
                right = right_ours if c == cond else c == na.CLEAN
                ours.append(
                    {
                        "imagename": gray,
                        "condition": c,
                        "category": cat,
                        "object_response": cat if right else "truck",
                    }
                )
            i += 1
    return ours, theirs


def _counts(records) -> dict[str, tuple[int, int]]:
    out = {c: [0, 0] for c in na.CONDITIONS}
    for r in records:
        out[r["condition"]][0] += r["object_response"] == r["category"]
        out[r["condition"]][1] += 1
    return {c: (k, n) for c, (k, n) in out.items()}


def _fit_values(counts) -> dict:
    from repro.scoring.critical_band import fit

    out = {}
    for suffix, vec in (
        ("", na.thresholds(counts)["abs"]),
        ("_norm", na.thresholds(counts)["norm"]),
    ):
        f = fit(vec)
        out.update({f"threshold{suffix}/f={b}": float(t) for b, t in enumerate(vec)})
        out.update(
            {
                f"bw{suffix}": f.bandwidth,
                f"cf{suffix}": f.center_frequency,
                f"pns{suffix}": f.peak_noise_sensitivity,
            }
        )
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("models_here") / "store"
    s = Store(root)
    s.write(
        _record(
            L0,
            "shape_bias",
            {"shape": (197, 1200), "texture": (626, 1200)},
            {"n": 1200.0, "shape": 197.0, "texture": 626.0},
        )
    )
    ours, theirs = _grids()
    s.write(
        _record(L0, "critical_band_16_premade", _counts(theirs), _fit_values(_counts(theirs))),
        theirs,
    )
    s.write(
        _record(
            L0,
            "critical_band_16",
            _counts(ours),
            _fit_values(_counts(ours)),
            provenance={"duration_s": 2100.0, "device": "cpu", "batch_size": 16, "host": "h"},
        ),
        ours,
    )
    # HFC at 0.5 and below: 60 of 1,050 right, under the 16-class chance rate 1/16
    # (issue 21 item 7: flagged)
    spectral = {
        "clean": (800, 1050),
        **{
            f"{k}/{c:g}": (60 if k == "HFC" and c <= 0.5 else 400 + int(300 * c), 1050)
            for k in ("LFC", "HFC")
            for c in CUTOFFS
        },
    }
    s.write(
        _record(
            L0, "spectral_16", spectral, {"low_frequency_bias": 0.61, "high_frequency_bias": 0.12}
        )
    )
    s.write(
        _record(
            L1,
            "shape_bias",
            {},
            {},
            status="failed",
            error={"type": "DataError", "message": "boom"},
        )
    )
    s.write(_record(L1, "critical_band_16_premade", _counts(theirs), {}, version="0+0"))
    s.write(
        _record(
            L2,
            "shape_bias",
            {"shape": (300, 1200), "texture": (500, 1200)},
            {"n": 1200.0, "shape": 300.0, "texture": 500.0},
            provenance={"dataset_partial": True, "dataset_items": 64},
        )
    )
    return root


def _ctx(tmp_path, claims, store, name="a"):
    return ReportContext(tmp_path / name / "REPORT.md", [(claims, [])], claims=claims, store=store)


def test_section_shows_measured_values_and_lists_everything_missing(
    tmp_path, published_claim_contexts, store
):
    claims = published_claim_contexts["gavrikov2024"]
    text = models_here.render(_ctx(tmp_path, claims, store))
    assert text.startswith("## Models measured here")
    assert f"`{L0}`, `{L1}`, `{L2}`" in text.splitlines()[2]  # the store's models, in name order
    assert "4 of 12 (model x measurement) results are in the store." in text
    assert f"- `{L1}` x `shape_bias`: failed (DataError: boom)" in text
    assert f"- `{L1}` x `critical_band_16_premade`: stale (measured with version 0+0" in text
    assert (
        f"- `{L2}` x `shape_bias`: not evidence (measured on part of the dataset (64 items))"
        in text
    )
    assert f"- `{L2}` x `spectral_16`: not measured" in text
    assert "### Shape bias" not in text and "| rank" not in text  # the section Placement ranks it
    # the critical band: both grids of Lite0, the pairing and its verdict
    assert (
        f"| `{L0}` | our synthesis | 58/59 |" in text
    )  # SD 0: all but the one wrong SD-0-cell image
    assert f"| `{L0}` | pre-made CBMSplit | 1/2 |" in text
    # b = 3 in one cell (p = 0.25, Holm 1): no cell differs, but 3 of ~57 noisy pairs is too few for
    # the pooled difference's interval to fit inside one image of a 30-image cell:
    # inconclusive, by the declared rule
    assert (
        f"- `{L0}`: 59 pairs; **inconclusive** (no cell differs, but the pooled difference +"
        in text
    )
    assert "exact McNemar p = 0.25: no systematic difference detected)" in text
    assert "| `f=1/sd=0.04` | 5.1% of 59 | 3 | 3 | 0 | 3 | 0 | +100.0" in text
    assert (
        f"- `{L1}`: no paired comparison: `critical_band_16` and "
        "`critical_band_16_premade` missing."
    ) in text
    assert na.AGREEMENT in text
    # spectral: the ratio with its counts; not ranked
    assert f"| 0.5 | {550 / 800:.3f} (550/800) | {60 / 800:.3f} (60/800) *chance* |" in text
    assert (
        f"| 0.6 | {580 / 800:.3f} (580/800) | {580 / 800:.3f} (580/800) |" in text
    )  # above chance: no flag
    assert (
        "| low- / high-frequency bias | 0.610 | 0.120 *chance* |" in text
    )  # every HFC cut-off 0.1-0.5 at chance
    assert "Not ranked among the 48, by choice" in text
    # machine-dependent facts never reach the report
    assert "Time per part" not in text and "host" not in text and "2,100" not in text


def test_time_per_part_is_printed_from_the_records(store):
    """Images and forward passes (29 per image) over the recorded wall time; jobs that state no
    duration get no row (``repro.runner.timing``, printed by reproduce and measure --session)."""
    from repro.runner.timing import time_rows, time_table

    rows = time_rows(store, [L0, L1, L2], ["shape_bias", "critical_band_16", "spectral_16"])
    assert rows == [
        [L0, "critical_band_16", "1,050", "30,450", "2,100", "0.50", "14.5", "cpu, batch 16"]
    ]
    table = time_table(store, [L0], ["critical_band_16"])
    assert (
        table.startswith("time per part")
        and "30,450" in table
        and "h" not in table.split("\n")[-1].split()[-1]
    )
    assert time_table(store, [L1], ["shape_bias"]) == ""


def test_figures_are_written_with_alt_text_and_are_deterministic(
    tmp_path, published_claim_contexts, store
):
    claims = published_claim_contexts["gavrikov2024"]
    a, b = _ctx(tmp_path, claims, store, "a"), _ctx(tmp_path, claims, store, "b")
    text = models_here.render(a)
    models_here.render(b)
    names = sorted(p.name for p in a.written)
    assert names == ["models_here_critical_band_efficientnet_lite0.png"]  # L1 stale
    for pa, pb in zip(sorted(a.written), sorted(b.written), strict=True):
        assert pa.read_bytes() == pb.read_bytes()
    assert (
        f"![{L0}: two 5 x 7 heat maps" in text
        and "left our synthesis on GraySplit (measured)" in text
    )
    assert f"![{L1}: two 5 x 7" not in text  # its only grid is stale: nothing drawn


def test_without_a_store_or_a_measured_model_the_section_is_empty(
    tmp_path, published_claim_contexts
):
    claims = published_claim_contexts["gavrikov2024"]
    assert models_here.render(_ctx(tmp_path, claims, None)) == ""
    assert models_here.render(_ctx(tmp_path, claims, tmp_path / "empty-store")) == ""
