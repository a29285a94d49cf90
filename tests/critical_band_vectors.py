"""Fixtures shared by the two tests of the stored critical-band threshold vectors (the screened
search in the claims tier, ``tests/claims/test_scoring_critical_band_data.py``, and the
exhaustive one, ``tests/full/test_critical_band_exhaustive.py``): the stored file, the
published (bw_norm, cf_norm, pns_norm) triples it was made from, and the tolerance both use.
Loaded as a pytest plugin by the root conftest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repro.studies.gavrikov2024 import critical_band_expected as cbx

EXPECTED = Path(__file__).resolve().parents[1] / cbx.EXPECTED_PATH
#: relative tolerance between a stored vector's fit and the published triple (METHODS.md)
RTOL = 1e-6


@pytest.fixture(scope="module")
def stored() -> dict:
    """expected/critical_band/threshold_vectors.json as stored."""
    return json.loads(EXPECTED.read_text())


@pytest.fixture(scope="module")
def published(data_dir) -> dict[str, tuple[float, float, float]]:
    """The 48 study models' published critical-band triples (fails closed via ``data_dir``)."""
    return cbx.read_published(data_dir)
