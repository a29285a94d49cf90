"""``repro.scoring.critical_band_grid`` and ``python -m repro score critical-band --grid``:
the 35-condition grid of the authors' files and the suite's 29 conditions, mapped explicitly;
thresholds under both criteria; one-line errors for every malformed input.

Inputs are built from accuracy grids chosen so that each criterion, the SD-0 pooling and the
band order give different thresholds (a swapped row, a per-band instead of a pooled baseline, or
a transposed grid each fails a test); the expected thresholds are counted by hand below.
"""

from __future__ import annotations

import pytest

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.scoring import critical_band_grid as g

pytestmark = pytest.mark.unit

SDS = (0.02, 0.04, 0.08, 0.16)
# correct counts of 10 trials per noisy cell, rows SD 0.02..0.16, columns bands 0..6
NOISY = [
    [9, 9, 9, 9, 9, 9, 9],  # SD 0.02
    [9, 9, 8, 6, 4, 9, 9],  # SD 0.04
    [9, 7, 6, 4, 3, 5, 9],  # SD 0.08
    [9, 5, 4, 2, 1, 3, 6],  # SD 0.16
]
CLEAN = [10, 10, 8, 10, 10, 10, 10]  # SD-0 correct of 10 per band: pooled 68/70
# absolute 50% (> 0.5): band 0: 0.16 passes -> 0; band 1: 0.5 fails, 0.7 passes -> 1; band 2: 0.4
# fails, 0.6 passes -> 1; band 3: 0.2, 0.4 fail, 0.6 passes -> 2; band 4: 0.1, 0.3, 0.4 fail, 0.9
# passes -> 3; band 5: 0.3, 0.5 fail, 0.9 passes -> 2; band 6: 0.6 passes -> 0
ABSOLUTE = [0, 1, 1, 2, 3, 2, 0]
# _norm: relative to 68/70 = 0.9714: 0.5 / 0.9714 = 0.515 passes (band 1 -> 0; band 5: 0.3 fails,
# 0.5 -> 0.515 passes -> 1); 0.4 / 0.9714 = 0.412 fails (bands 2, 4 as before)
NORM = [0, 0, 1, 2, 3, 1, 0]


def decisions(clean=CLEAN, noisy=NOISY, n=10) -> dict[str, list[int]]:
    out = {}
    for b in range(7):
        out[f"noise0freq{b}"] = [1] * clean[b] + [0] * (n - clean[b])
    for i, sd in enumerate(SDS):
        for b in range(7):
            k = noisy[i][b]
            out[f"noise{sd:g}freq{b}"] = [1] * k + [0] * (n - k)
    return out


def test_thresholds_under_both_criteria_counted_by_hand():
    score = g.score_grid(g.grid_from_decisions(decisions()))
    assert list(score.thresholds) == ABSOLUTE
    assert list(score.thresholds_norm) == NORM
    assert score.grid.baseline() == Count(68, 70)
    assert score.grid.split_clean and score.grid.n_conditions == 35 and score.grid.trials == 350


def test_the_split_sd0_row_is_read_for_the_grid_but_never_for_the_thresholds():
    """Changing the per-band SD-0 counts (keeping their sum) moves the grid's
    row 0 but no threshold."""
    other = [10, 10, 10, 10, 10, 8, 10]
    a = g.score_grid(g.grid_from_decisions(decisions()))
    b = g.score_grid(g.grid_from_decisions(decisions(clean=other)))
    assert a.grid.accuracy_grid()[0, 2] == 0.8 and b.grid.accuracy_grid()[0, 2] == 1.0
    assert a.thresholds == b.thresholds and a.thresholds_norm == b.thresholds_norm


def test_the_mapping_to_the_suites_29_conditions():
    grid = g.grid_from_decisions(decisions())
    names = [name for name, _ in grid.suite_counts()]
    # the probe's names and order (repro.probes.critical_band.conditions;
    # tests/unit/test_critical_band_probe.py checks that the probe's list and this one agree)
    assert names == ["sd=0"] + [f"f={b}/sd={sd:g}" for b in range(7) for sd in SDS]
    counts = dict(grid.suite_counts())
    assert counts["sd=0"] == Count(68, 70)  # the 7 SD-0 cells summed
    assert counts["f=4/sd=0.16"] == Count(1, 10) and counts["f=1/sd=0.04"] == Count(9, 10)


