"""Self-test of the claim-snapshot comparator (``tests/snapshot_ext.py``) on the real snapshots
in ``expected/claims/``: a relative change of 1e-6 of ANY float (p-values included, however
small) is a difference; so is a removed field, an added field and a changed type. The tests
use the module's tolerance constants, so loosening one of them (say a thousandfold) fails here,
and a change of 1e-9 relative (platform rounding) must still pass, so tightening it to string
equality fails too.

These tests read only files of this repository (no published data): marked ``unit``.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from tests import snapshot_ext as se

pytestmark = pytest.mark.unit

SNAPSHOTS = sorted(se.EXPECTED_DIR.glob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def _scale_floats(data, factor: float, only=None):
    """A copy with every float (or only those whose flattened path satisfies
    ``only``) multiplied."""

    def walk(v, path):
        if path == se.RULES:  # the comparison rules are not data
            return v
        if isinstance(v, dict):
            return {k: walk(x, f"{path}.{k}" if path else str(k)) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, f"{path}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, float) and (only is None or only(path)):
            return v * factor
        return v

    return walk(data, "")


def _nonzero_floats(data, finer_than: float | None = None) -> dict[str, float]:
    """The data's non-zero finite floats (not its rules); with ``finer_than``, only those whose
    measured rule (if any) allows less than that relative change."""
    rules = data.get(se.RULES, {})
    return {
        k: v
        for k, v in se._flatten({k: v for k, v in data.items() if k != se.RULES}).items()
        if isinstance(v, float)
        and v != 0
        and math.isfinite(v)
        and (finer_than is None or _room(k, rules.get(k)) < finer_than)
    }


def _room(path: str, rule: dict | None) -> float:
    """The relative change a field's measured rule allows (0 without one)."""
    if not rule:
        return 0.0
    return 10 ** rule["log10"] - 1 if "log10" in rule else rule["rel"]


def test_there_are_snapshots_with_tiny_p_values():
    """The cases below would be vacuous without them: p < 1e-9 occurs in the real snapshots."""
    ps = [
        v
        for path in SNAPSHOTS
        for k, v in se._flatten(_load(path)).items()
        if se.is_p_value(k) and isinstance(v, float)
    ]
    assert min(p for p in ps if p > 0) < 1e-60 and sum(0 < p < 1e-9 for p in ps) >= 4
    assert 0.0 in ps  # an underflowed p as well


@pytest.mark.parametrize("path", SNAPSHOTS, ids=[p.stem for p in SNAPSHOTS])
def test_a_relative_change_of_1e6_of_every_float_is_reported(path):
    """Every float but those whose measured conditioning allows more (their own test below)."""
    snap = _load(path)
    floats = _nonzero_floats(snap, finer_than=1e-6)
    assert floats, f"{path.name}: no floats to check"
    changed = _scale_floats(snap, 1 + 1e-6)
    lines = se.diff(snap, changed)
    reported = {line.split(": ", 1)[0] for line in lines}
    assert reported >= set(floats), f"not reported: {sorted(set(floats) - reported)[:5]}"
    assert reported <= set(_nonzero_floats(snap))
    changed_down = _scale_floats(snap, 1 - 1e-6)
    assert {line.split(": ", 1)[0] for line in se.diff(snap, changed_down)} >= set(floats)
    ext = se.ClaimSnapshotExtension()
    assert not ext.matches(serialized_data=se.to_json(changed), snapshot_data=se.to_json(snap))


@pytest.mark.parametrize("path", SNAPSHOTS, ids=[p.stem for p in SNAPSHOTS])
def test_platform_rounding_of_1e9_relative_is_not_a_difference(path):
    snap = _load(path)
    assert se.diff(snap, _scale_floats(snap, 1 + 1e-9)) == []
    ext = se.ClaimSnapshotExtension()
    assert ext.matches(serialized_data=se.to_json(snap), snapshot_data=se.to_json(snap))


