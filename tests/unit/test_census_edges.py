"""The census module's edges (``repro.claims.census``): statements named by number when they have
no id, the exact messages of a file that is not TOML or names a claim without a claim file, a census
with nothing testable, the text and JSON of two studies, and a study's census checked against its
own claim file and checkout (``study_census``, ``load_censuses`` on study folders written here)."""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.base.study import read_study, select
from repro.claims.census import (
    census_document,
    format_census,
    gated_summary,
    load_censuses,
    read_census,
    study_census,
)

pytestmark = pytest.mark.unit

HEAD = 'paper = "P"\nread = "R"\n'
ONE = '[[statement]]\nid = "a"\nstatement = "A"\nwhere = "Sec. 1"\nstatus = "open"\nreason = "r"\n'


def _census(tmp_path, text, name="census.toml", **kw):
    path = tmp_path / name
    path.write_text(text)
    return read_census(path, "s", **kw)


def _error(tmp_path, text, **kw) -> str:
    with pytest.raises(ConfigError) as exc:
        _census(tmp_path, text, **kw)
    return str(exc.value)


def test_a_statement_without_an_id_is_named_by_its_number_alone(tmp_path):
    path = tmp_path / "census.toml"
    assert _error(tmp_path, 'statement = ["valid"]\n' + HEAD) == (
        f"{path}: statement #1: expected a [[statement]] table, got 'valid'"
    )
    no_id = ONE.replace('id = "a"\n', "")
    assert _error(tmp_path, HEAD + ONE.replace('"a"', '"b"') + no_id) == (
        f"{path}: statement #2: missing field(s) id"
    )


def test_not_toml_says_what_a_census_is(tmp_path):
    message = _error(tmp_path, "[[statement]\n")
    assert message.startswith(f"{tmp_path / 'census.toml'}: not valid TOML (")
    assert message.endswith("; expected a census of [[statement]] tables)")


def test_an_unknown_claim_id_without_a_claim_file_names_the_studys_claim_file(tmp_path):
    text = HEAD + ONE.replace('status = "open"\nreason = "r"', 'status = "claim"\nclaims = ["x"]')
    assert _error(tmp_path, text, claim_ids=["y"]).endswith(
        "statement #1 ('a'): claims: unknown claim id 'x' (the claims of the study's claim file)"
    )
    assert _error(tmp_path, text, claim_ids=["y"], claims_file="c.toml").endswith(
        "unknown claim id 'x' (the claims of c.toml)"
    )


def test_the_share_is_a_dash_when_nothing_is_testable(tmp_path):
    text = (
        HEAD
        + ONE.replace('"open"', '"out of scope"')
        + ONE.replace('"a"', '"b"').replace('"open"', '"not testable here"')
    )
    c = _census(tmp_path, text)
    assert (c.gated, c.testable) == (0, 0)
    assert gated_summary(c) == "0 of 2 statements gated (0 of 0 testable, -)"


TWO = (
    HEAD
    + '[tables.grid]\nwhat = "cells"\ntest = "tests/unit/test_census.py"\n'
    + ONE.replace('"Sec. 1"', '"Sec. 1"\nsee = ["t:x", "u:y"]')
    + '[[statement]]\nid = "longer_id"\nstatement = "B"\nquote = "b is"\nwhere = "Fig. 2"\n'
    + 'status = "table"\ntable = "grid"\n'
)


def test_the_text_and_json_of_two_studies(tmp_path):
    (tmp_path / "one").mkdir()
    first = _census(tmp_path / "one", TWO)
    second = _census(tmp_path, HEAD + ONE.replace('"open"', '"out of scope"'), "c2.toml")
    assert format_census([first, second]).splitlines() == [
        "s (P; census.toml)",
        "  a          open               r (Sec. 1) [see t:x, u:y]",
        "  longer_id  table              table grid (Fig. 2)",
        "  1 of 2 statements gated (1 of 2 testable, 50%); by status: claim 0, table 1, open 1, "
        "not testable here 0, out of scope 0",
        "",
        "s (P; c2.toml)",
        "  a  out of scope       r (Sec. 1)",
        "  0 of 1 statements gated (0 of 0 testable, -); by status: claim 0, table 0, open 0, "
        "not testable here 0, out of scope 1",
        "",
        "1 of 3 statements gated over 2 studies (1 of 2 testable)",
    ]
    doc = census_document([first])
    assert doc == {
        "s": {
            "file": str(tmp_path / "one" / "census.toml"),
            "paper": "P",
            "read": "R",
            "counts": {
                "claim": 0,
                "table": 1,
                "open": 1,
                "not testable here": 0,
                "out of scope": 0,
            },
            "gated": 1,
            "testable": 2,
            "statements": 2,
            "summary": "1 of 2 statements gated (1 of 2 testable, 50%)",
            "tables": {"grid": {"what": "cells", "test": "tests/unit/test_census.py"}},
            "entries": [
                {
                    "id": "a",
                    "statement": "A",
                    "quote": "",
                    "where": "Sec. 1",
                    "status": "open",
                    "claims": [],
                    "table": "",
                    "reason": "r",
                    "see": ["t:x", "u:y"],
                },
                {
                    "id": "longer_id",
                    "statement": "B",
                    "quote": "b is",
                    "where": "Fig. 2",
                    "status": "table",
                    "claims": [],
                    "table": "grid",
                    "reason": "",
                    "see": [],
                },
            ],
        }
    }
    assert census_document([first, second])["s"]["file"] == str(tmp_path / "c2.toml")