@pytest.mark.parametrize(
    "name,cell",
    [
        ("noise0freq3", (0.0, 3)),
        ("noise0.02freq0", (0.02, 0)),
        ("noise0.16freq6", (0.16, 6)),
        ("sd=0", (0.0, None)),
        ("f=5/sd=0.08", (0.08, 5)),
    ],
)
def test_parse_condition(name, cell):
    assert g.parse_condition(name) == cell


@pytest.mark.parametrize(
    "name,message",
    [
        ("noise0.03freq1", "noise SD 0.03 is not one of 0, 0.02, 0.04, 0.08, 0.16"),
        ("noise0.02freq7", "band 7 is not one of 0..6"),
        ("f=1/sd=0", "SD 0 is named sd=0"),
        ("clean", "expected noise<sd>freq<band>"),
    ],
)
def test_parse_condition_errors(name, message):
    with pytest.raises(ValueError, match=message):
        g.parse_condition(name)


def test_counts_table_with_pooled_sd0_scores_like_the_grid(tmp_path):
    grid = g.grid_from_decisions(decisions())
    path = tmp_path / "c.csv"
    path.write_text(
        "condition,k,n\n" + "".join(f"{n},{c.k},{c.n}\n" for n, c in grid.suite_counts())
    )
    a, b = g.score_grid(grid), g.score_grid(g.read_grid(path))
    assert (a.thresholds, a.thresholds_norm, a.fit, a.fit_norm) == (
        b.thresholds,
        b.thresholds_norm,
        b.fit,
        b.fit_norm,
    )
    assert not b.grid.split_clean and b.grid.n_conditions == 29


def test_an_all_wrong_sd0_leaves_the_norm_criterion_undefined():
    score = g.score_grid(g.grid_from_decisions(decisions(clean=[0] * 7)))
    assert score.thresholds_norm is None and score.fit_norm is None
    assert list(score.thresholds) == ABSOLUTE  # the absolute criterion never reads SD 0


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d.pop("noise0.08freq2"), r"missing condition\(s\) noise0.08freq2"),
        (lambda d: d.pop("noise0freq4"), r"missing condition\(s\) noise0freq4"),
        (lambda d: d.update({"sd=0": [1]}), "SD 0 appears both pooled"),
        (
            lambda d: d.update({"noise0.02freq1": [1, 2]}),
            r"'noise0.02freq1', trial 1: 2 is not a decision",
        ),
        (lambda d: d.update({"noise0.02freq1": "1,0"}), "expected a list of 0/1 decisions"),
        (lambda d: d.update({"noise0.02freq1": []}), "without trials: f=1/sd=0.02"),
        (lambda d: d.update({"noise0.05freq1": [1]}), "noise SD 0.05 is not one of"),
    ],
)
def test_malformed_grids_are_one_data_error(mutate, message):
    d = decisions()
    mutate(d)
    with pytest.raises(DataError, match=message):
        g.grid_from_decisions(d, "f.json")


@pytest.mark.parametrize(
    "text,message",
    [
        ("condition,k\nsd=0,1\n", "expected a per-trial JSON object"),
        ("condition,k,n\nsd=0,5,4\n", "k = 5, n = 4 .*expected 0 <= k <= n"),
        ("condition,k,n\nsd=0,x,4\n", "k = 'x' is not a count"),
        ("condition,k,n\nsd=0,1,4\nsd=0,1,4\n", "appears twice"),
        ("{not json", "not valid JSON"),
    ],
)
def test_malformed_files_name_the_file(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=message) as err:
        g.read_grid(path)
    assert str(path) in str(err.value)


def _count_rows(grid=None):
    grid = grid or g.grid_from_decisions(decisions())
    return [{"condition": n, "k": str(c.k), "n": str(c.n)} for n, c in grid.suite_counts()]


