"""Analysis: intervals over models that respect declared clusters, study-agnostic.

When a claim's models stand for a wider population (a *sample* of training recipes, networks,
runs; ``[claim.estimand] kind = "sample"``), the models are rarely independent draws: the 48
ResNet-50s of Gavrikov & Keuper come in families (one recipe family, two eps sweeps of
adversarial training), ImageNet-X's 1,272 crop-sweep runs in configurations repeated over seeds.
A bootstrap over models then treats siblings as independent and gives too narrow an interval. The
cluster bootstrap resamples whole clusters instead: each resample draws G clusters with
replacement out of the G declared ones, and a unit's weight is how often its cluster was drawn.

- ``Resampler``: a statistic as a function of per-unit weights (a (B, n) array: row b holds
  the weights of resample b), so one vectorised call evaluates every resample. Integer weights
  are the bootstrap's duplicate counts (``weighted_spearman`` equals scipy's Spearman on the
  sample with each unit repeated w times).
- ``leave_one_cluster_out``: with fewer than ``FEW_CLUSTERS`` clusters, where a percentile
  cluster bootstrap has unknown coverage (too narrow, its resamples repeating a handful of
  clusters), the range of the statistic recomputed without each cluster in turn: not a
  confidence interval, but how much the statistic rests on any one family, which is what a
  reader of a claim over few families needs.
- ``cluster_bootstrap``: the percentile interval of the resampled statistic, or ``not
  estimable`` when there are fewer than ``MIN_CLUSTERS`` clusters; with warnings when the
  interval is degenerate: resamples at a bound of the statistic (a rank correlation of exactly
  -1 when all resampled units are monotone), heavy ties in an input, few clusters, undefined
  resamples.

The seed and number of resamples are recorded with the interval; the draws come from
``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

#: fewer clusters than this: no interval (``not estimable``). With G clusters a resample is a
#: multiset of G of them: there are C(2G - 1, G) distinct resamples (3, 10, 35, 126 for G = 2..5,
#: 462 for G = 6), so below 6 each 2.5% tail of a percentile interval is made of a handful of
#: distinct resamples, most of them repeating one cluster several times.
MIN_CLUSTERS = 6
#: below this many clusters an estimable interval carries a warning: a pairs cluster bootstrap
#: tends to be too narrow when the clusters are few (its resamples miss the between-cluster
#: variation of clusters it never drew).
FEW_CLUSTERS = 10
#: an input taking fewer distinct values than this share of its units gets a ties warning
TIES_SHARE = 0.75
BOUND_ATOL = 1e-9  # a resampled value this close to a bound of the statistic counts as at the bound
METHOD = "percentile cluster bootstrap"
LOCO = "leave-one-cluster-out range"
#: fewer clusters than this: no leave-one-cluster-out range (leaving one of two out leaves one)
LOCO_MIN_CLUSTERS = 3


@dataclass(frozen=True)
class Resampler:
    """A statistic over ``models`` (its units, in order) as a function of unit weights.

    ``fn(weights)`` takes a (B, n) array and returns B values (NaN where undefined). ``bounds``: the
    statistic's range where it has one (a correlation: (-1, 1)), for the degenerate-interval
    warning; ``inputs``: the per-unit input vectors (by name), for the ties warning.
    """

    models: tuple[str, ...]
    fn: Callable[[np.ndarray], np.ndarray]
    bounds: tuple[float, float] | None = None
    inputs: Mapping[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusteredInterval:
    """A cluster-bootstrap interval, or why there is none (``estimable`` False, ``why``)."""

    estimable: bool
    interval: tuple[float, float] | None
    clusters: int
    sizes: dict[str, int]
    resamples: int
    seed: int | None  # None: no random draws (a leave-one-cluster-out range)
    confidence: float | None  # None: a range, not a confidence interval
    why: str = ""
    warnings: tuple[str, ...] = ()
    at_bound: float = 0.0  # share of the defined resamples at a bound of the statistic
    undefined: int = 0  # resamples where the statistic is undefined (dropped)
    kind: str = METHOD  # METHOD or LOCO

    @property
    def method(self) -> str:
        if self.kind == LOCO:
            return f"{LOCO} over {self.clusters} clusters (the statistic without each in turn)"
        return (
            f"{METHOD} over {self.clusters} clusters ({self.confidence:.0%}, {self.resamples} "
            f"resamples, seed {self.seed})"
        )

    def text(self, method: bool = True) -> str:
        """``[lo, hi] (method); warning: ...`` or ``not estimable (why)``.

        ``method=False``: the interval alone (for a list of intervals made the same way).
        """
        if not self.estimable:
            return f"not estimable ({self.why})"
        assert self.interval is not None
        lo, hi = self.interval
        if not method:
            return f"[{lo:.3f}, {hi:.3f}]"
        out = f"[{lo:.3f}, {hi:.3f}] ({self.method})"
        return out + ("; warning: " + "; ".join(self.warnings) if self.warnings else "")

    def as_json(self) -> dict[str, object]:
        return {
            "estimable": self.estimable,
            "kind": self.kind,
            "interval": None if self.interval is None else list(self.interval),
            "method": self.method if self.estimable else None,
            "clusters": self.clusters,
            "cluster_sizes": dict(self.sizes),
            "resamples": self.resamples,
            "seed": self.seed,
            "confidence": self.confidence,
            "why": self.why or None,
            "warnings": list(self.warnings),
            "at_bound": self.at_bound,
            "undefined": self.undefined,
        }


def distinct_resamples(clusters: int) -> int:
    """How many distinct multisets of G clusters a cluster bootstrap can draw: C(2G - 1, G)."""
    return math.comb(2 * clusters - 1, clusters) if clusters > 0 else 0


def cluster_weights(labels: Sequence[str], resamples: int, seed: int) -> np.ndarray:
    """(resamples, n) integer weights of cluster-bootstrap resamples.

    Each row draws G clusters with replacement (a multinomial count per cluster) and gives every
    unit its cluster's count.
    """
    return _cluster_weights(tuple(str(label) for label in labels), resamples, seed)


@functools.lru_cache(maxsize=64)
def _cluster_weights(labels: tuple[str, ...], resamples: int, seed: int) -> np.ndarray:
    """``cluster_weights``, drawn once per labels, resamples and seed in a process (read-only)."""
    names, index = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    g = names.size
    counts = np.random.default_rng(seed).multinomial(g, np.full(g, 1.0 / g), size=resamples)
    weights = counts[:, index].astype(float)
    weights.flags.writeable = False
    return weights


def weighted_midranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Midranks of ``x`` (n values) per row of weights ``w`` (B, n).

    In the sample where unit i appears w[b, i] times: rank = (weight of the smaller values) +
    (weight of the tied values + 1) / 2, what ``scipy.stats.rankdata`` gives each copy of the
    expanded sample.
    """
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    ws = w[:, order]
    starts = np.r_[0, np.flatnonzero(np.diff(xs) != 0) + 1]
    group = np.cumsum(np.r_[0, (np.diff(xs) != 0).astype(int)])  # group id of each sorted position
    totals = np.add.reduceat(ws, starts, axis=1)  # (B, groups): weight per distinct value
    below = np.cumsum(totals, axis=1) - totals
    ranks_sorted = below[:, group] + (totals[:, group] + 1.0) / 2.0
    out = np.empty_like(ranks_sorted)
    out[:, order] = ranks_sorted
    return out


def weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson correlation of the rows of ``a`` and ``b`` (B, n) under weights ``w`` (B, n).

    NaN where one side is constant over the weighted units.
    """
    total = w.sum(axis=1, keepdims=True)
    ma = (w * a).sum(axis=1, keepdims=True) / total
    mb = (w * b).sum(axis=1, keepdims=True) / total
    da, db = a - ma, b - mb
    num = (w * da * db).sum(axis=1)
    den = np.sqrt((w * da * da).sum(axis=1) * (w * db * db).sum(axis=1))
    tiny = 1e-12 * np.maximum(1.0, np.sqrt((w * a * a).sum(axis=1) * (w * b * b).sum(axis=1)))
    return correlation_of(num, den, tiny)


def correlation_of(num: np.ndarray, den: np.ndarray, tiny: np.ndarray) -> np.ndarray:
    """The correlation num / den per row, clipped to [-1, 1].

    NaN where den is not above ``tiny`` (a constant side); the clip keeps an exact +-1 that
    rounding put an ulp outside at the bound."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(den > tiny, num / np.where(den > tiny, den, 1.0), np.nan)
    return np.clip(r, -1.0, 1.0)


def weighted_spearman(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spearman's rho of (x, y) per row of integer weights ``w`` (B, n).

    The value is scipy's ``spearmanr`` of the sample with unit i repeated w[b, i] times (midranks
    for ties).
    """
    w = np.atleast_2d(np.asarray(w, dtype=float))
    return weighted_pearson(weighted_midranks(x, w), weighted_midranks(y, w), w)


def weighted_median(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The median of ``x`` (n values) per row of integer weights ``w`` (B, n).

    The value is ``numpy.median`` of the sample with unit i repeated w[b, i] times (the mean of the
    two middle values for an even total); NaN for a row of zero weight.
    """
    x = np.asarray(x, dtype=float)
    w = np.atleast_2d(np.asarray(w, dtype=float))
    order = np.argsort(x, kind="stable")
    xs, cw = x[order], np.cumsum(w[:, order], axis=1)
    total = cw[:, -1]
    lo_pos, hi_pos = np.floor((total + 1) / 2), np.ceil((total + 1) / 2)  # 1-based middle positions
    lo = xs[np.argmax(cw >= lo_pos[:, None], axis=1)]
    hi = xs[np.argmax(cw >= hi_pos[:, None], axis=1)]
    return np.where(total > 0, (lo + hi) / 2.0, np.nan)


