"""The agreement rule's parts one by one (``repro.claims.agreement``): each interval and test
against an independent computation, each boundary of the decision (a difference exactly at the
margin, a Holm p exactly at alpha) on both sides, each reason whole, and the agreement file's
every mistake named with its field. ``tests/unit/test_agreement.py`` covers the rule end to end."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from scipy import stats

from repro.base.errors import ConfigError
from repro.base.stats import difference_interval, paired_difference_interval
from repro.claims.agreement import (
    Agreement,
    Difference,
    Family,
    InputAgreement,
    Margins,
    Measured,
    compare_values,
    decide,
    difference,
    exact_difference,
    holm_by_column,
    independent_difference,
    measured_values,
    paired_difference,
    paired_table,
    read_margins,
    study_agreement,
    study_margins,
)
from repro.claims.verdict import AGREES, DIFFERS, INCONCLUSIVE

pytestmark = pytest.mark.unit

FIXED = Family("top-1", ("top1/*",), 0.1, "fixed", "resize only", 100.0)
RANDOM = Family("pgd", ("pgd/*",), 0.5, "random", "random starts", 100.0)


# --------------------------------------------------------------------------- the agreement file


def _write(tmp_path, body):
    path = tmp_path / "agreement.toml"
    path.write_text(body)
    return path


BASE = 'name = "a"\ncolumns = ["x"]\nmargin = 0.1\nstimuli = "fixed"\nreason = "r"\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (BASE.replace('name = "a"', 'name = " "'), "field 'name' must be a non-empty string"),
        (BASE.replace('name = "a"\n', ""), "field 'name' must be a non-empty string"),
        (
            BASE.replace('reason = "r"', 'reason = "  "'),
            "field 'reason' must be a non-empty string (why this margin)",
        ),
        (
            BASE.replace('reason = "r"', "reason = 3"),
            "field 'reason' must be a non-empty string (why this margin)",
        ),
        (
            BASE.replace('["x"]', '"x"'),
            "field 'columns' must be a non-empty list of column names or patterns",
        ),
        (
            BASE.replace('["x"]', '["x", ""]'),
            "field 'columns' must be a non-empty list of column names or patterns",
        ),
        (
            BASE.replace('["x"]', '["x", 3]'),
            "field 'columns' must be a non-empty list of column names or patterns",
        ),
        (BASE.replace("0.1", "true"), "field 'margin' must be a finite number >= 0, got True"),
        (BASE.replace("0.1", '"0.1"'), "field 'margin' must be a finite number >= 0, got '0.1'"),
        (BASE.replace("0.1", "inf"), "field 'margin' must be a finite number >= 0, got inf"),
        (BASE.replace("0.1", "-0.5"), "field 'margin' must be a finite number >= 0, got -0.5"),
        (
            BASE.replace("margin = 0.1\n", ""),
            "field 'margin' must be a finite number >= 0, got None",
        ),
        (BASE + "scale = -1\n", "field 'scale' must be a finite number >= 0, got -1"),
        (BASE + "scale = nan\n", "field 'scale' must be a finite number >= 0, got nan"),
        (BASE + "scale = 0\n", "field 'scale' must be > 0 (value = scale * k / n)"),
        (
            BASE.replace('"fixed"', '"Fixed"'),
            "field 'stimuli' must be one of fixed, random, got 'Fixed'",
        ),
        (
            BASE.replace('stimuli = "fixed"\n', ""),
            "field 'stimuli' must be one of fixed, random, got None",
        ),
        (
            BASE + 'paired = "module.function"\n',
            "field 'paired' must be a lazy reference 'module:function', got 'module.function'",
        ),
        (
            BASE + "paired = 5\n",
            "field 'paired' must be a lazy reference 'module:function', got 5",
        ),
        (
            BASE + 'unit = "%"\nzeta = 1\n',
            "unknown field(s) unit, zeta (known: name, columns, margin, scale, stimuli, reason, "
            "paired)",
        ),
    ],
)
def test_each_mistake_in_a_family_is_named_with_its_field(tmp_path, body, message):
    path = _write(tmp_path, "[[family]]\n" + body)
    with pytest.raises(ConfigError) as err:
        read_margins(path)
    assert str(err.value) == f"{path}: [[family]] #1: {message}"


def test_a_family_is_read_with_its_defaults_and_its_position_is_named(tmp_path):
    path = _write(tmp_path, "[[family]]\n" + BASE.replace("0.1", "0") + "[[family]]\n" + BASE)
    margins = read_margins(path)
    assert margins.origin == str(path)
    first = margins.families[0]
    assert first == Family("a", ("x",), 0.0, "fixed", "r", 1.0, "")
    assert isinstance(first.margin, float) and isinstance(first.scale, float)
    path = _write(
        tmp_path,
        "[[family]]\n"
        + BASE
        + 'scale = 100\npaired = "m:f"\n'
        + "[[family]]\n"
        + BASE.replace('"fixed"', '"daily"'),
    )
    with pytest.raises(ConfigError) as err:
        read_margins(path)
    assert str(err.value) == (
        f"{path}: [[family]] #2: field 'stimuli' must be one of fixed, random, got 'daily'"
    )
    path = _write(tmp_path, "[[family]]\n" + BASE + 'scale = 100\npaired = "m:f"\n')
    (fam,) = read_margins(path).families
    assert fam.scale == 100.0 and fam.paired == "m:f"


def test_the_file_as_a_whole_is_checked(tmp_path):
    path = _write(tmp_path, "[[family]]\n" + BASE + "[margins]\nx = 1\n[other]\n")
    with pytest.raises(ConfigError) as err:
        read_margins(path)
    assert str(err.value) == (
        f"{path}: unknown table(s) margins, other (expected [[family]] tables)"
    )
    for body in ("", "family = 3\n", "family = []\n"):
        path = _write(tmp_path, body)
        with pytest.raises(ConfigError) as err:
            read_margins(path)
        assert str(err.value) == (
            f"{path}: no [[family]] tables (each declares a column family's margin and its reason)"
        )
    path = _write(tmp_path, "family = [1]\n")
    with pytest.raises(ConfigError) as err:
        read_margins(path)
    assert str(err.value) == (
        f"{path}: [[family]] #1: expected a table with name, columns, margin, scale, stimuli, "
        "reason"
    )


def test_bad_toml_and_a_missing_file_name_what_was_expected(tmp_path):
    path = _write(tmp_path, "[[family]\n")
    with pytest.raises(ConfigError) as err:
        read_margins(path)
    assert str(err.value).startswith(f"{path}: not valid TOML (")
    assert str(err.value).endswith("; expected an agreement file of [[family]] tables)")
    with pytest.raises(ConfigError) as err:
        read_margins(tmp_path / "missing.toml")
    assert "an agreement file of [[family]] tables" in str(err.value)


def test_a_study_without_an_agreement_file_declares_no_margins(tmp_path):
    assert study_margins(SimpleNamespace(name="s")) == Margins()
    assert study_margins(SimpleNamespace(name="s", agreement=None)) == Margins()
    path = _write(tmp_path, "[[family]]\n" + BASE)
    assert study_margins(SimpleNamespace(agreement=path)).family("x").name == "a"


def test_families_match_by_pattern_and_the_first_match_wins():
    fam = Family("f", ("a/*", "b"), 0.1, "fixed", "r")
    assert fam.matches("a/x") and fam.matches("b") and not fam.matches("bb")
    assert not fam.matches("A/x")  # case matters: columns are case-sensitive names
    margins = Margins((Family("g", ("b",), 0.2, "fixed", "r"), fam))
    assert margins.family("b").name == "g" and margins.family("a/y").name == "f"
    assert margins.family("c") is None


# --------------------------------------------------------------------------- the differences


def test_an_exact_difference_is_its_own_interval():
    d = exact_difference(0.25)
    assert d == Difference(
        (0.25, 0.25),
        0.0,
        "fixed stimuli: not a sample, the difference is exact (zero-width interval)",
    )
    assert exact_difference(0.0).p == 1.0 and exact_difference(-1e-12).p == 0.0


def test_a_paired_difference_counts_each_kind_of_item():
    # both 4, ours only 3, published only 1, neither 2: the four counts are all different, so a
    # count swapped for another changes the interval
    pairs = [(True, True)] * 4 + [(True, False)] * 3 + [(False, True)] * 1 + [(False, False)] * 2
    d = paired_difference(pairs, 100.0, 0.9)
    lo, hi = paired_difference_interval(4, 3, 1, 2, 0.9)
    assert d.interval == (pytest.approx(100 * lo), pytest.approx(100 * hi))
    assert d.p == pytest.approx(stats.binomtest(3, 4, 0.5).pvalue)
    assert d.method == (
        "paired over 10 items (3 ours only, 1 published only): Newcombe's paired interval, "
        "exact McNemar test"
    )
    assert d.why == ""
    lo95, _ = paired_difference_interval(4, 3, 1, 2, 0.95)
    assert paired_difference(pairs, 1.0, 0.95).interval[0] == pytest.approx(lo95)
    concordant = paired_difference([(True, True), (False, False)], 1.0, 0.9)
    assert concordant.p == 1.0
    assert paired_difference([], 1.0, 0.9) == Difference(
        None, None, "paired", "no items on both sides"
    )


def test_a_paired_table_is_the_paired_difference_of_its_items():
    """The 2x2 table as four counts (a per-image comparison of 50,000 images passes the counts,
    not 50,000 pairs): the same interval, p and method as the items it counts."""
    pairs = [(True, True)] * 4 + [(True, False)] * 3 + [(False, True)] * 1 + [(False, False)] * 2
    assert paired_table(4, 3, 1, 2, 100.0, 0.9) == paired_difference(pairs, 100.0, 0.9)
    assert paired_table(4, 1, 3, 2, 1.0, 0.95) == paired_difference(
        [(True, True)] * 4 + [(True, False)] + [(False, True)] * 3 + [(False, False)] * 2, 1.0, 0.95
    )
    assert paired_table(0, 0, 0, 1, 1.0, 0.9).p == 1.0  # no discordant item
    assert paired_table(0, 0, 0, 0, 1.0, 0.9) == Difference(
        None, None, "paired", "no items on both sides"
    )


def _z_test(k1, k2, n):
    """The pooled two-proportion z test, computed here from its definition."""
    pooled = (k1 + k2) / (2 * n)
    z = abs(k1 - k2) / n / math.sqrt(pooled * (1 - pooled) * 2 / n)
    return math.erfc(z / math.sqrt(2))


def test_an_independent_difference_takes_the_published_value_as_a_count_of_the_same_n():
    # 18.39 % of 1,000 items is 183.9: the count rounds to 184
    d = independent_difference(170, 1000, 18.39, 100.0, 0.9)
    lo, hi = difference_interval(170, 1000, 184, 1000, 0.9)
    assert d.interval == (pytest.approx(100 * lo), pytest.approx(100 * hi))
    assert d.p == pytest.approx(_z_test(170, 184, 1000), rel=1e-9)
    assert d.method == (
        "independent draws: ours 170/1000, published 184/1000 (the published value as a count of "
        "the same n): Newcombe's interval, two-proportion z test"
    )
    lo95, _ = difference_interval(170, 1000, 184, 1000, 0.95)
    assert independent_difference(170, 1000, 18.39, 100.0, 0.95).interval[0] == pytest.approx(
        100 * lo95
    )
    # the bounds of a rate are counts: 0 and n
    assert independent_difference(0, 10, 0.0, 1.0, 0.9).p == 1.0
    assert independent_difference(10, 10, 1.0, 1.0, 0.9).p == 1.0
    assert independent_difference(3, 10, 1.0, 1.0, 0.9).interval is not None
    assert independent_difference(3, 10, 0.0, 1.0, 0.9).interval is not None
    for value in (1.2, -0.1):
        assert independent_difference(3, 10, value, 1.0, 0.9) == Difference(
            None,
            None,
            "independent draws",
            f"the published value {value} is not a rate of n = 10 (scale 1)",
        )
    assert independent_difference(3, 10, 120.0, 100.0, 0.9).why == (
        "the published value 120.0 is not a rate of n = 10 (scale 100)"
    )


def test_the_stimuli_choose_the_difference():
    pairs = [(True, False)] * 3 + [(True, True)] * 5
    # per-item decisions win over the family's stimuli
    assert difference(FIXED, 1.0, 0.5, 3, 8, pairs, 0.9) == paired_difference(pairs, 100.0, 0.9)
    # fixed stimuli: exact, whatever the counts
    assert difference(FIXED, 1.0, 0.5, 3, 8, None, 0.9) == exact_difference(0.5)
    assert difference(RANDOM, 17.0, 18.39, 170, 1000, None, 0.9) == independent_difference(
        170, 1000, 18.39, 100.0, 0.9
    )
    no_interval = Difference(
        None,
        None,
        "random stimuli",
        "drawn at random and published as a value without counts (a fit): no interval of the "
        "difference can be formed",
    )
    for k, n in ((None, 10), (3, None), (0, 0)):
        assert difference(RANDOM, 1.0, 0.5, k, n, None, 0.9) == no_interval
    assert difference(RANDOM, 100.0, 100.0, 1, 1, None, 0.9).interval is not None


# --------------------------------------------------------------------------- the decision


_WIDE = Difference((0.15, 0.45), 0.001, "m")
_DECISIONS = {
    "inside the margin": (
        (0.01, Difference((-0.05, 0.08), 0.3, "m"), 0.3, 0.1, 0.05),
        (AGREES, "difference +0.01, interval [-0.05, +0.08] inside +-0.1"),
    ),
    # equivalence is bound <= margin
    "at the margin exactly, a point interval": (
        (0.1, Difference((0.1, 0.1), 0.0, "m"), 0.0, 0.1, 0.05),
        (AGREES, "difference +0.1, interval [+0.1, +0.1] inside +-0.1"),
    ),
    "outside, fixed stimuli": (
        (0.2, Difference((0.2, 0.2), 0.0, "m"), 0.0, 0.1, 0.05),
        (DIFFERS, "difference +0.2 outside +-0.1 (fixed stimuli: the difference is exact)"),
    ),
    "outside and the test excludes 0": (
        (0.3, _WIDE, 0.004, 0.1, 0.05),
        (
            DIFFERS,
            "difference +0.3 outside +-0.1 and the test excludes 0 (Holm-adjusted p = 0.004)",
        ),
    ),
    # a Holm p at alpha exactly does not exclude 0
    "outside, Holm p at alpha": (
        (0.3, _WIDE, 0.05, 0.1, 0.05),
        (
            INCONCLUSIVE,
            "difference +0.3 outside +-0.1 but the test does not exclude 0 "
            "(Holm-adjusted p = 0.05)",
        ),
    ),
    "outside, no test": (
        (-0.3, Difference((-0.6, 0.1), None, "m"), None, 0.1, 0.05),
        (INCONCLUSIVE, "no test"),
    ),
    # excluded 0 but inside the margin: not a difference that matters
    "inside, interval reaching beyond": (
        (0.07, Difference((0.02, 0.12), 0.001, "m"), 0.001, 0.1, 0.05),
        (INCONCLUSIVE, "difference +0.07, but its interval [+0.02, +0.12] reaches beyond +-0.1"),
    ),
    # a difference exactly at the margin whose interval reaches beyond it: not "outside"
    "at the margin, interval reaching beyond": (
        (0.1, Difference((0.05, 0.15), 0.001, "m"), 0.001, 0.1, 0.05),
        (INCONCLUSIVE, "difference +0.1, but its interval [+0.05, +0.15] reaches beyond +-0.1"),
    ),
    # the threshold is the alpha given, not 0.05
    "alpha 0.001": (
        (0.3, _WIDE, 0.004, 0.1, 0.001),
        (
            INCONCLUSIVE,
            "difference +0.3 outside +-0.1 but the test does not exclude 0 "
            "(Holm-adjusted p = 0.004)",
        ),
    ),
    "alpha 0.01": (
        (0.3, _WIDE, 0.004, 0.1, 0.01),
        (
            DIFFERS,
            "difference +0.3 outside +-0.1 and the test excludes 0 (Holm-adjusted p = 0.004)",
        ),
    ),
    "no interval, its reason": (
        (0.0, Difference(None, None, "m", "why not"), None, 0.1, 0.05),
        (INCONCLUSIVE, "why not"),
    ),
}


@pytest.mark.parametrize("case", list(_DECISIONS))
def test_the_decision_and_its_reason_at_each_branch(case):
    args, expected = _DECISIONS[case]
    assert decide(*args) == expected


def test_holm_is_adjusted_within_each_column_and_skips_missing_tests():
    tests = [("a", 0.01), ("b", 0.01), ("a", 0.04), ("a", None), ("b", 0.02)]
    assert holm_by_column(tests) == [
        pytest.approx(0.02),
        pytest.approx(0.02),
        pytest.approx(0.04),
        None,
        pytest.approx(0.02),
    ]
    assert holm_by_column([("a", None)]) == [None]
    assert holm_by_column([]) == []


def _measured(model, column, value, k=None, n=None, pairs=None, source="measured"):
    return Measured(model, column, "meas", source, value, k, n, pairs)


def test_compare_values_keeps_published_numbers_only_and_fills_each_row():
    margins = Margins((FIXED, RANDOM), "agreement.toml")
    values = [
        _measured("m1", "top1/in", 76.3),
        _measured("m2", "top1/in", 76.0),  # published value not a number
        _measured("m3", "top1/in", 76.0),  # published NaN
        _measured("m4", "top1/in", 76.0),  # not published
        _measured("m1", "pgd/low", 17.0, 170, 1000, source="imported"),
        _measured("m1", "other", 1.0),  # no family
    ]
    published = {
        "m1": {"top1/in": 76.1, "pgd/low": 18.39, "other": 1.0},
        "m2": {"top1/in": "76.0"},
        "m3": {"top1/in": math.nan},
    }
    rows = compare_values("st", values, published, margins, alpha=0.05)
    assert [(r.model, r.column) for r in rows] == [
        ("m1", "top1/in"),
        ("m1", "pgd/low"),
        ("m1", "other"),
    ]
    top, pgd, other = rows
    assert top.as_json() == {
        "study": "st",
        "model": "m1",
        "column": "top1/in",
        "measurement": "meas",
        "source": "measured",
        "ours": 76.3,
        "k": None,
        "n": None,
        "published": 76.1,
        "diff": pytest.approx(0.2),
        "interval_kind": "measurement agreement",
        "interval": [pytest.approx(0.2), pytest.approx(0.2)],
        "confidence": pytest.approx(0.9),
        "method": "fixed stimuli: not a sample, the difference is exact (zero-width interval)",
        "p": 0.0,
        "p_holm": 0.0,
        "family": "top-1",
        "margin": 0.1,
        "stimuli": "fixed",
        "status": DIFFERS,
        "why": "difference +0.2 outside +-0.1 (fixed stimuli: the difference is exact)",
    }
    assert pgd.source == "imported" and pgd.k == 170 and pgd.n == 1000
    assert pgd.interval == independent_difference(170, 1000, 18.39, 100.0, 0.9).interval
    assert pgd.p_holm == pytest.approx(pgd.p)  # alone in its column
    assert other.as_json()["interval"] is None and other.margin is None and other.family == ""
    assert other.status == INCONCLUSIVE and other.why == (
        "no implementation margin declared for other in agreement.toml"
    )
    # a value without a family does not end the list: the values after it are compared too
    first, second = compare_values("st", [values[5], values[0]], published, margins)
    assert (first.column, second.column) == ("other", "top1/in") and second.status == DIFFERS
    (bare,) = compare_values("st", [values[5]], published, Margins())
    assert (
        bare.why == "no implementation margin declared for other in the study (no agreement file)"
    )
    # alpha sets the confidence of every interval
    (pgd99,) = compare_values("st", [values[4]], published, margins, alpha=0.005)
    lo, hi = difference_interval(170, 1000, 184, 1000, 0.99)
    assert pgd99.confidence == pytest.approx(0.99)
    assert pgd99.interval == (pytest.approx(100 * lo), pytest.approx(100 * hi))


def test_paired_rows_say_paired_and_holm_spans_the_models_of_a_column():
    margins = Margins((FIXED,), "a.toml")
    pairs = [(True, True)] * 6 + [(True, False)] * 4
    values = [
        _measured("m1", "top1/in", 100.0, pairs=pairs),
        _measured("m2", "top1/in", 100.0, pairs=pairs),
    ]
    rows = compare_values("st", values, {"m1": {"top1/in": 60.0}, "m2": {"top1/in": 60.0}}, margins)
    raw = stats.binomtest(4, 4, 0.5).pvalue
    assert [r.stimuli for r in rows] == ["paired", "paired"]
    assert [r.p for r in rows] == [pytest.approx(raw)] * 2
    assert [r.p_holm for r in rows] == [pytest.approx(min(1.0, 2 * raw))] * 2


# --------------------------------------------------------------------------- a claim's inputs


def _row(model, column, status, ours=1.0, published=0.5):
    return Agreement("s", model, column, "meas", "measured", ours, published, status=status)


def test_input_agreement_collects_the_measured_cells_and_counts_the_unmatched():
    table = {
        ("a", "c1"): _row("a", "c1", AGREES),
        ("b", "c1"): _row("b", "c1", DIFFERS, 0.25, 0.5),
        ("c", "c2"): _row("c", "c2", INCONCLUSIVE),
        ("d", "c2"): _row("d", "c2", DIFFERS, 2.0, 0.5),
    }
    cells = {
        "c1": {"a": "measured", "b": "imported", "z": "measured", "p": "published"},
        "c2": {"c": "mini", "d": "measured", "y": "imported"},
    }
    got = InputAgreement.of(cells, table)
    assert [(r.model, r.column) for r in got.rows] == [("a", "c1"), ("b", "c1"), ("d", "c2")]
    assert got.unmatched == 2  # z and y: measured, but the study publishes no value
    assert got.counts() == {AGREES: 1, DIFFERS: 2, INCONCLUSIVE: 0}
    assert got.as_json() == {
        AGREES: 1,
        DIFFERS: 2,
        INCONCLUSIVE: 0,
        "differs_models": ["b", "d"],
        "differs_inputs": ["b x c1", "d x c2"],
    }
    assert got.named(DIFFERS) == "b (c1 -0.25), d (c2 +1.5)"
    assert got.named(INCONCLUSIVE) == ""
    assert InputAgreement().counts() == {AGREES: 0, DIFFERS: 0, INCONCLUSIVE: 0}


def test_named_shows_the_first_rows_and_counts_the_rest():
    rows = {(f"m{i}", "c"): _row(f"m{i}", "c", DIFFERS, 1.0 + i, 1.0) for i in range(7)}
    got = InputAgreement.of({"c": {f"m{i}": "measured" for i in range(7)}}, rows)
    assert got.named(DIFFERS) == ("m0 (c +0), m1 (c +1), m2 (c +2), m3 (c +3), m4 (c +4), +2 more")
    assert got.named(DIFFERS, show=7) == ", ".join(f"m{i} (c +{i})" for i in range(7))
    assert got.named(DIFFERS, show=6).endswith("m5 (c +5), +1 more")


# --------------------------------------------------------------------------- from the store

HOOK_CALLS: list[tuple] = []
PAIRS = [(True, True)] * 5 + [(True, False)] * 2 + [(False, False)] * 3


def paired_hook(store, record, column, data_dir):
    """A family's ``paired`` hook: records its arguments, returns ten per-item decisions."""
    HOOK_CALLS.append((store.root, record.model, record.measurement, column, data_dir))
    return PAIRS


