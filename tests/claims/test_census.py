"""Every study's census (issue 36) against its claim file: each statement's claim ids are claims of
the study, each gated claim of the study is in the census, the cross-references resolve, and the
counts the module reports are the counts of the file as written (read here with tomllib)."""

from __future__ import annotations

import tomllib
from collections import Counter

import pytest

from repro.base.study import select
from repro.claims.census import STATUSES, gated_summary, load_censuses, study_census
from repro.claims.loader import study_claims

pytestmark = pytest.mark.claims

STUDIES = [s.name for s in select()]
BUILTIN = ("gavrikov2024", "imagenetx", "subramanian2023")


def _study(name):
    return next(s for s in select() if s.name == name)


def _raw(name) -> list[dict]:
    return tomllib.loads(_study(name).census.read_text())["statement"]


def test_every_builtin_study_has_a_census():
    for name in BUILTIN:
        assert _study(name).census is not None, f"{name}: study.toml names no census"
        assert _study(name).census.name == "census.toml"


@pytest.mark.parametrize("name", BUILTIN)
def test_every_census_claim_id_is_a_claim_of_the_study(name):
    ids = {c.id for c in study_claims(_study(name))}
    named = [cid for s in _raw(name) for cid in s.get("claims", [])]
    assert named and set(named) <= ids, sorted(set(named) - ids)


@pytest.mark.parametrize("name", BUILTIN)
def test_every_gated_claim_of_the_study_is_in_its_census(name):
    ids = {c.id for c in study_claims(_study(name))}
    census = study_census(_study(name))
    assert ids - census.gated_claims() == set(), (
        f"{name}: claims no census statement names: {sorted(ids - census.gated_claims())}"
    )


@pytest.mark.parametrize("name", BUILTIN)
def test_counts_are_the_counts_of_the_file(name):
    raw = _raw(name)
    by_status = Counter(s["status"] for s in raw)
    census = study_census(_study(name))
    assert census.counts() == {k: by_status.get(k, 0) for k in STATUSES}
    assert sum(census.counts().values()) == len(raw) == len(census.statements)
    gated = by_status["claim"] + by_status["table"]
    testable = gated + by_status["open"]
    assert (census.gated, census.testable) == (gated, testable)
    assert gated_summary(census).startswith(f"{gated} of {len(raw)} statements gated ")


def test_the_census_counts_as_recorded():
    """The counts the census had when it was written (issue 36's closing note): a statement added,
    removed or moved to another status changes them, and this test says so."""
    counts = {c.study: c.counts() for c in load_censuses(select(list(BUILTIN)))}
    assert counts == {
        "gavrikov2024": {
            "claim": 15,
            "table": 2,
            "open": 0,
            "not testable here": 0,
            "out of scope": 2,
        },
        "imagenetx": {"claim": 8, "table": 1, "open": 1, "not testable here": 1, "out of scope": 2},
        "subramanian2023": {
            "claim": 7,
            "table": 1,
            "open": 0,
            "not testable here": 0,
            "out of scope": 2,
        },
    }


def test_cross_references_resolve_both_ways_between_the_critical_band_and_shape_bias():
    """Gavrikov's critical band is Subramanian's protocol, and both speak of shape bias: the census
    links them, and every link names a statement that exists (``load_censuses`` checks)."""
    censuses = {c.study: c for c in load_censuses(select(list(BUILTIN)))}
    see = {(c.study, s.id): set(s.see) for c in censuses.values() for s in c.statements if s.see}
    assert (
        "subramanian2023:human_channel_one_octave"
        in see[("gavrikov2024", "critical_band_protocol")]
    )
    assert (
        "gavrikov2024:shape_bias_vs_id" in see[("subramanian2023", "channel_explains_shape_bias")]
    )
    assert (
        "subramanian2023:channel_explains_shape_bias" in see[("gavrikov2024", "shape_bias_vs_id")]
    )
    assert (
        "gavrikov2024:bandwidth_id_robustness"
        in see[("subramanian2023", "network_channel_2_to_4_times_human")]
    )
    for (study, sid), refs in see.items():
        for ref in refs:
            other, _, target = ref.partition(":")
            assert other != study, f"{study}:{sid} refers to its own study"
            assert target in {s.id for s in censuses[other].statements}, ref


def test_a_dangling_cross_reference_is_one_line(tmp_path, monkeypatch):
    """A ``see`` naming no statement of the other study's census: one ConfigError line naming the
    file, the statement and the reference."""
    import shutil

    from repro.base.errors import ConfigError

    folder = tmp_path / "copy"
    shutil.copytree(_study("subramanian2023").folder, folder)
    (folder / "study.toml").write_text(
        (folder / "study.toml").read_text().replace('name = "subramanian2023"', 'name = "sub_copy"')
    )
    (folder / "claims.toml").write_text(
        (folder / "claims.toml")
        .read_text()
        .replace('study = "subramanian2023"', 'study = "sub_copy"')
        .replace('id = "subramanian2023_', 'id = "copy_')
    )
    (folder / "census.toml").write_text(
        (folder / "census.toml")
        .read_text()
        .replace('"subramanian2023_', '"copy_')
        .replace("gavrikov2024:shape_bias_vs_id", "gavrikov2024:no_such_statement")
    )
    monkeypatch.setenv("REPRO_STUDY_PATH", str(folder))
    with pytest.raises(ConfigError) as exc:
        load_censuses(select(["sub_copy"]))
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith(
        f"{folder / 'census.toml'}: statement #6 ('channel_explains_shape_bias')"
    )
    assert "see: 'gavrikov2024:no_such_statement': no statement 'no_such_statement' in" in message
