"""Analysis output: what a statistic function returns (``StatisticResult``).

The value the claim checker compares with the published one, with everything it rests on.

It lives in the analysis stage (not in claims) because the statistics compute it; the claims
only read it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from repro.analysis.redraws import Replicates


@dataclass(frozen=True)
class LeaveOneOut:
    """A statistic recomputed without each of ``models`` in turn.

    Computed exactly in one go by the statistic itself (a fast path for large populations):
    ``value[i]``, ``p[i]`` and ``details[name][i]`` are what the statistic returns on the context
    without ``models[i]`` (nan where it is undefined there). ``details`` holds only the details it
    can give; a tolerance that reads another detail is checked by recomputing instead.
    """

    models: list[str]
    value: np.ndarray
    p: np.ndarray | None = None
    details: dict[str, list[Any]] = field(default_factory=dict)


@dataclass
class StatisticResult:
    """A recomputed statistic with everything it rests on.

    value: the headline number compared with the published one
    p: its p-value where it has one
    n: number of models (or items) it was computed over
    interval: 95% interval of ``value`` and the method that made it
    interval_kind: which of the three kinds it is (``repro.claims.verdict.INTERVAL_KINDS``):
        ``across models`` (the default: a bootstrap over the models) or ``replication`` (the
        measurement uncertainty of the values, e.g. binomial over images)
    per_model: the per-model inputs (so a regression snapshot shows which model moved)
    details: further named sub-results (e.g. per-group correlations, p-values of a table)
    sources: for each input quantity, where it came from (``published``, ``store``, ``mini``)

    For the robustness of the claim (``repro.diagnostics.robustness``; none of these is part of
    the recorded result):
    paired: the per-model samples (x, y) of the headline Spearman correlation (the one whose
        rho or p is ``value``), for its permutation test
    cells: the (bias, category, group) cells of the analysis's bias x category table the
        verdict reads, for their multiple-comparison status
    leave_one_out: the statistic's own exact leave-one-out (``LeaveOneOut``), when it has one
    leave_out: the same without a set of models at once (a one-row ``LeaveOneOut``), for the
        leave-one-category-out, when it has one

    For the claim's estimand (``repro.diagnostics.estimand``; not recorded either):
    resamplers: the statistic (``"value"``: the headline) and named sub-results (e.g. a group's
        rho) as functions of weights on their models (``repro.analysis.clustered.Resampler``),
        for the cluster bootstrap of a claim whose models are a sample

    For the claim's replication (``repro.diagnostics.replication``; not recorded either):
    replicate: the statistic on many redrawn tables at once (``repro.analysis.redraws``: a
        function of ``(Redraws, correct=True)`` returning ``Replicates``), when it has one
    """

    value: float
    p: float | None = None
    n: int | None = None
    interval: tuple[float, float] | None = None
    interval_method: str | None = None
    per_model: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    interval_kind: str = "across models"
    paired: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)
    cells: tuple[tuple[str, str, str], ...] = field(default=(), repr=False, compare=False)
    leave_one_out: Callable[[], LeaveOneOut] | None = field(default=None, repr=False, compare=False)
    leave_out: Callable[[Sequence[str]], LeaveOneOut] | None = field(
        default=None, repr=False, compare=False
    )
    replicate: Callable[..., Replicates] | None = field(default=None, repr=False, compare=False)
    resamplers: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of_correlation(cls, corr: Any, **rest: Any) -> StatisticResult:
        """A statistic whose headline is a correlation.

        ``corr`` (``repro.analysis.correlation.Correlation``) gives the value (its rho), p, n and
        interval; ``rest``: the other fields."""
        return cls(corr.rho, corr.p, corr.n, corr.interval, corr.method, **rest)
