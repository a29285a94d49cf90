"""Claims built in code for the unit tests of the tolerance policies, the claim check and the
verdicts: a statistic that returns its params (so the test decides the verdict), one that returns
the wrong type, a claim around either, and a context with one model whose source is published or
measured (and, for the provenance, the inputs a run was to measure).
"""

from __future__ import annotations

from pathlib import Path

from repro.analysis.result import StatisticResult
from repro.base.study import Study
from repro.base.table import ModelTable
from repro.claims.context import ClaimContext
from repro.claims.provenance import RunInputs
from repro.claims.spec import Claim, Tolerance


def fixed_statistic(
    ctx, *, value, p=None, n=None, interval=None, details=None, per_model=None, sources=None
):
    """A statistic that returns its params (so a claim's verdict is decided by the test).

    ``sources``: the sources of its inputs (default: the context table's source of ``x``).
    """
    return StatisticResult(
        value=value,
        p=p,
        n=n,
        interval=None if interval is None else tuple(interval),
        details=dict(details or {}),
        per_model=dict(per_model or {}),
        sources={"x": ctx.table.source_of("x")} if sources is None else dict(sources),
    )


def not_a_result(ctx):
    return 0.5


STAT = "tests.claim_fixtures:fixed_statistic"

#: the data directories ``paired_hook`` was called with
PAIRED_CALLS: list[object] = []


def paired_hook(store, record, column, data_dir):
    """A column family's ``paired`` hook: records the data directory, returns three items that
    both sides decided correctly."""
    PAIRED_CALLS.append(data_dir)
    return [(True, True)] * 3


def claim(
    params,
    tolerance,
    *,
    published=0.5,
    expected="reproduced",
    measured_tolerance=None,
    statistic=STAT,
    qualitative=None,
):
    return Claim(
        id="t",
        study="test",
        statement="s",
        source="here",
        statistic=statistic,
        params=params,
        published=published,
        tolerance=tolerance,
        version=1,
        expected=expected,
        measured_tolerance=measured_tolerance,
        qualitative=qualitative,
    )


def ctx(tmp_path, measured: bool = False, inputs: RunInputs | None = None) -> ClaimContext:
    """One model ``m`` with ``x = 1.0``, its source measured or published; ``inputs``: what a
    run was to measure (the claim's provenance)."""
    table = ModelTable({"m": {"x": 1.0}}, sources={"x": "store"} if measured else {})
    study = Study(
        name="test",
        title="Test",
        citation="-",
        folder=Path(tmp_path),
        claims=Path(tmp_path) / "claims.toml",
    )
    return ClaimContext(study, tmp_path, table, {}, inputs=inputs)


ROUND1 = Tolerance("rounding", {"decimals": 1}, "one decimal")
