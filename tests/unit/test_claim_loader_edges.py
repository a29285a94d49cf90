"""The claim file's edges (``repro.claims.spec``, ``repro.claims.loader``): a claim without an id
named by its number, the exact messages of a file that is not TOML and of an unknown policy, the
margin's and alpha's range at both ends, and ``load_claims`` given studies rather than names."""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.base.registry import UnknownNameError
from repro.base.study import read_study
from repro.claims.loader import load_claims, read_claim_file
from repro.claims.tolerance import POLICIES
from tests.unit.test_claim_fields import BASE

pytestmark = pytest.mark.unit


def _error(tmp_path, text: str) -> str:
    path = tmp_path / "claims.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        read_claim_file(path)
    return str(exc.value)


def test_a_claim_without_an_id_is_named_by_its_number_alone(tmp_path):
    path = tmp_path / "claims.toml"
    assert _error(tmp_path, 'claim = ["valid"]\n') == (
        f"{path}: claim #1: expected a [[claim]] table, got 'valid'"
    )
    no_id = BASE.replace('id = "alpha_value"\n', "")
    assert _error(tmp_path, BASE + no_id) == f"{path}: claim #2: missing field(s) id"


def test_not_toml_says_what_a_claim_file_is(tmp_path):
    message = _error(tmp_path, "[[claim]\n")
    assert message.startswith(f"{tmp_path / 'claims.toml'}: not valid TOML (")
    assert message.endswith("; expected a claims file of [[claim]] tables)")


def test_an_unknown_policy_lists_every_known_one(tmp_path):
    message = _error(tmp_path, BASE.replace('policy = "rounding"', 'policy = "roughly"'))
    assert message == (
        f"{tmp_path / 'claims.toml'}: claim #1 ('alpha_value'): tolerance: unknown tolerance "
        f"policy 'roughly' (known: {', '.join(POLICIES)})"
    )


@pytest.mark.parametrize(
    ("field", "value", "accepted"),
    [
        ("margin", "0.0", False),
        ("margin", "1.0", False),
        ("margin", "0.001", True),
        ("margin", "0.999", True),
        ("alpha", "0.0", False),
        ("alpha", "0.001", True),
        ("alpha", "0.49", True),
    ],
)
def test_the_margin_and_alpha_are_strictly_between_0_and_1(tmp_path, field, value, accepted):
    table = {"margin": "0.3", "alpha": "0.05"} | {field: value}
    text = BASE + "[claim.equivalence]\n" + "".join(f"{k} = {v}\n" for k, v in table.items())
    text += 'reason = "r"\n'
    if accepted:
        path = tmp_path / "claims.toml"
        path.write_text(text)
        got = read_claim_file(path)[0].equivalence
        assert getattr(got, field) == float(value)
        return
    assert _error(tmp_path, text) == (
        f"{tmp_path / 'claims.toml'}: claim #1 ('alpha_value'): equivalence: {field} = {value}, "
        "expected a number strictly between 0 and 1"
    )


def test_alpha_at_one_half_is_refused_for_its_interval(tmp_path):
    text = BASE + '[claim.equivalence]\nmargin = 0.3\nalpha = 0.5\nreason = "r"\n'
    assert _error(tmp_path, text).endswith(
        "equivalence: alpha = 0.5, expected below 0.5 (the test uses a 1 - 2 alpha interval)"
    )


def test_load_claims_takes_studies_or_their_names(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_STUDY_PATH", str(tmp_path))
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "study.toml").write_text(
        'name = "one"\ntitle = "T"\ncitation = "C"\nclaims = "claims.toml"\n'
        '[table]\nfile = "table.csv"\n'
    )
    (folder / "claims.toml").write_text(BASE.replace('study = "test"', 'study = "one"'))
    (folder / "table.csv").write_text("model,x\na,0.5\n")
    by_study = load_claims([read_study(folder)])
    assert by_study.names() == load_claims(["one"]).names() == ["alpha_value"]
    assert by_study.get("alpha_value").origin == str(folder / "claims.toml")
    known = r"unknown claim 'alpha_valu'; did you mean 'alpha_value'\? \(known: 1 entries"
    with pytest.raises(UnknownNameError, match=known):
        by_study.get("alpha_valu")
