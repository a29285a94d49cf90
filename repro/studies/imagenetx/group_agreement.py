"""ImageNet-X: do two groups of models have the same failure modes?

The statistics of the claims that the failure modes do not depend on the learning paradigm
(supervised vs self-supervised) or the architecture (transformer vs convolutional), Idrissi et al.
2023, abstract and Sec. 4.

Headline (``group_agreement``): Spearman's rho, over the 16 factors, between the two groups'
mean error-ratio profiles (each group's mean over its models of ``(1 - acc_f) / (1 -
acc_overall)``), scipy's p over the 16 factors (``n``: the models of both groups; per group
in details), and a 95% percentile bootstrap interval that
resamples the models within each group (stratified: each group keeps its size). Beside it, in
details: n per group and the models left out (by reason), each group's Kendall's W and mean
pairwise Spearman (the concordance claim's statistics, ``statistics.kendalls_w`` and
``statistics.mean_pairwise_spearman``), the mean Spearman between a model of one group and a
model of the other against the mean within the groups (``cross_within_ratio``: 1 when a model
ranks the factors as much like the other group's models as like its own), each group's three
hardest factors, and where the labels came from (``model_labels``).

Groupings:

- ``paradigm``: the package's model types (``imagenet_x/model_types.py``) on the models the
  package's own comparison assembles (``imagenet_x/plots.py``: the 335 testbed models, and the
  model-vs-human and base models its ``SELFSUPERVISED_MODELS`` lists); a model the map does not
  list is left out and counted.
- ``architecture``: the declared name rule (``architecture_families.toml``) on the testbed
  models whose package type is one of the rule's ``population_types``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from repro.analysis.result import LeaveOneOut, StatisticResult
from repro.base.errors import ConfigError, DataError
from repro.scoring.imagenet_x import FACTORS
from repro.studies.imagenetx.model_labels import (
    ARCHITECTURE_RULES,
    MODEL_TYPES_FILE,
    architecture_rules,
    package_model_types,
)
from repro.studies.imagenetx.statistics import (
    RESAMPLES,
    SEED,
    _resamples,
    _standardized_ranks,
    _tables,
    kendalls_w,
    mean_pairwise_spearman,
)

GROUPINGS = ("paradigm", "architecture")
TESTBED = "imagenet_testbed"
PARADIGM_SETS = (TESTBED, "modelvshuman", "base")  # as imagenet_x/plots.py assembles them
MIN_GROUP = 3


def _labelled(
    context: Any, grouping: str, groups: list[str], correctness: str
) -> tuple[dict[str, np.ndarray], dict[str, list[str]], dict[str, Any], dict[str, str]]:
    """The groups' error ratios and row names, the labelling's details and the sources read.

    Returns (error ratios (m_g, 16) per group, row names per group, details of the labelling, the
    sources read)."""
    pkg = package_model_types()
    rows: dict[str, list[tuple[str, np.ndarray]]] = {g: [] for g in groups}
    left_out: dict[str, int] = {}
    details: dict[str, Any] = {"labels": pkg.info}
    sources: dict[str, str] = {}

    def leave(reason: str) -> None:
        left_out[reason] = left_out.get(reason, 0) + 1

    if grouping == "paradigm":
        pkg.check_types(groups, "grouping 'paradigm'")
        for model_set in PARADIGM_SETS:
            _, er = _tables(context, model_set, correctness)
            sources[f"imagenetx/factor_accuracies/{model_set}/{correctness}"] = "published"
            values = er[list(FACTORS)].to_numpy(dtype=float)
            for name, v in zip(er.index, values, strict=True):
                name = str(name)
                if model_set != TESTBED and name not in pkg.selfsupervised:
                    continue  # the package's comparison takes only these from the other sets
                kind = pkg.types.get(name)
                if kind is None:
                    leave(f"not listed in {MODEL_TYPES_FILE}")
                elif kind in rows:
                    rows[kind].append((f"{model_set}/{name}", v))
                else:
                    leave(f"type {kind}")
        details["population"] = (
            f"the {TESTBED} models and the modelvshuman and base models the package's "
            "SELFSUPERVISED_MODELS lists (as imagenet_x/plots.py assembles them)"
        )
    elif grouping == "architecture":
        rules = architecture_rules()
        pkg.check_types(list(rules.population_types), ARCHITECTURE_RULES)
        unknown = [g for g in groups if g not in rules.families]
        if unknown:
            raise ConfigError(
                f"grouping 'architecture': families {unknown} not in {ARCHITECTURE_RULES} "
                f"(families: {', '.join(rules.families)})"
            )
        _, er = _tables(context, TESTBED, correctness)
        sources[f"imagenetx/factor_accuracies/{TESTBED}/{correctness}"] = "published"
        sources[ARCHITECTURE_RULES] = "published"
        matches: dict[str, list[str]] = {f: [] for f in rules.families}
        unmatched: list[str] = []
        values = er[list(FACTORS)].to_numpy(dtype=float)
        for name, v in zip(er.index, values, strict=True):
            name = str(name)
            kind = pkg.types.get(name)
            if kind is None:
                leave(f"not listed in {MODEL_TYPES_FILE}")
                continue
            if kind not in rules.population_types:
                leave(f"type {kind}")
                continue
            family = rules.family(name)
            if family is None:
                unmatched.append(name)
                continue
            matches[family].append(name)
            if family in rows:
                rows[family].append((f"{TESTBED}/{name}", v))
        if unmatched:
            left_out["matched by no family of the name rule"] = len(unmatched)
        details["population"] = (
            f"the {TESTBED} models whose package type is one of {list(rules.population_types)}"
        )
        details["name_rule"] = {
            "file": f"repro/studies/imagenetx/{ARCHITECTURE_RULES}",
            "sha256": rules.sha256,
            "matches": {f: {"n": len(m), "models": m} for f, m in matches.items()},
            "unmatched": unmatched,
        }
    else:
        raise ConfigError(f"unknown grouping {grouping!r} (known: {', '.join(GROUPINGS)})")
    details["left_out"] = dict(sorted(left_out.items()))
    for g in groups:
        if len(rows[g]) < MIN_GROUP:
            raise DataError(
                f"grouping {grouping!r}: group {g!r} has {len(rows[g])} model(s) with error "
                f"ratios (expected at least {MIN_GROUP})"
            )
    out = {g: np.vstack([v for _, v in rows[g]]) for g in groups}
    for g, v in out.items():
        if not np.isfinite(v).all():
            raise DataError(
                f"grouping {grouping!r}: a model of group {g!r} has an undefined error ratio"
            )
    return out, {g: [r for r, _ in rows[g]] for g in groups}, details, sources


def _rowwise_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman rho of each row of ``a`` with the same row of ``b`` (midranks)."""
    ra = stats.rankdata(a, axis=1)
    rb = stats.rankdata(b, axis=1)
    ra = ra - ra.mean(axis=1, keepdims=True)
    rb = rb - rb.mean(axis=1, keepdims=True)
    return (ra * rb).sum(axis=1) / np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))


