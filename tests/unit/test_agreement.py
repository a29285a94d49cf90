"""Per-model agreement (``repro.claims.agreement``) on constructed values: the margin decides a
fixed-stimulus difference; random stimuli get Newcombe's two-sample interval; paired decisions
Newcombe's paired interval and McNemar's test; Holm is taken over the models of one column; and
the agreement file's mistakes are one-line errors naming the file and the field."""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.base.stats import difference_interval, paired_difference_interval
from repro.claims.agreement import Family, Margins, Measured, compare_values, read_margins
from repro.claims.verdict import AGREES, DIFFERS, INCONCLUSIVE

pytestmark = pytest.mark.unit

TOP1 = Family("top-1", ("top1_acc/imagenet*",), 0.1, "fixed", "decoder and resize only", 100.0)
PGD = Family("pgd", ("top1_acc/PGD-40/*",), 0.5, "random", "random starts", 100.0)
FIT = Family("fit", ("metric/criticalband/*",), 0.0, "random", "a fit without counts")
MARGINS = Margins((TOP1, PGD, FIT), "agreement.toml")


def _one(value, published, column="top1_acc/imagenet", k=None, n=None, pairs=None, margins=MARGINS):
    (row,) = compare_values(
        "s",
        [Measured("m", column, "x", "measured", value, k, n, pairs)],
        {"m": {column: published}},
        margins,
    )
    return row


def test_fixed_stimuli_the_margin_decides_an_exact_difference():
    agree = _one(76.146 + 0.09, 76.146)
    assert agree.status == AGREES and agree.interval == (pytest.approx(0.09), pytest.approx(0.09))
    assert "not a sample" in agree.method and agree.k is None
    differs = _one(76.146 + 0.11, 76.146)
    assert (
        differs.status == DIFFERS
        and differs.p == 0.0
        and "outside +-0.1 (fixed stimuli" in differs.why
    )
    same = _one(0.2146, 0.2146, column="top1_acc/imagenet-v2")
    assert same.status == AGREES and same.p == 1.0


def test_random_stimuli_get_newcombes_two_sample_interval_of_the_same_n():
    n = 50048
    ours = 9200
    row = _one(100 * ours / n, 18.39, column="top1_acc/PGD-40/low", k=ours, n=n)
    k_pub = round(0.1839 * n)
    lo, hi = difference_interval(ours, n, k_pub, n, 0.90)
    assert row.interval == (pytest.approx(100 * lo), pytest.approx(100 * hi))
    assert row.status == AGREES  # 18.382 vs 18.39, 90% interval about +-0.4 points, inside +-0.5
    far = _one(100 * 8500 / n, 18.39, column="top1_acc/PGD-40/low", k=8500, n=n)
    assert far.status == DIFFERS and far.p < 1e-6 and far.diff == pytest.approx(-1.41, abs=0.01)
    # on 5,000 images 0.56 points off: outside the margin, but two draws of 5,000 differ by that
    # often (p about 0.5): neither agrees nor differs
    near = _one(100 * 948 / 5000, 18.39, column="top1_acc/PGD-40/low", k=948, n=5000)
    assert near.status == INCONCLUSIVE and near.diff > 0.5 and near.p > 0.3


def test_a_random_value_without_counts_is_inconclusive_and_says_why():
    row = _one(5.6663, 5.6663, column="metric/criticalband/bw_norm")
    assert row.status == INCONCLUSIVE and row.interval is None and "without counts" in row.why


def test_no_declared_margin_is_inconclusive():
    row = _one(0.5, 0.5, column="shape-bias")
    assert (
        row.status == INCONCLUSIVE
        and "no implementation margin declared for shape-bias in agreement.toml" in row.why
    )


def test_paired_decisions_use_newcombes_paired_interval_and_mcnemar():
    from scipy import stats

    # 1,000 items: both correct 700, ours only 30, published only 5: ours +2.5 points
    pairs = (
        [(True, True)] * 700 + [(True, False)] * 30 + [(False, True)] * 5 + [(False, False)] * 265
    )
    row = _one(73.0, 70.5, pairs=pairs)
    lo, hi = paired_difference_interval(700, 30, 5, 265, 0.90)
    assert (
        row.interval == (pytest.approx(100 * lo), pytest.approx(100 * hi))
        and row.stimuli == "paired"
    )
    assert row.p == pytest.approx(stats.binomtest(30, 35, 0.5).pvalue) and row.status == DIFFERS
    balanced = (
        [(True, True)] * 7000 + [(True, False)] * 2 + [(False, True)] * 2 + [(False, False)] * 996
    )
    assert _one(70.02, 70.02, pairs=balanced).status == AGREES


def test_holm_is_taken_over_the_models_of_a_column():
    """Three models 0.7 points off on PGD (raw p about 0.01 each): Holm
    multiplies the smallest by 3."""
    from repro.analysis.multiple import holm

    n = 50048
    k_pub = round(0.1839 * n)
    values = [
        Measured(
            f"m{i}",
            "top1_acc/PGD-40/low",
            "pgd_low",
            "measured",
            100 * (k_pub + d) / n,
            k_pub + d,
            n,
        )
        for i, d in enumerate((340, 345, 350))
    ]
    rows = compare_values(
        "s", values, {f"m{i}": {"top1_acc/PGD-40/low": 18.39} for i in range(3)}, MARGINS
    )
    raw = [r.p for r in rows]
    assert [r.p_holm for r in rows] == pytest.approx(holm(raw))
    assert all(r.p_holm >= r.p for r in rows) and max(r.p_holm for r in rows) > max(raw)


def test_agreement_file_mistakes_are_one_line_errors(tmp_path):
    path = tmp_path / "agreement.toml"
    base = 'name = "a"\ncolumns = ["x"]\nmargin = 0.1\nstimuli = "fixed"\n'
    for body, message in (
        (base, "field 'reason' must be a non-empty string (why this margin)"),
        (
            base.replace('"fixed"', '"sometimes"') + 'reason = "r"\n',
            "field 'stimuli' must be one of",
        ),
        (
            base.replace("0.1", "-1") + 'reason = "r"\n',
            "field 'margin' must be a finite number >= 0",
        ),
        (base + 'reason = "r"\nunit = "%"\n', "unknown field(s) unit"),
        (
            base.replace('["x"]', "[]") + 'reason = "r"\n',
            "field 'columns' must be a non-empty list",
        ),
    ):
        path.write_text("[[family]]\n" + body)
        with pytest.raises(ConfigError, match=r"agreement\.toml: \[\[family\]\] #1: ") as err:
            read_margins(path)
        assert message in str(err.value)
    path.write_text("[[family]]\n" + base + 'reason = "r"\n')
    assert read_margins(path).family("x").margin == 0.1 and read_margins(path).family("y") is None


def test_the_first_matching_family_applies():
    margins = Margins((Family("real", ("top1_acc/imagenet-real",), 0.31, "fixed", "r"), TOP1))
    assert margins.family("top1_acc/imagenet-real").name == "real"
    assert margins.family("top1_acc/imagenet-v2").name == "top-1"


def test_gavrikovs_margins_cover_every_headline_column_of_its_measurements():
    from repro.base.study import get_study
    from repro.claims.agreement import study_margins
    from repro.measurements.registry import get

    study = get_study("gavrikov2024")
    margins = study_margins(study)
    columns = [c for m in study.measurements for c in get(m).columns]
    assert [c for c in columns if margins.family(c) is None] == []
    assert all(f.reason.strip() for f in margins.families)