def _store(tmp_path):
    from repro.store.files import Store
    from repro.store.record import ColumnValue, JobRecord

    store = Store(tmp_path / "store")
    imported = {"imported": {"file": "theirs.csv", "sha256": "0" * 64, "row": 2}}
    for model, measurement, version, column, k, prov in (
        ("a0", "imagenet", "1", "top1/in", 700, {}),  # first in store order, not wanted below
        ("m1", "imagenet", "1", "top1/in", 761, {}),
        ("m1", "pgd", "1", "pgd/low", 170, imported),
        ("m2", "imagenet", "0+old", "top1/in", 750, {}),  # stale under the versions below
        ("m3", "imagenet", "1", "top1/in", 740, {"dataset_mini": True}),  # never evidence
    ):
        col = ColumnValue.from_count(column, k, 1000)
        store.write(JobRecord(model, measurement, version, "ok", columns=[col], provenance=prov))
    return store


VERSIONS = {"imagenet": "1", "pgd": "1"}
PAIRED = Family("top-1", ("top1/*",), 0.1, "fixed", "r", 100.0, f"{__name__}:paired_hook")


def test_measured_values_reads_current_evidence_with_counts_labels_and_pairs(tmp_path, capsys):
    store = _store(tmp_path)
    HOOK_CALLS.clear()
    values = measured_values(
        store.root,
        versions=VERSIONS,
        margins=Margins((PAIRED, RANDOM)),
        data_dir="DATA",
        models=["m1"],
    )
    assert values == [
        Measured("m1", "top1/in", "imagenet", "measured", 76.1, 761, 1000, PAIRS),
        Measured("m1", "pgd/low", "pgd", "imported", 17.0, 170, 1000, None),
    ]
    assert HOOK_CALLS == [(store.root, "m1", "imagenet", "top1/in", "DATA")]
    assert capsys.readouterr().err == ""  # the mini record is left out silently here
    every = measured_values(store.root, versions=VERSIONS)
    assert [(v.model, v.column, v.pairs) for v in every] == [
        ("a0", "top1/in", None),
        ("m1", "top1/in", None),  # no margins: no family, no hook
        ("m1", "pgd/low", None),
    ]
    assert len(HOOK_CALLS) == 1
    # versions=None takes every version: the stale record counts
    assert [v.model for v in measured_values(store.root, versions=None)] == ["a0", "m1", "m1", "m2"]