def spearman_resampler(
    models: Sequence[str], x: np.ndarray, y: np.ndarray, names: tuple[str, str] = ("x", "y")
) -> Resampler:
    """The ``Resampler`` of Spearman's rho of (x, y) over ``models``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return Resampler(
        tuple(models), lambda w: weighted_spearman(x, y, w), (-1.0, 1.0), {names[0]: x, names[1]: y}
    )


def _percentile(values: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(values, [tail, 100.0 - tail])
    return float(lo), float(hi)


def _ties(resampler: Resampler, labels: Sequence[str]) -> list[str]:
    """Inputs with heavy ties, except one constant within every cluster.

    Such an input's ties are the clustering itself, e.g. the strength of a sweep's runs.
    """
    out = []
    for name, values in resampler.inputs.items():
        v = np.asarray(values, dtype=float)
        by_cluster: dict[str, set[float]] = {}
        for label, value in zip(labels, v.tolist(), strict=True):
            by_cluster.setdefault(label, set()).add(value)
        if all(len(vals) == 1 for vals in by_cluster.values()):
            continue
        distinct = np.unique(v[np.isfinite(v)]).size
        if distinct < TIES_SHARE * v.size:
            out.append(f"heavy ties: {name} takes {distinct} distinct values over {v.size} units")
    return out


def _share_at_bound(finite: np.ndarray, bounds: tuple[float, float] | None) -> float:
    """The share of the defined resamples at either bound of the statistic (0 when unbounded)."""
    if bounds is None:
        return 0.0
    lo_b, hi_b = bounds
    at = np.isclose(finite, lo_b, rtol=0, atol=BOUND_ATOL) | np.isclose(
        finite, hi_b, rtol=0, atol=BOUND_ATOL
    )
    return float(np.mean(at))


def cluster_bootstrap(
    resampler: Resampler,
    labels: Sequence[str],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    min_clusters: int = MIN_CLUSTERS,
) -> ClusteredInterval:
    """The percentile interval of ``resampler``'s statistic over cluster-bootstrap resamples.

    The resamples are of its units, clustered by ``labels`` (one per unit, in ``resampler.models``
    order); ``not estimable`` with fewer than ``min_clusters`` clusters.
    """
    labels = [str(v) for v in labels]
    if len(labels) != len(resampler.models):
        raise ValueError(
            f"cluster_bootstrap: {len(labels)} cluster labels for {len(resampler.models)} units"
        )
    if resamples < 1 or not 0 < confidence < 1:
        raise ValueError(
            f"cluster_bootstrap: resamples {resamples} must be >= 1 and confidence {confidence} in "
            "(0, 1)"
        )
    names, sizes = np.unique(np.asarray(labels, dtype=str), return_counts=True)
    size_map = {str(k): int(v) for k, v in zip(names, sizes, strict=True)}
    g = len(size_map)
    base = {
        "clusters": g,
        "sizes": size_map,
        "resamples": resamples,
        "seed": seed,
        "confidence": confidence,
    }
    if g < min_clusters:
        return ClusteredInterval(
            False,
            None,
            why=(
                f"{g} cluster{'s' if g != 1 else ''}, fewer than {min_clusters}: "
                f"{distinct_resamples(g)} distinct cluster resamples"
            ),
            **base,
        )
    values = np.asarray(resampler.fn(cluster_weights(labels, resamples, seed)), dtype=float)
    finite = values[np.isfinite(values)]
    undefined = int(values.size - finite.size)
    if finite.size == 0:
        return ClusteredInterval(
            False,
            None,
            why="the statistic is undefined in every resample",
            undefined=undefined,
            **base,
        )
    warnings = []
    at_bound = _share_at_bound(finite, resampler.bounds)
    if resampler.bounds is not None:
        lo_b, hi_b = resampler.bounds
        if at_bound >= (1.0 - confidence) / 2.0:
            warnings.append(
                f"{at_bound:.0%} of resamples at the statistic's bound ({lo_b:g} or {hi_b:g}): "
                "an end of the interval is the bound, not sampling"
            )
    warnings += _ties(resampler, labels)
    if g < FEW_CLUSTERS:
        warnings.append(
            f"only {g} clusters: a cluster bootstrap tends to be too narrow with fewer than "
            f"{FEW_CLUSTERS}"
        )
    if undefined:
        warnings.append(
            f"{undefined} of {resamples} resamples undefined (a constant variable), dropped"
        )
    return ClusteredInterval(
        True,
        _percentile(finite, confidence),
        warnings=tuple(warnings),
        at_bound=at_bound,
        undefined=undefined,
        **base,
    )


def leave_one_cluster_out(resampler: Resampler, labels: Sequence[str]) -> ClusteredInterval:
    """The range (min, max) of ``resampler``'s statistic without each cluster in turn.

    The statistic is recomputed without each of the G clusters of ``labels`` (weights 0 on the
    left-out cluster's units, 1 elsewhere); ``not estimable`` with fewer than ``LOCO_MIN_CLUSTERS``
    clusters or when every recomputation is undefined. An undefined recomputation (a cluster the
    statistic cannot do without) is named in a warning and left out of the range.
    """
    labels = [str(v) for v in labels]
    if len(labels) != len(resampler.models):
        raise ValueError(
            f"leave_one_cluster_out: {len(labels)} cluster labels for {len(resampler.models)} units"
        )
    names, index, sizes = np.unique(
        np.asarray(labels, dtype=str), return_inverse=True, return_counts=True
    )
    g = names.size
    base = {
        "clusters": int(g),
        "sizes": {str(k): int(v) for k, v in zip(names, sizes, strict=True)},
        "resamples": int(g),
        "seed": None,
        "confidence": None,
        "kind": LOCO,
    }
    if g < LOCO_MIN_CLUSTERS:
        return ClusteredInterval(
            False,
            None,
            why=f"{g} cluster{'s' if g != 1 else ''}: leaving one out leaves at most one",
            **base,
        )
    weights = np.ones((g, len(labels)))
    weights[index, np.arange(len(labels))] = 0.0  # row i leaves cluster i out
    values = np.asarray(resampler.fn(weights), dtype=float)
    defined = np.isfinite(values)
    if not defined.any():
        return ClusteredInterval(
            False, None, why="the statistic is undefined without any one cluster", **base
        )
    finite = values[defined]
    warnings = []
    if not defined.all():
        missing = ", ".join(str(n) for n, ok in zip(names, defined, strict=True) if not ok)
        warnings.append(f"undefined without {missing}: left out of the range")
    at_bound = _share_at_bound(finite, resampler.bounds)
    return ClusteredInterval(
        True,
        (float(finite.min()), float(finite.max())),
        warnings=tuple(warnings),
        at_bound=at_bound,
        undefined=int((~defined).sum()),
        **base,
    )
