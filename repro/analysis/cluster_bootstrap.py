"""Analysis: the percentile bootstrap that respects clusters (families of models), for a
statistic computed over a sample of models that come in families (one architecture at several
depths, one training recipe at several strengths, an eps sweep).

Resampling single models treats the members of a family as independent draws, which they are
not (a ResNet-18 and a ResNet-34 share almost everything that matters); the interval is then
too narrow. Here whole clusters are drawn with replacement (as many as there are), every member
of a drawn cluster enters, and the statistic is recomputed on the union (Davison & Hinkley 1997,
sec. 3.8, the first stage of their two-stage scheme; Field & Welsh 2007, "randomised cluster"
bootstrap). With one model per cluster this is the ordinary bootstrap over models.

Honest about when it cannot say much:

- ``not estimable`` (no interval) when there are fewer than ``min_clusters`` clusters: a
  percentile interval from a handful of clusters is not a 95% interval of anything;
- a warning when the interval is degenerate: zero width, or more than ``DEGENERATE_SHARE`` of the
  resamples give one value (ties, a bound), or a share of resamples on which the statistic is
  undefined (NaN: e.g. a regression with fewer models than parameters); such resamples are
  dropped and counted.

The statistic is a function of an index array into the models (the same index may appear
several times); it returns a float (NaN where undefined). Draws come from
``numpy.random.default_rng(seed)``; the method string records resamples, seed and clusters, so
that the interval can be recomputed exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
SEED = 0
MIN_CLUSTERS = 8
DEGENERATE_SHARE = 0.5  # more than half of the resamples on one value: the interval is mostly ties
NOT_ESTIMABLE = "not estimable"


@dataclass(frozen=True)
class ClusterInterval:
    """A statistic's cluster-bootstrap interval (None when not estimable) with what it rests on."""

    value: float
    interval: tuple[float, float] | None
    method: str
    n: int  # models
    clusters: int
    resamples: int
    seed: int
    undefined: int = 0  # resamples on which the statistic was NaN (dropped)
    warnings: tuple[str, ...] = ()

    @property
    def estimable(self) -> bool:
        return self.interval is not None

    def as_dict(self) -> dict[str, object]:
        return {"value": self.value, "interval": None if self.interval is None else list(self.interval),
                "method": self.method, "n": self.n, "clusters": self.clusters, "resamples": self.resamples,
                "seed": self.seed, "undefined_resamples": self.undefined, "warnings": list(self.warnings)}


def cluster_labels(models: Sequence[str], families: dict[str, Sequence[str]]) -> list[str]:
    """The family of each model (``families``: {family: [models]}); a model in no family is its
    own cluster (named after itself)."""
    of = {m: fam for fam, members in families.items() for m in members}
    return [of.get(m, m) for m in models]


def describe(resamples: int, seed: int, clusters: int, confidence: float = 0.95) -> str:
    return (f"percentile bootstrap over {clusters} model families ({confidence:.0%}, {resamples} resamples of "
            f"whole families, seed {seed})")


def cluster_bootstrap(statistic: Callable[[np.ndarray], float], clusters: Sequence[str], *,
                      resamples: int = RESAMPLES, seed: int = SEED, confidence: float = 0.95,
                      min_clusters: int = MIN_CLUSTERS) -> ClusterInterval:
    """``statistic`` on all models and its percentile interval over resamples of whole clusters
    (``clusters[i]``: the cluster of model i). ``resamples = 0``: no interval, not computed."""
    labels = list(clusters)
    n = len(labels)
    index = np.arange(n)
    value = float(statistic(index))
    names = list(dict.fromkeys(labels))
    members = [index[np.array([lab == c for lab in labels])] for c in names]
    k = len(names)
    if resamples == 0:
        return ClusterInterval(value, None, "no interval (not computed)", n, k, 0, seed)
    if k < min_clusters:
        return ClusterInterval(value, None, f"{NOT_ESTIMABLE}: {k} famil{'y' if k == 1 else 'ies'} of models "
                               f"(a cluster bootstrap needs at least {min_clusters})", n, k, 0, seed,
                               warnings=(f"{NOT_ESTIMABLE}: only {k} famil{'y' if k == 1 else 'ies'}",))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, k, size=(resamples, k))
    samples = np.empty(resamples)
    for b in range(resamples):
        samples[b] = statistic(np.concatenate([members[j] for j in draws[b]]))
    ok = samples[np.isfinite(samples)]
    undefined = resamples - ok.size
    warnings: list[str] = []
    if ok.size == 0:
        return ClusterInterval(value, None, f"{NOT_ESTIMABLE}: the statistic is undefined on every resample", n, k,
                               resamples, seed, undefined, (f"{NOT_ESTIMABLE}: undefined on every resample",))
    tail = (1 - confidence) / 2 * 100
    lo, hi = (float(v) for v in np.percentile(ok, [tail, 100 - tail]))
    if undefined:
        warnings.append(f"{undefined} of {resamples} resamples undefined (dropped)")
    _, counts = np.unique(ok, return_counts=True)
    if hi == lo:
        warnings.append("degenerate: zero-width interval")
    elif counts.max() > DEGENERATE_SHARE * ok.size:
        warnings.append(f"degenerate: {counts.max() / ok.size:.0%} of the resamples give one value")
    return ClusterInterval(value, (lo, hi), describe(resamples, seed, k, confidence), n, k, resamples, seed,
                           undefined, tuple(warnings))
