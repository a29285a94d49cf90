"""The claim-file fields of issue 21 (``repro.claims.spec``): estimand, derived, equivalence,
turning_point. Read into the claim, and bad values are a one-line ConfigError naming the file,
the claim, the field and what was expected."""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.claims.loader import read_claim_file
from repro.claims.spec import Derived, Equivalence, Estimand, TurningPoint

pytestmark = pytest.mark.unit

BASE = """
[[claim]]
id = "alpha_value"
study = "test"
statement = "a's x is 0.5"
source = "here"
statistic = "tests.unit.test_claims_tolerance:fake_statistic"
params = { column = "x", model = "a" }
published = 0.5
version = 1
[claim.tolerance]
policy = "rounding"
params = { decimals = 1 }
reason = "one decimal"
"""

SAMPLE = (
    '[claim.estimand]\nkind = "sample"\npopulation = "recipes"\nclusters = "m:f"\nreason = "why"\n'
)
CENSUS = (
    '[claim.estimand]\nkind = "census"\npopulation = "the 48"\nunit = "model"\nreason = "why"\n'
)


def _read(tmp_path, extra: str):
    path = tmp_path / "claims.toml"
    path.write_text(BASE + extra)
    return read_claim_file(path)[0]


def test_fields_are_optional_and_absent_by_default(tmp_path):
    c = _read(tmp_path, "")
    assert (c.estimand, c.derived, c.equivalence, c.turning_point) == (None, None, None, None)


def test_fields_are_read(tmp_path):
    c = _read(
        tmp_path,
        SAMPLE + '[claim.derived]\nreason = "counted from the table"\n'
        '[claim.equivalence]\nmargin = 0.3\nreason = "medium"\n'
        '[claim.turning_point]\ndecides = "u_test"\nreason = "tests the vertex"\n',
    )
    assert c.estimand == Estimand("sample", "recipes", "why", "model", "m:f")
    assert c.derived == Derived("counted from the table")
    assert c.equivalence == Equivalence(0.3, "medium", 0.05)
    assert c.turning_point == TurningPoint("u_test", "tests the vertex")
    assert _read(tmp_path, CENSUS).estimand == Estimand("census", "the 48", "why", "model", None)


@pytest.mark.parametrize(
    "extra,match",
    [
        (
            SAMPLE.replace('kind = "sample"', 'kind = "guess"'),
            r"estimand: kind = 'guess', expected one of census, sample",
        ),
        (SAMPLE.replace('clusters = "m:f"\n', ""), r"estimand: a sample needs `clusters"),
        (CENSUS + 'clusters = "m:f"\n', r"estimand: a census has no clusters"),
        (CENSUS.replace('reason = "why"\n', ""), r"estimand: needs a `reason`"),
        (
            CENSUS.replace('population = "the 48"\n', ""),
            r"estimand: `population` = None, expected a non-empty string",
        ),
        (CENSUS + 'units = "run"\n', r"estimand: unknown field 'units'"),
        ('[claim.derived]\nreason = ""\n', r"derived: needs a `reason`"),
        (
            '[claim.equivalence]\nmargin = 1.5\nreason = "r"\n',
            r"equivalence: margin = 1.5, expected a number strictly",
        ),
        (
            '[claim.equivalence]\nmargin = 0.3\nalpha = 0.6\nreason = "r"\n',
            r"equivalence: alpha = 0.6, expected below 0.5",
        ),
        (
            '[claim.turning_point]\ndecides = "f_test"\nreason = "r"\n',
            r"turning_point: decides = 'f_test', expected one of",
        ),
    ],
)
def test_bad_fields_are_one_line_errors_naming_file_claim_and_field(tmp_path, extra, match):
    with pytest.raises(ConfigError, match=match) as info:
        _read(tmp_path, extra)
    text = str(info.value)
    assert "claims.toml: claim #1 ('alpha_value')" in text and "\n" not in text
