"""Placement of models that are not study models, through the one mechanism (``[placement]`` of
study.toml; ``repro.placement``), on a hand-made store (records as the runner writes them, with
chosen counts) and externally known values (``[models.NAME.external]`` of a repro.toml):

- EfficientNet-Lite0's shape bias ranked among the study's 48 published values (rank, tie range,
  range over its Wilson interval, percentile: recomputed here from benchmark.csv), next to the
  model-vs-human references scored from their CSVs; its 16-class critical band listed as not on
  the study's scale, never ranked; outside the population (not a ResNet-50): the study's note,
  no residual, no n + 1 claims;
- a ResNet-50 added in repro.toml with a measured shape bias and external ID accuracies: inside,
  its residual against the least-squares fit (checked against numpy.polyfit and the textbook
  prediction band) and the claims recomputed with it as a 49th model (checked against scipy's
  Spearman over the 49); its external values labelled `external` with their protocol in the
  table, the section, `place`'s output and the scatter plot's legend, never as measured;
- failed, stale and partial records listed as not used, never placed;
- the report of a run places the run's models only, whatever else the store holds.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import spearmanr

from repro.base.study import get_study
from repro.measurements.registry import current_versions
from repro.placement.place import place
from repro.placement.values import model_values
from repro.report import ReportContext
from repro.report.sections import placement as section
from repro.store.files import Store
from repro.store.record import ColumnValue, JobRecord
from tests.small_store import shape_record

pytestmark = pytest.mark.claims
L0, L1, L2, R50 = "efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2", "my_r50"
PROV = {
    "dataset_fingerprint": "f",
    "dataset_items": 1280,
    "dataset_mini": False,
    "dataset_partial": False,
}
PROTOCOL = "224 px, crop 0.875, bilinear"
CONFIG = f'''
[models.{R50}]
source = "local"
reference = "/nonexistent/r50.pth"
[models.{R50}.external]
"top1_acc/imagenet" = {{ value = 76.0, protocol = "{PROTOCOL}", source = "a model card" }}
"top1_acc/imagenet-v2" = {{ value = 64.0, protocol = "{PROTOCOL}", source = "a model card" }}
"top1_acc/imagenet-real" = {{ value = 83.0, protocol = "{PROTOCOL}", source = "a model card" }}
[models.{L0}.external]
"top1_acc/imagenet" = {{ value = 75.1, protocol = "224 px, crop 0.875, bicubic", \
source = "TF model card" }}
'''


def _shape(model: str, s: int, t: int, **prov) -> JobRecord:
    return shape_record(model, s, t, **{**PROV, **prov})


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("placement") / "store"
    s = Store(root)
    s.write(_shape(L0, 197, 626))
    version = current_versions(["critical_band_16_premade"])["critical_band_16_premade"]
    s.write(
        JobRecord(
            L0,
            "critical_band_16_premade",
            version,
            "ok",
            values={"bw": 3.5},
            columns=[ColumnValue("metric/criticalband-16class-premade/bw", 3.5)],
            provenance=PROV,
        )
    )
    s.write(
        JobRecord(
            L1,
            "shape_bias",
            "x",
            "failed",
            error={"type": "DataError", "message": "boom"},
            provenance=PROV,
        )
    )
    s.write(_shape(L2, 300, 500, dataset_partial=True, dataset_items=64))
    s.write(_shape(R50, 400, 400))
    return root


@pytest.fixture
def config(tmp_path, monkeypatch):
    path = tmp_path / "repro.toml"
    path.write_text(CONFIG)
    monkeypatch.setenv("REPRO_CONFIG", str(path))
    return path


def _published_shape(claims) -> list[float]:
    return [float(claims.table.values[m]["shape-bias"]) for m in claims.analysis.population]


def test_lite0_is_ranked_on_the_studys_scale_only(published_claim_contexts, store, data_dir):
    claims = published_claim_contexts["gavrikov2024"]
    p = place(
        get_study("gavrikov2024"),
        model_values(L0, store),
        data_dir,
        context=claims,
        references=True,
    )
    (x,) = p.placed
    pop = _published_shape(claims)
    ours = 197 / 823
    lo, hi = x.value.interval
    assert len(pop) == 48 and x.value.kind == "measured" and (x.value.k, x.value.n) == (197, 823)
    assert x.rank.rank == 1 + sum(v > ours for v in pop) and x.rank.tie_worst == x.rank.rank + sum(
        v == ours for v in pop
    )
    assert (x.rank.best, x.rank.worst) == (
        1 + sum(v > hi for v in pop),
        1 + sum(v >= lo for v in pop),
    )
    assert x.rank.percentile == pytest.approx(
        100 * (sum(v < ours for v in pop) + 0.5 * sum(v == ours for v in pop)) / 48
    )
    assert (x.rank.rank, x.rank.best, x.rank.worst) == (28, 25, 34)
    # the 16-class critical band is not on this scale: listed with the reason, never ranked
    (nc,) = p.not_comparable
    assert (
        nc.value.column == "metric/criticalband-16class-premade/bw"
        and "16-class decisions" in nc.reason
    )
    assert (
        not p.inside
        and "timm:tf_efficientnet_lite0" in p.scope
        and "neither is computed" in p.scope
    )
    assert p.fits == [] and p.claims == []
    refs = {r.reference.label: r for r in p.references}
    resnet = refs["ResNet-50 (model-vs-human)"]
    assert resnet.reference.counts["shape-bias"] == (169, 789)  # SOURCES.md's counts
    assert resnet.ranks["shape-bias"].rank == 1 + sum(v > 169 / 789 for v in pop)
    assert refs["humans (10 subjects, pooled)"].ranks["shape-bias"].rank == 1


def test_a_resnet50_inside_gets_its_residual_and_the_claims_with_n_plus_1(
    published_claim_contexts, store, data_dir, config
):
    from repro.zoo.external import external_values

    claims = published_claim_contexts["gavrikov2024"]
    values = model_values(R50, store, external_values())
    p = place(get_study("gavrikov2024"), values, data_dir, context=claims)
    assert p.inside and "timm:resnet50" in p.scope
    assert [v.kind for v in p.external] == ["external"] * 3 and all(
        v.protocol == PROTOCOL for v in p.external
    )
    (fit,) = p.fits
    assert fit.label == "ID accuracy on shape bias"
    r = fit.residual
    an = claims.analysis
    xs, ys = an.bias("shape_bias"), an.category("id")
    coef = np.polyfit(xs, ys, 1)
    y = (76.0 + 64.0 + 83.0) / 3
    assert r.x == pytest.approx(0.5) and r.y == pytest.approx(y)
    assert r.residual == pytest.approx(y - np.polyval(coef, 0.5))
    # the textbook band of a new observation: t(0.975, n-2) s sqrt(1 + 1/n + (x0 - mean)^2 / Sxx)
    from scipy.stats import t

    s = np.sqrt(np.sum((ys - np.polyval(coef, xs)) ** 2) / (48 - 2))
    band = (
        t.ppf(0.975, 46)
        * s
        * np.sqrt(1 + 1 / 48 + (0.5 - xs.mean()) ** 2 / np.sum((xs - xs.mean()) ** 2))
    )
    assert r.band == pytest.approx(band) and r.n == 48
    lo, hi = values.first("shape-bias").interval
    assert r.over_intervals == pytest.approx(
        sorted([y - np.polyval(coef, lo), y - np.polyval(coef, hi)])
    )
    # the claims with it as a 49th model: only those whose inputs it has and
    # that run over the population
    (c,) = p.claims
    assert c.claim == "shape_bias_vs_id_accuracy" and (c.base_n, c.n) == (48, 49)
    rho49 = spearmanr(np.append(xs, 0.5), np.append(ys, y)).statistic
    assert c.value == pytest.approx(rho49) and c.base_value == pytest.approx(
        spearmanr(xs, ys).statistic
    )
    assert dict(c.columns) == {
        "shape-bias": "measured",
        "top1_acc/imagenet": "external",
        "top1_acc/imagenet-v2": "external",
        "top1_acc/imagenet-real": "external",
    }


def _ctx(tmp_path, claims, store, name="a", plans=()):
    return ReportContext(
        tmp_path / name / "REPORT.md", [(claims, [])], claims=claims, store=store, plans=list(plans)
    )


def test_the_section_labels_every_value_and_lists_what_is_not_used(
    tmp_path, published_claim_contexts, store, config
):
    claims = published_claim_contexts["gavrikov2024"]
    text = section.render(_ctx(tmp_path, claims, store))
    assert text.startswith("## Placement")
    assert (
        f"| `{L0}` | shape bias | 0.239 | [0.211, 0.270] | measured: 197/823, "
        "`shape_bias` | 28 | 25-34 | 44 |"
    ) in text
    assert f"| `{R50}` | shape bias | 0.500 |" in text
    assert (
        "| ResNet-50 (model-vs-human) (reference) | shape bias | 0.214 | [0.187, 0.244] "
        "| 169/789, scored here"
    ) in text
    assert f"- `{L1}` x `shape_bias`: failed (DataError: boom)" in text
    assert (
        f"- `{L2}` x `shape_bias`: not evidence (measured on part of the dataset (64 items))"
        in text
    )
    assert f"`{L2}` | shape bias | 0.375" not in text  # partial: never placed
    assert (
        f"- `{L0}` (measured): `metric/criticalband-16class-premade/bw` 3.500.\n"
        "  Why: 16-class decisions"
    ) in text
    assert (
        f"- `{L0}` `top1_acc/imagenet` = 75.100: external: 224 px, crop 0.875, bicubic; "
        "unit percent; source TF model card"
    ) in text
    assert f"- `{R50}`: inside the study's population" in text
    assert "claim `shape_bias_vs_id_accuracy` with this model as one more: n = 49" in text
    assert "- residual of ID accuracy on shape bias (least-squares fit, degree 1): +" in text
    assert (
        "`top1_acc/imagenet` external" in text
        and f"- `{L0}`: outside the study's population" in text
    )
    assert "neither is computed" in text
    assert f"| `{L1}` | shape bias | no usable value (see Not used) |" in text


def test_figures_are_deterministic_and_external_values_are_labelled_on_the_scatter_plot(
    tmp_path, published_claim_contexts, store, config
):
    from repro.studies.gavrikov2024.figures import OVERLAYS, overlay_xy, overlays

    claims = published_claim_contexts["gavrikov2024"]
    a, b = _ctx(tmp_path, claims, store, "a"), _ctx(tmp_path, claims, store, "b")
    text = section.render(a)
    section.render(b)
    assert [p.name for p in a.written] == ["placement_gavrikov2024_shape-bias.png"]
    assert a.written[0].read_bytes() == b.written[0].read_bytes()
    assert f"{L0} at 0.239 (measured)" in text and "Strip plot of shape bias: the 48 values" in text
    assert "repro.studies.gavrikov2024.placement:overlay" in OVERLAYS
    got = {ov.label: ov for ov in overlays(a)}
    # every placed model with a value here has an external one: none is drawn as measured only
    assert len(got) == 2 and "placed here, measured (dotted: no accuracy)" not in got
    ext = got[
        (
            f"{R50}: top1_acc/imagenet, top1_acc/imagenet-real, top1_acc/imagenet-v2 "
            f"external ({PROTOCOL})"
        )
    ]
    names, xs, ys = overlay_xy(
        ext, ["shape-bias"], ["top1_acc/imagenet", "top1_acc/imagenet-v2", "top1_acc/imagenet-real"]
    )
    assert (
        names == [R50]
        and xs.tolist() == [0.5]
        and ys.tolist() == pytest.approx([(76 + 64 + 83) / 3])
    )
    lite = got[f"{L0}: top1_acc/imagenet external (224 px, crop 0.875, bicubic)"]
    assert dict(lite.rows[L0]) == {
        "shape-bias": pytest.approx(197 / 823),
        "metric/criticalband-16class-premade/bw": 3.5,
        "top1_acc/imagenet": 75.1,
    }


def test_a_runs_report_places_the_runs_models_only(tmp_path, published_claim_contexts, store):
    from types import SimpleNamespace

    claims = published_claim_contexts["gavrikov2024"]
    plan = SimpleNamespace(mini=False, models=[L0], study=claims.study)
    text = section.render(_ctx(tmp_path, claims, store, plans=[plan]))
    assert f"`{L0}`" in text and f"`{R50}`" not in text and f"`{L1}`" not in text
    mini = SimpleNamespace(mini=True, models=["tiny_random_a"], study=claims.study)
    assert "No model outside the study was measured" in section.render(
        _ctx(tmp_path, claims, store, plans=[mini])
    )


def test_place_command_prints_ranks_with_ranges_and_labels_external_values(
    run_cli, tmp_path, store, config, data_dir
):
    res = run_cli(
        "place",
        "--model",
        R50,
        "--store",
        store,
        "--data-dir",
        data_dir,
        "--json",
        tmp_path / "p.json",
        env={"REPRO_CONFIG": str(config)},
    )
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert (
        "my_r50 in gavrikov2024" in out
        and "shape-bias  0.500" in out
        and "measured: 400/800, `shape_bias`" in out
    )
    assert (
        f"top1_acc/imagenet = 76.000: external: {PROTOCOL}; unit percent; source a model card; "
        "no count"
    ) in out
    assert "inside the population: architecture `timm:resnet50`" in out and "n = 49" in out
    docs = {d["study"]: d for d in json.loads((tmp_path / "p.json").read_text())}
    assert set(docs) == {"gavrikov2024", "subramanian2023"}  # every study with a [placement]
    assert docs["subramanian2023"]["placed"] == [] and docs["subramanian2023"]["missing"] == [
        "bw",
        "cf",
        "pns",
    ]
    doc = docs["gavrikov2024"]
    (placed,) = doc["placed"]
    assert (
        placed["evidence"] == "measured"
        and placed["rank"]["of"] == 49  # out of 49, as the text's "of 49" says
        and placed["rank"]["population"] == 48
        and placed["rank"]["best"] <= placed["rank"]["rank"]
    )
    assert {e["evidence"] for e in doc["external"]} == {"external"} and doc["claims_n_plus_1"][0][
        "n"
    ] == 49
    res = run_cli("place", "--model", L0, "--store", store, "--data-dir", data_dir)
    assert res.returncode == 0 and "28 of 49" in res.stdout and "25-34" in res.stdout
    assert "outside the population" in res.stdout and "not on this study's scale" in res.stdout
    res = run_cli(
        "place", "--model", "efficientnet_lite9", "--store", store, "--data-dir", data_dir
    )
    assert (
        res.returncode == 2
        and res.stderr.startswith("error: --model 'efficientnet_lite9'")
        and "did you mean" in res.stderr
    )
    res = run_cli("place", "--model", "tv2_resnet50", "--store", store, "--data-dir", data_dir)
    assert res.returncode == 1 and "no value on any study's scale" in res.stderr


def wide_interval(record, column_value):
    """A study's interval hook (``[[placement.columns]] interval``) for the test below."""
    assert record.model == L0 and column_value.column == "shape-bias"
    return (0.1, 0.9)