def test_one_float_changed_is_named_by_its_path():
    snap = _load(se.EXPECTED_DIR / "shape_bias_vs_id_accuracy.json")
    changed = copy.deepcopy(snap)
    changed["per_model"]["tv_resnet50"]["shape_bias"] *= 1 + 1e-6
    lines = se.diff(snap, changed)
    assert len(lines) == 1 and lines[0].startswith(
        "per_model.tv_resnet50.shape_bias: snapshot 0.2146"
    )
    assert "REGRESSION_FLOAT_TOLERANCE" in lines[0]


def test_tiny_p_values_are_gated_on_a_log_scale():
    snap = _load(se.EXPECTED_DIR / "shape_bias_vs_id_accuracy.json")
    assert snap["p"] < 1e-9 and snap["details"]["at"]["p"] < 1e-9
    for factor in (1 + 1e-6, 1 - 1e-6, 2.0, 0.5, 1e-3):
        changed = copy.deepcopy(snap)
        changed["details"]["at"]["p"] *= factor
        lines = se.diff(snap, changed)
        assert (
            len(lines) == 1
            and lines[0].startswith("details.at.p: ")
            and "P_VALUE_LOG10_TOLERANCE" in lines[0]
        )
    # an absolute floor of 1e-10 (the old comparator) would have let all of these through
    assert abs(snap["details"]["at"]["p"] * 2 - snap["details"]["at"]["p"]) < 1e-9


def test_p_value_tolerance_directly():
    t = se.P_VALUE_LOG10_TOLERANCE
    for p in (0.9, 0.05, 3.3e-10, 3.28e-66, 1e-300):
        assert t.close(p, p) and t.close(p * (1 + 1e-9), p)
        assert not t.close(p * (1 + 1e-6), p) and not t.close(p * (1 - 1e-6), p)
    assert t.close(0.0, 0.0) and t.close(0.0, 5e-324)  # both underflowed
    assert not t.close(1e-300, 0.0) and not t.close(0.0, 3.28e-66)
    assert t.close(float("nan"), float("nan")) and not t.close(float("nan"), 0.5)
    assert not t.close(-0.1, -0.1)  # a negative "p" is never silently equal
    assert (
        se.is_p_value("p") and se.is_p_value("details.at.p") and se.is_p_value("details.id/total.p")
    )
    assert not se.is_p_value("per_model.p_model.shape_bias") and not se.is_p_value("details.pns")


def test_float_tolerance_directly():
    t = se.REGRESSION_FLOAT_TOLERANCE
    for x in (1.0, -0.7614, 79.16, 1e-9, 12345.678):
        assert t.close(x * (1 + 1e-9), x)
        assert not t.close(x * (1 + 1e-6), x) and not t.close(x * (1 - 1e-6), x)
    assert t.close(0.0, 0.0) and not t.close(1e-12, 0.0)


def test_removed_added_and_retyped_fields_are_differences():
    snap = _load(se.EXPECTED_DIR / "shape_bias_vs_id_accuracy.json")
    ext = se.ClaimSnapshotExtension()

    def reported(changed) -> list[str]:
        lines = se.diff(snap, changed)
        assert not ext.matches(serialized_data=se.to_json(changed), snapshot_data=se.to_json(snap))
        return lines

    removed = copy.deepcopy(snap)
    del removed["interval_method"]
    assert reported(removed) == [
        f"interval_method: in the snapshot ({snap['interval_method']!r}) but no longer computed"
    ]
    removed_model = copy.deepcopy(snap)
    del removed_model["per_model"]["tv_resnet50"]
    assert sorted(line.split(":")[0] for line in reported(removed_model)) == [
        "per_model.tv_resnet50.id",
        "per_model.tv_resnet50.shape_bias",
    ]
    removed_p = copy.deepcopy(snap)
    del removed_p["details"]["at"]["p"]
    assert reported(removed_p)[0].startswith("details.at.p: in the snapshot")
    added = copy.deepcopy(snap)
    added["details"]["at"]["q"] = 0.5
    assert reported(added) == ["details.at.q: new field (0.5), not in the snapshot"]
    added_nested = copy.deepcopy(snap)
    # (a new input column in the provenance counts; "provenance" itself is in every snapshot)
    assert "new-column" not in added_nested["provenance"]
    added_nested["provenance"]["new-column"] = {"published": 48}
    assert reported(added_nested) == [
        "provenance.new-column.published: new field (48), not in the snapshot"
    ]
    shorter = copy.deepcopy(snap)
    shorter["interval"] = shorter["interval"][:1]
    assert reported(shorter)[0].startswith("interval[1]: in the snapshot")
    none = copy.deepcopy(snap)
    none["p"] = None
    assert reported(none)[0].startswith("p: snapshot")
    as_text = copy.deepcopy(snap)
    as_text["n"] = "48"
    assert reported(as_text) == ["n: snapshot 48, recomputed '48'"]
    as_bool = copy.deepcopy(snap)
    as_bool["details"]["at"]["n"] = True
    as_one = copy.deepcopy(snap)
    as_one["details"]["at"]["n"] = 1
    assert se.diff(as_one, as_bool) == ["details.at.n: snapshot 1, recomputed True"]
    renamed = copy.deepcopy(snap)
    renamed["verdict"] = "not_reproduced"
    assert reported(renamed) == ["verdict: snapshot 'reproduced', recomputed 'not_reproduced'"]


