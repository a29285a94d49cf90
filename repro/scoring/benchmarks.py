"""Scoring stage, the benchmarks: from the counts and records of a measured result to its values.

Pure; the registry's ``score`` of classification, Stylized-ImageNet and PGD.

- ``score_classify``: top-1 and top-5 accuracy among the labelled items (fractions in [0, 1]);
  the headline value is top-1; an unlabelled source keeps no ``label`` column in its records (a
  valid predictions file).
- ``score_stylized``: 16-class decision accuracy, in % (benchmark.csv's unit).
- ``score_pgd``: robust accuracy under the standard denominator (n) and the study's (quirk Q2:
  the number of batches times the batch size, ``published_denominator``); ``denominator`` picks
  the headline one.
- ``score_pgd_early_stop``: the same counts under the early-stop rule (a protocol variant, issue
  38), with the passes its records count beside those the study's rule takes (steps + 2 forward
  and steps backward per image) and the images stopped at each iterate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from repro.base.errors import ConfigError
from repro.base.results import ConditionCount, ProbeResult

DENOMINATORS = ("standard", "published")


def _count(result: ProbeResult, name: str) -> ConditionCount:
    return next((c for c in result.conditions if c.condition == name), ConditionCount(name, 0, 0))


def score_classify(result: ProbeResult, params: Mapping[str, Any] | None = None) -> ProbeResult:
    top1, top5 = _count(result, "top1"), _count(result, "top5")
    n = top1.n
    result.conditions = [top1, top5]
    result.value = top1.k / n if n else None
    result.values = {"top1": result.value, "top5": top5.k / n if n else None}
    if result.records and n == 0:  # an unlabelled source: no label column (valid predictions file)
        for rec in result.records:
            del rec["label"]
    return result


def score_stylized(result: ProbeResult, params: Mapping[str, Any] | None = None) -> ProbeResult:
    top1 = _count(result, "top1")
    result.conditions = [top1]
    result.value = 100.0 * top1.k / top1.n if top1.n else None
    return result


def published_denominator(n: int, batch_size: int) -> int:
    """Q2: the study's denominator, ``ceil(n / batch_size) * batch_size``.

    50,048 for 50,000 at 128."""
    if n < 0 or batch_size <= 0:
        raise ValueError(
            f"published_denominator needs n >= 0 and batch_size > 0, got n={n}, "
            f"batch_size={batch_size}"
        )
    return math.ceil(n / batch_size) * batch_size


def robust_count(
    successes: int, n: int, *, batch_size: int, denominator: str = "standard"
) -> ConditionCount:
    """Robust (not fooled) count ``k`` of ``n`` for one denominator rule.

    ``standard``: k = n - successes of n. ``published`` (Q2): k = D - successes of
    D = published_denominator(n, batch_size), i.e. accuracy = 1 - successes / D.
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n], got {successes} of {n}")
    if denominator == "standard":
        return ConditionCount("robust", n - successes, n)
    if denominator == "published":
        d = published_denominator(n, batch_size)
        return ConditionCount("robust_published", d - successes, d)
    raise ConfigError(
        f"denominator: expected one of {', '.join(DENOMINATORS)}, got {denominator!r}"
    )


def score_pgd(result: ProbeResult, params: Mapping[str, Any]) -> ProbeResult:
    """PGD's scorer: ``clean``, ``robust`` and ``robust_published`` from the counts.

    From the counts ``clean`` and ``adversarial`` (right decisions on the clean image and on its
    adversarial), with the attack's parameters among the values."""
    clean, adversarial = _count(result, "clean"), _count(result, "adversarial")
    n, batch_size = clean.n, int(params["batch_size"])
    successes = n - adversarial.k
    standard = robust_count(successes, n, batch_size=batch_size, denominator="standard")
    published = robust_count(successes, n, batch_size=batch_size, denominator="published")
    chosen = standard if params.get("denominator", "standard") == "standard" else published
    result.conditions = [ConditionCount("clean", clean.k, n), standard, published]
    result.value = chosen.rate if n else None
    result.values = {
        "eps": float(params["eps"]),
        "steps": float(params["steps"]),
        "step_size": float(params["step_size"]),
        "batch_size": float(batch_size),
        "clean": clean.k / n if n else None,
        "robust": standard.rate if n else None,
        "robust_published": published.rate if n else None,
    }
    return result


def score_pgd_early_stop(result: ProbeResult, params: Mapping[str, Any]) -> ProbeResult:
    """``score_pgd``, plus the passes and first successes in the early-stop rule's records.

    From the per-image records of the early-stop rule: the forward and backward passes they went
    through (``forward``, ``backward``), the study's rule's for the same images (``forward_full``,
    ``backward_full``), their ratio (``pass_ratio``: all passes; ``backward_ratio``: the gradient
    steps), the images stopped before the last iterate (``stopped``) and the images first
    misclassified at each iterate (``first_success/<k>``)."""
    result = score_pgd(result, params)
    steps, n = int(params["steps"]), len(result.records)
    forward = sum(int(r["forward"]) for r in result.records)
    backward = sum(int(r["backward"]) for r in result.records)
    full_f, full_b = n * (steps + 2), n * steps
    firsts = [r["first_success_step"] for r in result.records]
    result.values.update(
        {
            "forward": float(forward),
            "backward": float(backward),
            "forward_full": float(full_f),
            "backward_full": float(full_b),
            "pass_ratio": (forward + backward) / (full_f + full_b) if n else None,
            "backward_ratio": backward / full_b if full_b else None,
            "stopped": float(sum(f is not None and f < steps for f in firsts)),
        }
    )
    for k in sorted({f for f in firsts if f is not None}):
        result.values[f"first_success/{k}"] = float(sum(f == k for f in firsts))
    return result
