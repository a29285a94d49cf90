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
        if isinstance(v, dict):
            return {k: walk(x, f"{path}.{k}" if path else str(k)) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, f"{path}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, float) and (only is None or only(path)):
            return v * factor
        return v

    return walk(data, "")


def _nonzero_floats(data) -> dict[str, float]:
    return {
        k: v
        for k, v in se._flatten(data).items()
        if isinstance(v, float) and v != 0 and math.isfinite(v)
    }


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
    snap = _load(path)
    floats = _nonzero_floats(snap)
    assert floats, f"{path.name}: no floats to check"
    changed = _scale_floats(snap, 1 + 1e-6)
    lines = se.diff(snap, changed)
    reported = {line.split(": ", 1)[0] for line in lines}
    assert reported == set(floats), f"not reported: {sorted(set(floats) - reported)[:5]}"
    changed_down = _scale_floats(snap, 1 - 1e-6)
    assert len(se.diff(snap, changed_down)) == len(floats)
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