def test_counts_rows_at_the_bounds_are_counts():
    """k = n (all correct) and n = 1 (one trial) are counts like any other."""
    rows = _count_rows()
    rows[0] = {"condition": rows[0]["condition"], "k": "1", "n": "1"}
    rows[5] = dict(rows[5], k=rows[5]["n"])
    grid = g.grid_from_counts(rows)
    cells = dict(grid.suite_counts())
    assert cells[rows[0]["condition"]] == Count(1, 1)
    assert cells[rows[5]["condition"]] == Count(int(rows[5]["n"]), int(rows[5]["n"]))


@pytest.mark.parametrize(
    ("line", "row", "message"),
    [
        (2, {"k": "1", "n": "2"}, "<counts>: line 2: empty condition"),
        (3, {"condition": " ", "k": "1", "n": "2"}, "<counts>: line 3: empty condition"),
        (
            4,
            {"k": "", "n": "2"},
            "<counts>: line 4: k = '' is not a count (expected an integer >= 0)",
        ),
        (
            4,
            {"k": "x", "n": "2"},
            "<counts>: line 4: k = 'x' is not a count (expected an integer >= 0)",
        ),
        (5, {"k": "1"}, "<counts>: line 5: n = '' is not a count (expected an integer >= 0)"),
        (
            5,
            {"k": "1", "n": "2.0"},
            "<counts>: line 5: n = '2.0' is not a count (expected an integer >= 0)",
        ),
        (
            6,
            {"k": "3", "n": "2"},
            "<counts>: line 6: k = 3, n = 2 for condition {name!r} (expected 0 <= k <= n and n >= "
            "1: k correct of n trials)",
        ),
        (
            6,
            {"k": "0", "n": "0"},
            "<counts>: line 6: k = 0, n = 0 for condition {name!r} (expected 0 <= k <= n and n >= "
            "1: k correct of n trials)",
        ),
    ],
)
def test_a_bad_counts_row_names_its_line_and_field_whole(line, row, message):
    """The message, whole: where (origin and line, counted from the header's line 1), the field
    and what is expected."""
    rows = _count_rows()
    i = line - 2
    name = rows[i]["condition"]
    if "condition" not in row:
        row = {"condition": name, **row} if line > 2 else row
    rows[i] = row
    with pytest.raises(DataError) as bad:
        g.grid_from_counts(rows)
    assert str(bad.value) == message.format(name=name)


def test_counts_rows_name_their_origin_and_lines_from_first_line():
    rows = _count_rows()
    rows[1] = dict(rows[1], n="")
    with pytest.raises(DataError) as bad:
        g.grid_from_counts(rows, origin="lab.csv", first_line=10)
    assert str(bad.value).startswith("lab.csv: line 11: n = ''")
    with pytest.raises(DataError) as bad:
        g.grid_from_counts(_count_rows()[:-1], origin="lab.csv")
    assert str(bad.value).startswith("lab.csv: missing condition(s) ")


def test_suite_names_of_cells():
    assert g.suite_name(0, None) == g.suite_name(0.0, 3) == "sd=0"
    assert g.suite_name(0.04, 2) == "f=2/sd=0.04" and g.suite_name(1, 6) == "f=6/sd=1"


def test_fit_dict_says_why_a_fit_is_undefined():
    from repro.scoring import critical_band as cb

    flat = g.fit_dict(cb.fit([4] * 7))
    assert flat["reason"] and flat["bandwidth"] is None
    peaked = g.fit_dict(cb.fit(ABSOLUTE))
    assert "reason" in peaked and peaked["reason"] is None and len(peaked["params"]) == 3


def test_the_probe_results_headline_is_the_normalised_centre():
    """``score`` adds the fits to a probe result and takes cf_norm, the value the paper
    correlates, as its headline."""
    from repro.base.results import ConditionCount, ProbeResult
    from repro.scoring import critical_band as cb

    grid = g.grid_from_decisions(decisions())
    counts = [ConditionCount(name, c.k, c.n) for name, c in grid.suite_counts()]
    result = cb.score(ProbeResult("critical_band", "4", 0, counts))
    expected = g.score_grid(grid).fit_norm.center_frequency
    assert result.value == result.values["cf_norm"] == expected
    assert result.values["cf"] != expected  # the absolute criterion's centre is another number