def test_every_snapshot_says_how_it_was_generated():
    for path in SNAPSHOTS:
        snap = _load(path)
        assert snap.get("_generated_by") == "pytest -m claims --snapshot-update", path.name
        assert snap.get("_inputs_sha256"), path.name


RULED = [p for p in SNAPSHOTS if _load(p).get(se.RULES)]


def test_the_ill_conditioned_fits_have_measured_rules():
    """Subramanian et al.'s claims rest on critical-band fits, some ill-conditioned: their
    snapshots state measured rules, and alexnet's bandwidth (4,4,2,4,4,4,4, which moves by 2e-6
    with the CPU's kernels) is compared at more than 2e-6 and less than 1e-3."""
    assert {p.stem for p in RULED} >= {
        "subramanian2023_network_channel_2_to_4_times_human",
        "subramanian2023_channel_explains_shape_bias",
    }
    rule = _load(se.EXPECTED_DIR / "subramanian2023_network_channel_2_to_4_times_human.json")[
        se.RULES
    ]["per_model.alexnet.bandwidth"]
    assert 2e-6 < rule["rel"] < 1e-3 and "fit_conditioning" in rule["rule"]


@pytest.mark.parametrize("path", RULED, ids=[p.stem for p in RULED])
def test_a_measured_rule_is_the_tolerance_of_its_field(path):
    """Each field with a measured rule: a change of half what it allows passes, twice fails."""
    snap = _load(path)
    for field, rule in snap[se.RULES].items():
        room = _room(field, rule)
        value = se._flatten(snap)[field]
        for factor, reported in ((1 + room / 2, False), (1 + 2 * room, True)):
            changed = _scale_floats(snap, factor, only=lambda p, f=field: p == f)
            lines = se.diff(snap, changed)
            assert bool(lines) is reported, (field, value, factor, lines)


def test_the_wider_of_the_stored_and_recomputed_rule_applies():
    """A rule is not data: a recomputed payload may state another (wider) rule."""
    snap = {"value": 1.0, se.RULES: {"value": {"rel": 1e-6, "rule": "x"}}}
    moved = {"value": 1.0 + 5e-6, se.RULES: {"value": {"rel": 1e-5, "rule": "x"}}}
    assert se.diff(snap, moved) == []
    assert se.diff(snap, {"value": 1.0 + 5e-6}) != []  # the stored rule alone: outside


def test_measured_rules_from_moved_payloads():
    base = {"a": 1.0, "b": 2.0, "p": 1e-5, "n": 3}
    moved = [{"a": 1.0 + 1e-6, "b": 2.0, "p": 1.1e-5, "n": 3}]
    rules = se.measured_rules(base, moved)
    assert set(rules) == {"a", "p"}  # b did not move; n is a count
    assert rules["a"]["rel"] == pytest.approx(1e-5, rel=0.01)
    assert rules["p"]["log10"] == pytest.approx(10 * math.log10(1.1), rel=0.01)
    assert se.measured_rules(base, [{"a": 1.0 + 1e-9, "b": 2.0, "p": 1e-5, "n": 3}]) == {}