def test_study_agreement_compares_the_stores_values_under_the_studys_file(tmp_path):
    store = _store(tmp_path)
    path = tmp_path / "agreement.toml"
    path.write_text(
        '[[family]]\nname = "top-1"\ncolumns = ["top1/*"]\nmargin = 0.1\nstimuli = "fixed"\n'
        f'scale = 100\nreason = "r"\npaired = "{__name__}:paired_hook"\n'
    )
    study = SimpleNamespace(name="st", agreement=path)
    published = {"a0": {"top1/in": 70.0}, "m1": {"top1/in": 76.0}, "m2": {"top1/in": 75.0}}
    HOOK_CALLS.clear()
    rows = study_agreement(
        study, store.root, published, versions=VERSIONS, data_dir="D", alpha=0.01, models=["m1"]
    )
    (row,) = rows
    assert (row.study, row.model, row.column, row.stimuli) == ("st", "m1", "top1/in", "paired")
    expected = paired_difference(PAIRS, 100.0, 0.98)
    assert row.confidence == pytest.approx(0.98) and row.interval == expected.interval
    assert row.family == "top-1" and row.margin == 0.1
    assert HOOK_CALLS == [(store.root, "m1", "imagenet", "top1/in", "D")]
    rows = study_agreement(study, store.root, published, versions=None)
    assert [r.model for r in rows] == ["a0", "m1", "m2"]
    current = study_agreement(study, store.root, published, versions=VERSIONS)
    assert [r.model for r in current] == ["a0", "m1"]  # m2's record is of another version
    assert rows[0].confidence == pytest.approx(0.9)
