"""Claim-test fixtures: one claim context per study, built from the root ``--source`` option.

- ``published`` (default): each study's published table and categories from the data directory.
- ``store`` / ``measure``: the published table with our stored measurements overlaid
  (``repro.store.export.wide_table(store_dir)``, provided by the runner stage); each overlaid
  column is labelled with its source, and claims resting on measured columns are judged by
  the statistical tolerance (published value inside our bootstrap interval, same sign and
  significance). ``measure`` first runs the missing jobs the selected claims need
  (``repro.runner.ensure.ensure_for_claims``: their models x the measurements whose dataset is
  configured; on CUDA one GPU per xdist worker), then reads the store. A claim whose inputs
  include a failed or missing measurement is ``incomplete`` (``repro.claims.provenance``): its
  test fails, naming the values; it is never judged on the published fallback. A store that
  does not exist fails the claim tests (it is not a skip).
"""

from __future__ import annotations

import pytest


def _selected_claims(request) -> list[str] | None:
    """The claim ids of the selected tests (``-k``), or None for all."""
    ids = {
        item.callspec.params["claim_id"]
        for item in request.session.items
        if hasattr(item, "callspec") and "claim_id" in item.callspec.params
    }
    return sorted(ids) or None


def _store_contexts(config: pytest.Config, data_dir, source: str, request=None) -> dict:
    from repro.base.settings import store_dir
    from repro.base.study import select
    from repro.claims.context import measured_context

    store = store_dir(config.getoption("--store"))
    if source == "measure":  # run the missing jobs the selected claims need (runner stage)
        from repro.runner.ensure import ensure_for_claims

        ensure_for_claims(
            _selected_claims(request) if request is not None else None,
            store,
            device=config.getoption("--device"),
            data_dir=data_dir,
        )
    if not store.exists():
        pytest.fail(
            f"--source {source}: measurement store {store} does not exist (run `python "
            "-m repro measure`, "
            "or pass --store)",
            pytrace=False,
        )
    return {s.name: measured_context(s, store, data_dir, source=source) for s in select()}


def _published_contexts(data_dir) -> dict:
    from repro.claims.context import published_contexts

    return {ctx.study.name: ctx for ctx in published_contexts(None, data_dir)}


@pytest.fixture(scope="session")
def claim_contexts(pytestconfig: pytest.Config, data_dir, request) -> dict:
    """{study name: the context its claim statistics receive} (built once per
    session / xdist worker)."""
    source = pytestconfig.getoption("--source")
    if source == "published":
        return _published_contexts(data_dir)
    return _store_contexts(pytestconfig, data_dir, source, request)


@pytest.fixture(scope="session")
def published_claim_contexts(pytestconfig: pytest.Config, data_dir, request) -> dict:
    """Always the published data (for regression snapshots and quirk tests)."""
    if pytestconfig.getoption("--source") == "published":
        return request.getfixturevalue("claim_contexts")
    return _published_contexts(data_dir)


@pytest.fixture(scope="session")
def published_claim_context(published_claim_contexts):
    """The Gavrikov & Keuper study's published context (the tests of its analysis use it)."""
    return published_claim_contexts["gavrikov2024"]


class LazyOutcomes(dict):
    """{claim id: ClaimOutcome}, each claim evaluated on its study's context on first access
    (so ``-k`` stays fast)."""

    def __init__(self, contexts: dict):
        super().__init__()
        from repro.claims.loader import load_claims

        self.contexts = contexts
        self.claims = load_claims()

    def __missing__(self, claim_id):
        from repro.claims.check import evaluate

        claim = self.claims.get(claim_id)
        outcome = self[claim_id] = evaluate(claim, self.contexts[claim.study])
        return outcome

    def all(self):
        return [self[i] for i in self.claims.names()]

    def of(self, study: str):
        return [self[i] for i in self.claims.names() if self.claims.get(i).study == study]


@pytest.fixture(scope="session")
def claim_outcomes(claim_contexts):
    """Claims evaluated once per session on the session's contexts: {claim id: ClaimOutcome}."""
    return LazyOutcomes(claim_contexts)


@pytest.fixture(scope="session")
def published_outcomes(pytestconfig: pytest.Config, published_claim_contexts, request):
    if pytestconfig.getoption("--source") == "published":
        return request.getfixturevalue("claim_outcomes")
    return LazyOutcomes(published_claim_contexts)


class MovedStartOutcomes(dict):
    """{claim id: [its snapshot payload computed with every critical-band fit started from each of
    ``repro.scoring.fit_conditioning.STARTS``]}, on first access. A study whose table does not
    move with the start (no fit in it) gets [] without evaluating its claims: its fields keep the
    default tolerance. What ``test_claim_regression`` measures each field's conditioning from."""

    def __init__(self, data_dir, payload):
        super().__init__()
        from repro.claims.loader import load_claims

        self.data_dir, self.payload, self.claims = data_dir, payload, load_claims()
        self.contexts: dict[str, list] = {}

    def _contexts(self, study: str) -> list:
        from repro.claims.context import published_contexts
        from repro.scoring.fit_conditioning import STARTS, moved_start

        if study not in self.contexts:
            (base,) = published_contexts([study], self.data_dir)
            moved = []
            for start in STARTS:
                with moved_start(start):
                    (ctx,) = published_contexts([study], self.data_dir)
                if ctx.table.values == base.table.values:
                    break  # no fit in this study's table: nothing moves with the start
                moved.append((start, ctx))
            self.contexts[study] = moved
        return self.contexts[study]

    def __missing__(self, claim_id):
        from repro.claims.check import evaluate
        from repro.scoring.fit_conditioning import moved_start

        claim = self.claims.get(claim_id)
        out = []
        for start, ctx in self._contexts(claim.study):
            with moved_start(start):
                out.append(self.payload(evaluate(claim, ctx), ctx))
        self[claim_id] = out
        return out


@pytest.fixture(scope="session")
def moved_start_payloads(data_dir):
    from tests.claims.test_claims import snapshot_payload

    return MovedStartOutcomes(data_dir, snapshot_payload)
