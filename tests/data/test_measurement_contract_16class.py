"""The tests of tests/unit/test_measurement_contract_16class.py that read the published data
directory, in the data tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import pytest

from repro.measurements import registry as ms
from tests.unit.test_measurement_contract_16class import CONTRACTS_16

pytestmark = pytest.mark.data


def test_no_16_class_column_is_a_study_column(data_dir):
    """The two protocols never share a column: no 16-class value can overlay
    a benchmark.csv cell."""
    import csv

    with (data_dir / "gavrikov2024" / "benchmark.csv").open(newline="") as fh:
        header = set(next(csv.reader(fh)))
    study = {c for n in ms.names() if not ms.get(n).variant_of for c in ms.get(n).columns}
    for name, c in CONTRACTS_16.items():
        assert not set(c.columns) & (header | study), name
    assert (
        "metric/criticalband/cf" in header and "metric/bandpass/LFC/0.1" in header
    )  # the study's, for contrast
