"""The vocabulary of verdicts, evidence and intervals (repro.claims.verdict): evidence from
provenance counts, the mini verdict, and the phrases that keep re-analysis and reproduction
apart."""

from __future__ import annotations

import pytest

from repro.claims.tolerance import Check
from repro.claims.verdict import (
    INCOMPLETE,
    INTERVAL_KINDS,
    MINI,
    NOT_REPRODUCED,
    REPRODUCED,
    UNDEFINED,
    Evidence,
    Flag,
    evidence_of,
    verdict_of,
    verdict_phrase,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "counts, kind, measured, total",
    [
        ({"published": 144}, "re-analysis", 0, 144),
        ({}, "re-analysis", 0, 0),
        ({"measured": 48}, "measured", 48, 48),
        ({"measured": 40, "imported": 8}, "measured", 48, 48),
        ({"measured": 3, "published": 141}, "mixed", 3, 144),
        ({"imported": 1, "published": 47}, "mixed", 1, 48),
        ({"measured": 3, "missing": 1}, "mixed", 3, 4),  # a missing input is not measured evidence
        ({"mini": 3, "published": 141}, "mini", 0, 144),
        ({"mini": 1, "measured": 47}, "mini", 47, 48),  # one mini value makes the whole claim mini
    ],
)
def test_evidence_from_provenance_counts(counts, kind, measured, total):
    ev = evidence_of(counts)
    assert (ev.kind, ev.measured, ev.total) == (kind, measured, total)


def test_evidence_text_and_json():
    assert Evidence("mixed", 3, 48).text() == "mixed (3 of 48 measured)"
    assert Evidence("measured", 48, 48).text() == "measured (48 of 48)"
    assert Evidence("re-analysis", 0, 96).as_json() == {
        "kind": "re-analysis",
        "measured": 0,
        "total": 96,
    }
    with pytest.raises(ValueError, match="unknown evidence kind 'published'"):
        Evidence("published")


def test_a_mini_input_never_reproduces_nor_fails():
    mini = evidence_of({"mini": 12, "published": 180})
    assert verdict_of(Check(True, "ok"), mini) == MINI
    assert verdict_of(Check(False, "off"), mini) == MINI
    # a check that could not compare keeps its own status, even on mini inputs
    assert verdict_of(Check(False, "nan", UNDEFINED), mini) == UNDEFINED
    assert verdict_of(Check(True, "ok"), evidence_of({"measured": 2})) == REPRODUCED
    assert verdict_of(Check(False, "off"), None) == NOT_REPRODUCED
    with pytest.raises(ValueError, match="unknown check status 'mini'"):
        verdict_of(Check(True, "x", MINI))


def test_phrases_keep_reanalysis_and_reproduction_apart():
    re_an, meas = Evidence("re-analysis"), Evidence("mixed", 3, 48)
    assert verdict_phrase(REPRODUCED, re_an) == "consistent with the published data"
    assert verdict_phrase(REPRODUCED, meas) == "reproduced by measurement"
    assert verdict_phrase(NOT_REPRODUCED, meas) == "not reproduced by measurement"
    assert verdict_phrase(NOT_REPRODUCED, re_an) == "not supported by the published data"
    assert verdict_phrase(MINI, Evidence("mini")) == "mini run: not evidence"
    assert verdict_phrase(INCOMPLETE, meas).startswith("incomplete")
    assert "reproduced" not in verdict_phrase(REPRODUCED, re_an)


def test_phrases_without_evidence_and_for_every_status():
    """No evidence reads as a re-analysis; a mini verdict is "not evidence" whatever the evidence
    says, and so is mini evidence whatever the verdict; undefined in its own words."""
    assert verdict_phrase(REPRODUCED, None) == "consistent with the published data"
    assert verdict_phrase(NOT_REPRODUCED, None) == "not supported by the published data"
    assert verdict_phrase(MINI, Evidence("mixed", 3, 48)) == "mini run: not evidence"
    assert verdict_phrase(REPRODUCED, Evidence("mini")) == "mini run: not evidence"
    assert verdict_phrase(UNDEFINED, Evidence("mixed", 3, 48)) == (
        "undefined: nothing could be compared"
    )
    assert verdict_phrase(INCOMPLETE, None) == "incomplete: inputs it needs measured are missing"


def test_three_interval_kinds_named_once():
    assert INTERVAL_KINDS == ("across models", "replication", "measurement agreement")


def test_a_flag_reads_as_its_name_and_its_detail_when_it_has_one():
    assert Flag("derived").text() == "derived"
    assert Flag("differs", "m3, m7").text() == "differs: m3, m7"


def test_an_unknown_check_status_names_the_known_ones_whole():
    with pytest.raises(ValueError) as err:
        verdict_of(Check(True, "x", "guessed"))
    assert str(err.value) == "unknown check status 'guessed' (known: incomplete, undefined)"
    # each known status is the verdict, whatever passed says and whatever the evidence
    for status in (UNDEFINED, INCOMPLETE):
        for passed in (True, False):
            assert verdict_of(Check(passed, "x", status), evidence_of({"measured": 1})) == status
            assert verdict_of(Check(passed, "x", status)) == status
    # evidence that is not mini leaves passed to decide
    assert verdict_of(Check(True, "ok"), evidence_of({"published": 3})) == REPRODUCED
    assert verdict_of(Check(False, "off"), evidence_of({"published": 3})) == NOT_REPRODUCED
    assert verdict_of(Check(True, "ok")) == REPRODUCED
