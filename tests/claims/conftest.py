"""Claim-test fixtures: the claim context built from the root ``--source`` option.

- ``published`` (default): benchmark.csv and r50_categories.json from the data directory.
- ``store`` / ``measure``: the published table with our stored measurements overlaid
  (``repro.store.export.wide_table(store_dir)``, provided by the runner stage); each overlaid
  column is labelled with its source, and claims resting on measured columns are judged by
  the statistical tolerance (published value inside our bootstrap interval, same sign and
  significance). ``measure`` runs missing jobs first once the runner provides that.
"""

from __future__ import annotations

import pytest


def _store_context(config: pytest.Config, data_dir, source: str):
    try:
        import repro.store.export  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("repro.store"):
            pytest.skip(f"--source {source}: repro.store.export is not available yet "
                        "(the runner stage provides wide_table(store_dir))")
        raise
    from repro.claims.context import measured_context
    from repro.settings import store_dir

    store = store_dir(config.getoption("--store"))
    if not store.exists():
        pytest.skip(f"--source {source}: measurement store {store} does not exist (run `python -m repro measure`)")
    return measured_context(store, data_dir, source=source)


@pytest.fixture(scope="session")
def claim_context(pytestconfig: pytest.Config, data_dir):
    """The context every claim statistic receives (built once per session / xdist worker)."""
    source = pytestconfig.getoption("--source")
    if source == "published":
        from repro.claims.context import published_context

        return published_context(data_dir)
    return _store_context(pytestconfig, data_dir, source)


@pytest.fixture(scope="session")
def published_claim_context(data_dir):
    """Always the published data (for regression snapshots and quirk tests)."""
    from repro.claims.context import published_context

    return published_context(data_dir)


@pytest.fixture(scope="session")
def claim_outcomes(claim_context):
    """Every claim evaluated once on the session's context: {claim id: ClaimOutcome}."""
    from repro.claims import evaluate_all

    return {o.claim.id: o for o in evaluate_all(claim_context)}


@pytest.fixture(scope="session")
def published_outcomes(published_claim_context):
    from repro.claims import evaluate_all

    return {o.claim.id: o for o in evaluate_all(published_claim_context)}