NOISY_NAMES = [g.grid_name(sd, b) for b in range(7) for sd in SDS]  # the order they are reported


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d.update({"sd=0": [1]}),
            "f.json: SD 0 appears both pooled (sd=0) and per band (noise0freq0, noise0freq1, "
            "noise0freq2, noise0freq3, noise0freq4, noise0freq5, noise0freq6); expected one of the "
            "two",
        ),
        (
            lambda d: d.pop("noise0freq4"),
            "f.json: missing condition(s) noise0freq4 (expected SD 0 either per band, "
            "noise0freq0..noise0freq6, or pooled as sd=0)",
        ),
        (
            lambda d: d.pop(NOISY_NAMES[3]),
            f"f.json: missing condition(s) {NOISY_NAMES[3]} (expected all 28 noisy cells: SD 0.02, "
            "0.04, 0.08, 0.16 x bands 0..6)",
        ),
        (
            lambda d: [d.pop(n) for n in NOISY_NAMES[:4]],
            f"f.json: missing condition(s) {', '.join(NOISY_NAMES[:4])} (expected all 28 noisy "
            "cells: SD 0.02, 0.04, 0.08, 0.16 x bands 0..6)",
        ),
        (
            lambda d: [d.pop(f"noise0freq{b}") for b in (2, 4)],
            "f.json: missing condition(s) noise0freq2, noise0freq4 (expected SD 0 either per band, "
            "noise0freq0..noise0freq6, or pooled as sd=0)",
        ),
        (
            lambda d: [d.pop(n) for n in NOISY_NAMES[:5]],
            f"f.json: missing condition(s) {', '.join(NOISY_NAMES[:4])} (+1 more) (expected all 28 "
            "noisy cells: SD 0.02, 0.04, 0.08, 0.16 x bands 0..6)",
        ),
        (
            lambda d: [d.pop(n) for n in NOISY_NAMES[:6]],
            f"f.json: missing condition(s) {', '.join(NOISY_NAMES[:4])} (+2 more) (expected all 28 "
            "noisy cells: SD 0.02, 0.04, 0.08, 0.16 x bands 0..6)",
        ),
        (
            lambda d: d.update({"noise0freq3": []}),
            "f.json: condition(s) without trials: noise0freq3 (n must be > 0)",
        ),
        (
            lambda d: [d.pop(f"noise0freq{b}") for b in range(7)] and d.update({"sd=0": []}),
            "f.json: condition(s) without trials: sd=0 (n must be > 0)",
        ),
    ],
)
def test_an_incomplete_grid_is_named_whole(mutate, message):
    d = decisions()
    mutate(d)
    with pytest.raises(DataError) as bad:
        g.grid_from_decisions(d, "f.json")
    assert str(bad.value) == message


def test_read_grid_tells_json_by_its_first_non_blank_character(tmp_path):
    import json

    path = tmp_path / "grid.json"
    path.write_text("\n  " + json.dumps(decisions()))
    grid = g.read_grid(path)
    assert grid.origin == str(path) and grid.split_clean and grid.n_conditions == 35
    counts = tmp_path / "counts.csv"
    counts.write_text(
        "condition,k,n\n" + "".join(f"{n},{c.k},{c.n}\n" for n, c in grid.suite_counts())
    )
    assert g.read_grid(counts).origin == str(counts)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "{path}: not valid JSON"),
        ("condition,k,n\n" + "x" * 200_000 + ",1,2\n", "{path}: malformed CSV (field larger than "),
    ],
)
def test_an_unreadable_grid_says_what_was_expected(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataError) as bad:
        g.read_grid(path)
    assert str(bad.value).startswith(message.format(path=path))
    assert g.GRID_FILE in str(bad.value)
    with pytest.raises(DataError) as bad:
        g.read_grid(tmp_path / "missing.json")
    assert g.GRID_FILE in str(bad.value)


def test_a_zero_baseline_grid_keeps_its_absolute_fit():
    grid = g.grid_from_decisions(decisions(clean=[0] * 7))
    score = g.score_grid(grid)
    assert score.grid is grid
    assert score.fit.triple() == g.fit(tuple(ABSOLUTE)).triple()