CLAIM = """[[claim]]
id = "{name}_claim"
study = "{name}"
statement = "x is 0.5"
source = "here"
statistic = "tests.unit.test_claims_tolerance:fake_statistic"
params = {{ column = "x", model = "a" }}
published = 0.5
version = 1
[claim.tolerance]
policy = "rounding"
params = {{ decimals = 1 }}
reason = "one decimal"
"""


def _study(root, name, census: str | None):
    """A study folder ``root/name`` with one claim (``<name>_claim``) and ``census``."""
    folder = root / name
    folder.mkdir(parents=True)
    named = 'census = "census.toml"\n' if census is not None else ""
    (folder / "study.toml").write_text(
        f'name = "{name}"\ntitle = "T"\ncitation = "C"\nclaims = "claims.toml"\n{named}'
        '[table]\nfile = "table.csv"\n'
    )
    (folder / "claims.toml").write_text(CLAIM.format(name=name))
    (folder / "table.csv").write_text("model,x\na,0.5\n")
    if census is not None:
        (folder / "census.toml").write_text(census)
    return folder


def _gated(cid: str) -> str:
    return HEAD + ONE.replace(
        'status = "open"\nreason = "r"', f'status = "claim"\nclaims = ["{cid}"]'
    )


def test_a_studys_census_is_checked_against_its_claim_file_and_the_checkout(tmp_path):
    good = read_study(_study(tmp_path, "one", _gated("one_claim")))
    census = study_census(good)
    assert census.study == "one" and census.gated_claims() == {"one_claim"}
    assert study_census(read_study(_study(tmp_path, "none", None))) is None
    bad = read_study(_study(tmp_path, "two", _gated("one_claim")))
    with pytest.raises(ConfigError) as exc:
        study_census(bad)
    assert str(exc.value) == (
        f"{bad.census}: statement #1 ('a'): claims: unknown claim id 'one_claim'; did you mean "
        f"'two_claim'? (the claims of {bad.claims})"
    )
    missing = HEAD + '[tables.t]\nwhat = "w"\ntest = "tests/unit/no_such_file.py"\n' + ONE
    with pytest.raises(ConfigError, match=r"\[tables\.t\]: test = 'tests/unit/no_such_file\.py'"):
        study_census(read_study(_study(tmp_path, "three", missing)))


def test_cross_references_load_only_the_studies_they_name(tmp_path, monkeypatch):
    """A ``see`` to an id with a colon in it resolves (the study is what precedes the first
    colon); a study no reference names is not read (here its census is broken)."""
    monkeypatch.setenv("REPRO_STUDY_PATH", str(tmp_path))
    _study(tmp_path, "one", HEAD + ONE.replace('"Sec. 1"', '"Sec. 1"\nsee = ["two:x:y"]'))
    _study(tmp_path, "two", HEAD + ONE.replace('id = "a"', 'id = "x:y"'))
    _study(tmp_path, "three", _gated("no_such_claim"))
    (one,) = load_censuses(select(["one"]))
    assert one.study == "one" and one.statements[0].see == ("two:x:y",)
    with pytest.raises(ConfigError, match="unknown claim id 'no_such_claim'"):
        load_censuses(select(["three"]))


def test_a_reference_to_a_study_without_a_census_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_STUDY_PATH", str(tmp_path))
    folder = _study(tmp_path, "one", HEAD + ONE.replace('"Sec. 1"', '"Sec. 1"\nsee = ["two:a"]'))
    _study(tmp_path, "two", None)
    with pytest.raises(ConfigError) as exc:
        load_censuses(select(["one"]))
    assert str(exc.value) == (
        f"{folder / 'census.toml'}: statement #1 ('a'): see: 'two:a': no study 'two' with a census"
    )
