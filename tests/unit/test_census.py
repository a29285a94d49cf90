"""The census file's schema (``repro.claims.census``, issue 36): a well-formed file reads into its
statements and counts; every malformed one is one ConfigError line naming the file, the statement
and the field."""

from __future__ import annotations

import textwrap

import pytest

from repro.base.errors import ConfigError
from repro.claims.census import (
    STATUSES,
    Census,
    format_census,
    gated_summary,
    read_census,
)

pytestmark = pytest.mark.unit

HEAD = """\
paper = "arXiv 0000.00000"
read = "the abstract"

[tables.grid]
what = "a grid of cells"
test = "tests/unit/test_census.py"
"""

GOOD = (
    HEAD
    + """
[[statement]]
id = "a"
statement = "A rises with B"
quote = "rises with"
where = "Sec. 1"
status = "claim"
claims = ["claim_a"]

[[statement]]
id = "b"
statement = "C is in the grid"
where = "Fig. 2"
status = "table"
table = "grid"
see = ["other:x"]

[[statement]]
id = "c"
statement = "D could be tested"
where = "Sec. 3"
status = "open"
reason = "needs a claim"

[[statement]]
id = "d"
statement = "E needs a measurement"
where = "Sec. 4"
status = "not testable here"
reason = "no data"

[[statement]]
id = "e"
statement = "F is the design"
where = "abstract"
status = "out of scope"
reason = "design"

[[statement]]
id = "f"
statement = "G falls with H"
where = "Sec. 5"
status = "claim"
claims = ["claim_a", "claim_b"]
"""
)

CLAIMS = ["claim_a", "claim_b", "claim_c"]


def _read(tmp_path, text: str, claims=CLAIMS) -> Census:
    from repro.base.settings import checkout_dir

    path = tmp_path / "census.toml"
    path.write_text(text)
    return read_census(path, "s", claims, claims_file="claims.toml", root=checkout_dir())


def _error(tmp_path, text: str, claims=CLAIMS) -> str:
    with pytest.raises(ConfigError) as exc:
        _read(tmp_path, text, claims)
    message = str(exc.value)
    assert "\n" not in message and str(tmp_path / "census.toml") in message, message
    return message


def test_a_good_census_reads_into_statements_and_counts(tmp_path):
    c = _read(tmp_path, GOOD)
    assert [s.id for s in c.statements] == ["a", "b", "c", "d", "e", "f"]
    assert c.counts() == {
        "claim": 2,
        "table": 1,
        "open": 1,
        "not testable here": 1,
        "out of scope": 1,
    }
    assert list(c.counts()) == list(STATUSES)
    assert (c.gated, c.testable, len(c.statements)) == (3, 4, 6)
    assert c.gated_claims() == {"claim_a", "claim_b"}
    assert c.statements[1].see == ("other:x",) and c.statements[0].quote == "rises with"
    assert gated_summary(c) == "3 of 6 statements gated (3 of 4 testable, 75%)"


def test_the_text_lists_every_statement_and_the_counts(tmp_path):
    text = format_census([_read(tmp_path, GOOD)])
    lines = text.splitlines()
    assert lines[0] == "s (arXiv 0000.00000; census.toml)"
    row = {line.split()[0]: line for line in lines[1:7]}
    assert set(row) == set("abcdef")
    assert (
        "claim_a, claim_b" in row["f"] and "table grid" in row["b"] and "[see other:x]" in row["b"]
    )
    assert "needs a claim (Sec. 3)" in row["c"]
    assert lines[7] == (
        "  3 of 6 statements gated (3 of 4 testable, 75%); by status: claim 2, table 1, open 1, "
        "not testable here 1, out of scope 1"
    )
    assert lines[-1] == "3 of 6 statements gated over 1 study (3 of 4 testable)"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ('status = "open"', 'status = "gated"'),
            "statement #3 ('c'): status = 'gated', expected one of 'claim', 'table', 'open', "
            "'not testable here', 'out of scope'",
        ),
        (
            ('claims = ["claim_a"]', 'claims = ["claim_aa"]'),
            "statement #1 ('a'): claims: unknown claim id 'claim_aa'; did you mean 'claim_a'? "
            "(the claims of claims.toml)",
        ),
        (
            ('claims = ["claim_a"]\n', ""),
            "statement #1 ('a'): status 'claim' needs `claims` (the ids of the gating claims)",
        ),
        (
            ('table = "grid"', 'table = "heat"'),
            "statement #2 ('b'): table 'heat' is not a key of [tables] (known: grid)",
        ),
        (
            ('reason = "no data"\n', ""),
            "statement #4 ('d'): status 'not testable here' needs a `reason` (why)",
        ),
        (('id = "b"', 'id = "a"'), "statement #2 ('a'): id 'a' appears twice"),
        (
            ('see = ["other:x"]', 'see = ["x"]'),
            "statement #2 ('b'): see: 'x', expected 'study:statement-id'",
        ),
        (
            ('quote = "rises with"', 'quote = "' + "word " * 30 + '"'),
            "statement #1 ('a'): quote = 'word word",
        ),
        (
            ('where = "Sec. 3"', 'where = "Sec. 3"\nsource = "x"'),
            "statement #3 ('c'): unknown key 'source'",
        ),
        (('where = "Sec. 4"\n', ""), "statement #4 ('d'): missing field(s) where"),
        (
            ('status = "out of scope"', 'status = "out of scope"\nclaims = ["claim_c"]'),
            "statement #5 ('e'): claims given, but status is 'out of scope'",
        ),
        (
            ('test = "tests/unit/test_census.py"', 'test = "tests/unit/no_such_test.py"'),
            "[tables.grid]: test = 'tests/unit/no_such_test.py': no such test file",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_statement_and_field(tmp_path, change, expected):
    old, new = change
    assert old in GOOD
    message = _error(tmp_path, GOOD.replace(old, new, 1))
    assert expected in message, message


def test_a_census_without_statements_or_what_was_read_is_refused(tmp_path):
    assert "no [[statement]] tables" in _error(tmp_path, "statement = []\n" + HEAD)
    message = _error(tmp_path, GOOD.replace('read = "the abstract"\n', ""))
    assert "missing field(s) read" in message


def test_not_toml_is_one_line(tmp_path):
    message = _error(tmp_path, "[[statement]\n")
    assert "not valid TOML" in message and "census of [[statement]] tables" in message


def test_claim_ids_are_not_checked_without_the_studys_claims(tmp_path):
    """The schema alone (no claim file given) reads any id; ``study_census`` always passes the
    study's claims (tests/claims/test_census.py)."""
    text = GOOD.replace('claims = ["claim_a"]', 'claims = ["anything"]')
    assert _read(tmp_path, text, claims=None).statements[0].claims == ("anything",)
    assert "unknown claim id 'anything'" in _error(tmp_path, text)


def test_textwrap_of_the_docstring_example_reads(tmp_path):
    """The module docstring's example file is a valid census (given its claim and table)."""
    import repro.claims.census as census

    doc = census.__doc__ or ""
    example = textwrap.dedent(doc.split("holds::\n")[1].split("\n\nStatuses")[0])
    example = example.replace("tests/data/test_imagenetx_claims.py", "tests/unit/test_census.py")
    c = _read(tmp_path, example, claims=["imagenetx_colorjitter_spillover_pose"])
    assert c.counts()["claim"] == 1 and c.statements[0].see == (
        "subramanian2023:shape_bias_variance",
    )
