"""Claims: the verdicts a claim can get, and the one function that maps a check to its verdict
(used by the checker, the robustness recomputations, the tests, the table and the report).

- ``reproduced``: the recomputed statistic is within the claim's tolerance;
- ``not_reproduced``: it is not;
- ``undefined``: the statistic, or a p or rho the claim's policy reads, is NaN (e.g. a
  correlation with a constant column): nothing could be compared;
- ``incomplete``: some input the claim needs measured is missing or its job failed
  (``repro.claims.provenance``): the claim was not checked on our measurements.

Only the first two can be a claim's recorded expectation: ``undefined`` and ``incomplete`` are
never "as expected", whatever the claim file records.
"""

from __future__ import annotations

from typing import Protocol

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not_reproduced"
UNDEFINED = "undefined"
INCOMPLETE = "incomplete"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, UNDEFINED, INCOMPLETE)
NOT_CHECKED = frozenset({UNDEFINED, INCOMPLETE})  # no comparison was made


class _Checked(Protocol):
    @property
    def passed(self) -> bool: ...

    @property
    def status(self) -> str | None: ...


def verdict_of(check: _Checked) -> str:
    """The verdict of a ``repro.claims.tolerance.Check``: its status (undefined, incomplete)
    when it has one, else reproduced or not_reproduced by ``passed``."""
    if check.status is not None:
        if check.status not in NOT_CHECKED:
            raise ValueError(f"unknown check status {check.status!r} (known: {', '.join(sorted(NOT_CHECKED))})")
        return check.status
    return REPRODUCED if check.passed else NOT_REPRODUCED