def group_agreement(
    context: Any,
    *,
    grouping: str,
    groups: list[str],
    correctness: str = "class",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> StatisticResult:
    """Spearman rho of two groups' mean error-ratio profiles over the 16 factors.

    See the module docstring."""
    if len(groups) != 2 or groups[0] == groups[1]:
        raise ConfigError(f"group_agreement compares two distinct groups, got {groups!r}")
    values, names, details, sources = _labelled(context, grouping, groups, correctness)
    a, b = (values[g] for g in groups)
    mean_a, mean_b = a.mean(axis=0), b.mean(axis=0)
    res = stats.spearmanr(mean_a, mean_b)
    rho, p = float(res.statistic), float(res.pvalue)
    resamples = _resamples(context, resamples)
    interval = (float("nan"), float("nan"))
    method = "no interval (not asked for)"
    if resamples:
        rng = np.random.default_rng(seed)
        ia = rng.integers(0, len(a), size=(resamples, len(a)))
        ib = rng.integers(0, len(b), size=(resamples, len(b)))
        boot = _rowwise_spearman(a[ia].mean(axis=1), b[ib].mean(axis=1))
        ok = boot[np.isfinite(boot)]
        lo, hi = np.percentile(ok, [2.5, 97.5])
        interval = (float(lo), float(hi))
        method = (
            f"percentile bootstrap over models within each group (95%, {resamples} resamples, "
            f"seed {seed})"
        )
    za, zb = _standardized_ranks(a), _standardized_ranks(b)
    cross = float(za.sum(axis=0) @ zb.sum(axis=0) / (len(a) * len(b)))
    per_group: dict[str, Any] = {}
    for g, v in values.items():
        w, pw = kendalls_w(v)
        within, _ = mean_pairwise_spearman(v)
        mean = v.mean(axis=0)
        per_group[g] = {
            "n": len(v),
            "kendalls_w": {"value": w, "p": pw},
            "mean_pairwise_spearman": within,
            "hardest_3": [FACTORS[j] for j in np.argsort(-mean, kind="stable")[:3]],
            "mean_error_ratio": {f: float(x) for f, x in zip(FACTORS, mean, strict=True)},
        }
    within_pooled = float(np.mean([per_group[g]["mean_pairwise_spearman"] for g in groups]))

    def leave_one_out() -> LeaveOneOut:
        """Without model i: its group's mean loses it (exact, in closed form)."""
        rows, rho_i, p_i = [], [], []
        for g, v, other in ((groups[0], a, mean_b), (groups[1], b, mean_a)):
            m = len(v)
            means = (v.sum(axis=0)[None, :] - v) / (m - 1)
            for i in range(m):
                r = stats.spearmanr(means[i], other)
                rows.append(names[g][i])
                rho_i.append(float(r.statistic))
                p_i.append(float(r.pvalue))
        return LeaveOneOut(rows, np.array(rho_i), np.array(p_i))

    return StatisticResult(
        value=rho,
        p=p,
        n=len(a) + len(b),  # the models read (the rho and its p are over the 16 factors)
        interval=interval,
        interval_method=method,
        per_model={r: g for g in groups for r in names[g]},
        details={
            "grouping": grouping,
            "groups": list(groups),
            "n_per_group": {g: len(values[g]) for g in groups},
            "n_factors": len(FACTORS),
            **details,
            "per_group": per_group,
            "cross_group_mean_spearman": cross,
            "within_group_mean_spearman": within_pooled,
            "cross_within_ratio": cross / within_pooled,
        },
        sources=sources,
        leave_one_out=leave_one_out,
    )