def test_a_study_interval_hook_is_the_interval_shown_and_ranked_over(
    published_claim_contexts, store, data_dir
):
    """The hook's interval replaces the value's own wherever the value is shown (text, JSON,
    report), so the rank over the interval is over the interval printed beside it; a study that
    declares no architecture inside says so instead of listing none."""
    import dataclasses

    from repro.placement.output import as_json, text

    claims = published_claim_contexts["gavrikov2024"]
    study = get_study("gavrikov2024")
    column = dataclasses.replace(study.placement.columns[0], interval=f"{__name__}:wide_interval")
    hooked = dataclasses.replace(
        study, placement=dataclasses.replace(study.placement, columns=(column,), inside=())
    )
    p = place(hooked, model_values(L0, store), data_dir, context=claims)
    (x,) = p.placed
    pop = _published_shape(claims)
    assert x.value.interval == (0.1, 0.9) and x.rank.interval == (0.1, 0.9)
    assert (x.rank.best, x.rank.worst) == (
        1 + sum(v > 0.9 for v in pop),
        1 + sum(v >= 0.1 for v in pop),
    )
    out = text(p)
    assert (
        "[0.100, 0.900]" in out
        and f"28 of {len(pop) + 1}" in out
        and f"{x.rank.best}-{x.rank.worst}" in out
    )
    assert (
        "not declared inside the study's population (it declares none)" in out
        and "()" not in out.split("outside")[-1]
    )
    assert as_json(p)["placed"][0]["interval"] == (0.1, 0.9)