def test_an_undefined_fit_has_no_triple():
    from repro.scoring.critical_band import CriticalBandFit

    for bw, cf, pns in ((None, 1.0, 2.0), (1.0, None, 2.0), (1.0, 2.0, None)):
        with pytest.raises(ValueError) as bad:
            CriticalBandFit(bw, cf, pns, None, "flat").triple()
        assert str(bad.value) == "critical-band fit undefined: flat"
    assert CriticalBandFit(1.0, 2.0, 3.0, (1.0, 1.0, 1.0)).triple() == (1.0, 2.0, 3.0)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d.update({"noise0.02freq1": [1, 2]}),
            "f.json: condition 'noise0.02freq1', trial 1: 2 is not a decision (expected 0 = wrong "
            "or 1 = correct)",
        ),
        (
            lambda d: d.update({"noise0.02freq1": "1,0"}),
            "f.json: condition 'noise0.02freq1': expected a list of 0/1 decisions, got str",
        ),
        (lambda d: d.update({"f=1/sd=0.02": [1]}), "f.json: condition 'f=1/sd=0.02' appears twice"),
    ],
)
def test_a_bad_condition_is_named_with_its_file(mutate, message):
    d = decisions()
    mutate(d)
    with pytest.raises(DataError) as bad:
        g.grid_from_decisions(d, "f.json")
    assert str(bad.value).startswith(message)


def test_a_condition_given_twice_says_each_once_is_expected():
    rows = _count_rows()
    rows.append(dict(rows[3]))
    with pytest.raises(DataError) as bad:
        g.grid_from_counts(rows, "c.csv")
    name = rows[3]["condition"]
    assert str(bad.value) == (
        f"c.csv: line {len(rows) + 1}: condition {name!r} appears twice (as {name}; expected each "
        "condition once)"
    )


def test_a_grid_keeps_its_origin():
    assert g.grid_from_decisions(decisions(), "f.json").origin == "f.json"
    assert g.grid_from_counts(_count_rows(), "c.csv").origin == "c.csv"


def test_a_grid_scores_json_carries_both_criteria_or_says_none():
    grid = g.grid_from_decisions(decisions(), "f.json")
    doc = g.score_grid(grid).as_json()
    assert doc["origin"] == "f.json" and doc["conditions"] == 35 and doc["trials"] == 350
    assert doc["thresholds"] == ABSOLUTE and doc["thresholds_norm"] == NORM
    assert doc["fit_norm"] == g.fit_dict(g.fit(tuple(NORM)))
    assert doc["baseline"] == {"condition": "sd=0", "k": 68, "n": 70, "rate": 68 / 70}
    zero = g.score_grid(g.grid_from_decisions(decisions(clean=[0] * 7))).as_json()
    assert zero["thresholds_norm"] is None and zero["fit_norm"] is None


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("", "(none)"),
        ("  \n", "(none)"),
        ("a, b ,c\n1,2,3\n", "a,b,c"),
        # a long header: its first 200 characters
        ("h" * 150 + "," + "k" * 150 + "\n", "h" * 150 + "," + "k" * 49),
    ],
)
def test_a_wrong_counts_header_is_shown_as_read(tmp_path, text, shown):
    path = tmp_path / "grid.csv"
    path.write_text(text)
    with pytest.raises(DataError) as bad:
        g.read_grid(path)
    assert str(bad.value) == f"{path}: header {shown}: expected {g.GRID_FILE}"


def test_conditions_without_trials_are_named_first_four_sorted():
    d = decisions()
    empty = ("noise0.16freq6", "noise0.02freq3", "noise0freq5", "noise0.08freq0", "noise0freq1")
    for name in empty:
        d[name] = []
    with pytest.raises(DataError) as bad:
        g.grid_from_decisions(d, "f.json")
    assert str(bad.value) == (
        "f.json: condition(s) without trials: f=0/sd=0.08, f=3/sd=0.02, f=6/sd=0.16, "
        "noise0freq1 (n must be > 0)"
    )


def test_a_grid_without_an_origin_is_called_grid():
    d = decisions()
    d.pop("noise0.02freq0")
    with pytest.raises(DataError, match=r"^<grid>: missing condition\(s\) noise0.02freq0 \("):
        g.grid_from_decisions(d)
    assert g.grid_from_decisions(decisions()).origin == "<grid>"
