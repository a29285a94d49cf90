"""The tests of tests/unit/test_measurement_contract.py that read the published data directory, in
the data tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import pytest

from repro.measurements import registry as ms

pytestmark = pytest.mark.data


def test_imagenet_a_and_r_decide_among_their_200_classes(data_dir):
    """The class subsets are the 200 indices of the reference file imagenet/class_subsets.json."""
    import json

    ref = json.loads((data_dir / "imagenet" / "class_subsets.json").read_text())
    for name, key in (("imagenet_a", "imagenet_a_indices"), ("imagenet_r", "imagenet_r_indices")):
        subset = ms.get(name).resolve_kwargs()["class_subset"]
        assert len(subset) == 200 and len(set(subset)) == 200
        assert sorted(subset) == sorted(ref[key])
    assert (
        ms.get("imagenet_a").resolve_kwargs()["class_subset"]
        != ms.get("imagenet_r").resolve_kwargs()["class_subset"]
    )
