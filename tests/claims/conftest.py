"""Claim-test fixtures: the claim context built from the root ``--source`` option.

- ``published`` (default): benchmark.csv and r50_categories.json from the data directory.
- ``store`` / ``measure``: the published table with our stored measurements overlaid
  (``repro.store.export.wide_table(store_dir)``, provided by the runner stage); each overlaid
  column is labelled with its source, and claims resting on measured columns are judged by
  the statistical tolerance (published value inside our bootstrap interval, same sign and
  significance). ``measure`` first runs the missing jobs the selected claims need
  (``repro.runner.ensure.ensure_for_claims``: their models x the measurements whose dataset is
  configured; on CUDA one GPU per xdist worker), then reads the store.
"""

from __future__ import annotations

import pytest


def _selected_claims(request) -> list[str] | None:
    """The claim ids of the selected tests (``-k``), or None for all."""
    ids = {item.callspec.params["claim_id"] for item in request.session.items
           if hasattr(item, "callspec") and "claim_id" in item.callspec.params}
    return sorted(ids) or None


def _store_context(config: pytest.Config, data_dir, source: str, request=None):
    try:
        import repro.store.export  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("repro.store"):
            pytest.skip(f"--source {source}: repro.store.export is not available yet "
                        "(the runner stage provides wide_table(store_dir))")
        raise
    from repro.base.settings import store_dir
    from repro.claims.context import measured_context

    store = store_dir(config.getoption("--store"))
    if source == "measure":  # run the missing jobs the selected claims need (runner stage)
        from repro.runner.ensure import ensure_for_claims

        ensure_for_claims(_selected_claims(request) if request is not None else None, store,
                          device=config.getoption("--device"), data_dir=data_dir)
    if not store.exists():
        pytest.skip(f"--source {source}: measurement store {store} does not exist (run `python -m repro measure`)")
    return measured_context(store, data_dir, source=source)


@pytest.fixture(scope="session")
def claim_context(pytestconfig: pytest.Config, data_dir, request):
    """The context every claim statistic receives (built once per session / xdist worker)."""
    source = pytestconfig.getoption("--source")
    if source == "published":
        from repro.claims.context import published_context

        return published_context(data_dir)
    return _store_context(pytestconfig, data_dir, source, request)


@pytest.fixture(scope="session")
def published_claim_context(pytestconfig: pytest.Config, data_dir, request):
    """Always the published data (for regression snapshots and quirk tests)."""
    from repro.claims.context import published_context

    if pytestconfig.getoption("--source") == "published":
        return request.getfixturevalue("claim_context")

    return published_context(data_dir)


class LazyOutcomes(dict):
    """{claim id: ClaimOutcome}, each claim evaluated on first access (so ``-k`` stays fast)."""

    def __init__(self, context):
        super().__init__()
        from repro.claims.loader import load_claims

        self.context = context
        self.claims = load_claims()

    def __missing__(self, claim_id):
        from repro.claims.check import evaluate

        outcome = self[claim_id] = evaluate(self.claims.get(claim_id), self.context)
        return outcome

    def all(self):
        return [self[i] for i in self.claims.names()]


@pytest.fixture(scope="session")
def claim_outcomes(claim_context):
    """Claims evaluated once per session on the session's context: {claim id: ClaimOutcome}."""
    return LazyOutcomes(claim_context)


@pytest.fixture(scope="session")
def published_outcomes(pytestconfig: pytest.Config, published_claim_context, request):
    if pytestconfig.getoption("--source") == "published":
        return request.getfixturevalue("claim_outcomes")
    return LazyOutcomes(published_claim_context)
