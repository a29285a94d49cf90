"""A claim's check once the agreement of its measured inputs is known
(``repro.claims.check.with_agreement``): a differing input fails a check that passed, with the
bool False and every differing input named in the flag; the check's own text is cut to five."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from repro.claims.agreement import Agreement
from repro.claims.check import with_agreement
from repro.claims.provenance import Provenance
from repro.claims.tolerance import Check
from repro.claims.verdict import AGREES, DIFFERS, EVIDENCE_KINDS, INCONCLUSIVE, Evidence

pytestmark = pytest.mark.unit


def _row(model, status, ours):
    return Agreement("s", model, "c", "meas", "measured", ours, 1.0, status=status)


def test_every_differing_input_is_named_in_the_flag_and_fails_the_check():
    rows = {(f"m{i}", "c"): _row(f"m{i}", DIFFERS, 2.0 + i) for i in range(6)}
    rows[("ok", "c")] = _row("ok", AGREES, 1.0)
    cells = {"c": {**{f"m{i}": "measured" for i in range(6)}, "ok": "measured"}}
    check, flags, inputs = with_agreement(
        Check(True, "rho within 0.05"), Provenance(cells), SimpleNamespace(agreement=rows)
    )
    assert check.passed is False and check.status is None
    assert check.why == (
        "rho within 0.05; measured input(s) differ from their published values: m0 (c +1), "
        "m1 (c +2), m2 (c +3), m3 (c +4), m4 (c +5), +1 more (see compare)"
    )
    (flag,) = flags
    assert flag.name == DIFFERS
    assert flag.detail == ", ".join(f"m{i} (c +{i + 1})" for i in range(6))
    assert inputs.counts() == {AGREES: 1, DIFFERS: 6, INCONCLUSIVE: 0}


def test_a_check_that_could_not_be_made_keeps_its_status_and_inconclusive_inputs_are_named():
    rows = {("a", "c"): _row("a", DIFFERS, 3.0), ("b", "c"): _row("b", INCONCLUSIVE, 1.5)}
    undefined = Check(False, "undefined (NaN): value", "undefined")
    check, flags, _ = with_agreement(
        undefined,
        Provenance({"c": {"a": "measured", "b": "imported"}}),
        SimpleNamespace(agreement=rows),
    )
    assert check is undefined
    assert [(f.name, f.detail) for f in flags] == [
        (DIFFERS, "a (c +2)"),
        (
            "inconclusive",
            "1 measured input(s) neither agree with nor differ from the published values: "
            "b (c +0.5)",
        ),
    ]
    same = Check(True, "ok")
    assert with_agreement(same, Provenance({}), SimpleNamespace(agreement=None)) == (same, (), None)
    check, flags, inputs = with_agreement(
        same, Provenance({"c": {"a": "published"}}), SimpleNamespace(agreement=rows)
    )
    assert check is same and flags == () and inputs.rows == ()


def test_an_unknown_evidence_kind_names_the_known_ones():
    with pytest.raises(ValueError) as err:
        Evidence("guessed")
    assert str(err.value) == (
        "unknown evidence kind 'guessed' (known: " + ", ".join(EVIDENCE_KINDS) + ")"
    )
    assert ", ".join(EVIDENCE_KINDS) == "re-analysis, mixed, measured, mini"


def test_inconclusive_inputs_are_named_three_at_most_with_the_rest_counted():
    rows = {(f"m{i}", "c"): _row(f"m{i}", INCONCLUSIVE, 1.0 + (i + 1) / 10) for i in range(5)}
    cells = {"c": {f"m{i}": "measured" for i in range(5)}}
    same = Check(True, "ok")
    check, flags, _ = with_agreement(same, Provenance(cells), SimpleNamespace(agreement=rows))
    assert check is same
    assert [(f.name, f.detail) for f in flags] == [
        (
            "inconclusive",
            "5 measured input(s) neither agree with nor differ from the published values: "
            "m0 (c +0.1), m1 (c +0.2), m2 (c +0.3), +2 more",
        )
    ]
