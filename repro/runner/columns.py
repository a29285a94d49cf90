"""Runner, summarizers: a probe's ``ProbeResult`` -> the benchmark.csv columns it measures.

Each function takes the result and a ``SummaryContext`` (dataset facts) and returns
``ColumnValue`` s in benchmark.csv units, the count behind each value and its binomial
interval where one applies. Where a published number has a quirk (METHODS.md section 5) the
published computation is stored next to ours as ``variant="published"``:
ReaL last batch (Q1), PGD denominator padded to full batches of 128 (Q2), ImageNet-C mean over
19 corruptions (Q3). Pure Python; no torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from repro.errors import ReproError
from repro.results import ConditionCount, ProbeResult
from repro.store.record import ColumnValue

IMAGENET_C_STANDARD = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur",
                       "zoom_blur", "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate",
                       "jpeg_compression")
IMAGENET_C_EXTRA = ("speckle_noise", "gaussian_blur", "spatter", "saturate")
PGD_PUBLISHED_BATCH = 128


@dataclass
class SummaryContext:
    dataset: str
    n_items: int
    extra: dict[str, Any] = field(default_factory=dict)


def _pooled(conditions: Iterable[ConditionCount]) -> tuple[int, int]:
    conds = list(conditions)
    return sum(c.k for c in conds), sum(c.n for c in conds)


def top1_count(result: ProbeResult) -> tuple[int, int]:
    """The top-1 count of a classification result (its ``top1`` condition; else all conditions pooled)."""
    named = [c for c in result.conditions if c.condition == "top1"]
    return _pooled(named or result.conditions)


def _accuracy(result: ProbeResult, column: str) -> list[ColumnValue]:
    k, n = top1_count(result)
    if n == 0:
        raise ReproError(f"{result.measurement}: the probe returned no counted items (conditions: {result.conditions!r})")
    return [ColumnValue.from_count(column, k, n)]


def imagenet(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    return _accuracy(result, "top1_acc/imagenet")


def imagenet_v2(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    return _accuracy(result, "top1_acc/imagenet-v2")


def imagenet_a(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    return _accuracy(result, "top1_acc/imagenet-a")


def imagenet_r(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    return _accuracy(result, "top1_acc/imagenet-r")


def imagenet_sketch(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    return _accuracy(result, "top1_acc/imagenet-sketch")


def _split_condition(name: str) -> tuple[str, str]:
    for sep in ("/", "_"):
        head, _, tail = name.rpartition(sep)
        if head and tail.isdigit():
            return head, tail
    raise ReproError(f"corruption condition {name!r} is not of the form '<corruption>/<severity>'")


def _mean_of_rates(conds: list[ConditionCount], column: str, variant: str, note: str) -> ColumnValue:
    """Plain mean of per-condition accuracies (what the study computes), with the pooled count
    kept for the interval (exact when every condition has the same n, as in ImageNet-C)."""
    k, n = _pooled(conds)
    if not conds or n == 0:
        return ColumnValue(column, None, k, n, None, variant, note + "; no conditions measured")
    mean = 100.0 * sum(c.rate for c in conds) / len(conds)
    pooled = ColumnValue.from_count(column, k, n, variant=variant, note=note)
    if all(c.n == conds[0].n for c in conds):
        return pooled
    return ColumnValue(column, mean, k, n, pooled.interval, variant, note + "; unequal n per condition: interval from pooled count")


def imagenet_c(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    by_corruption: dict[str, list[ConditionCount]] = {}
    out: list[ColumnValue] = []
    for c in result.conditions:
        corruption, severity = _split_condition(c.condition)
        by_corruption.setdefault(corruption, []).append(c)
        out.append(ColumnValue.from_count(f"top1_acc/{corruption}_{severity}", c.k, c.n))
    unknown = sorted(set(by_corruption) - set(IMAGENET_C_STANDARD) - set(IMAGENET_C_EXTRA))
    if unknown:
        raise ReproError(f"imagenet_c: unknown corruptions {unknown} (expected the 19 of METHODS.md Q3)")
    std = [c for name in IMAGENET_C_STANDARD for c in by_corruption.get(name, [])]
    pub = [c for name in IMAGENET_C_STANDARD + IMAGENET_C_EXTRA for c in by_corruption.get(name, [])]
    n_std = sum(1 for name in IMAGENET_C_STANDARD if name in by_corruption)
    n_pub = sum(1 for name in IMAGENET_C_STANDARD + IMAGENET_C_EXTRA if name in by_corruption)
    out.append(_mean_of_rates(std, "top1_acc/imagenet-c", "standard",
                              f"mean over the 15 standard corruptions x severities ({n_std} of 15 present)"))
    out.append(_mean_of_rates(pub, "top1_acc/imagenet-c", "published",
                              f"Q3: mean over 19 corruptions x severities ({n_pub} of 19 present)"))
    return out


def imagenet_cbar(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    conds = list(result.conditions)
    corruptions = {_split_condition(c.condition)[0] for c in conds}
    return [_mean_of_rates(conds, "top1_acc/imagenet-cbar", "standard",
                           f"mean over {len(corruptions)} corruptions x severities ({len(conds)} conditions)")]


def pgd_low(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """Robust accuracy; published variant (Q2): 1 - successes / (batches x 128), computed here
    from the standard count so that it does not depend on the batch size the runner used."""
    named = [c for c in result.conditions if c.condition == "robust"]
    k, n = _pooled(named or result.conditions)
    if n == 0:
        raise ReproError("pgd_low: the benchmark returned no counted items")
    padded = math.ceil(n / PGD_PUBLISHED_BATCH) * PGD_PUBLISHED_BATCH
    successes = n - k
    return [
        ColumnValue.from_count("top1_acc/PGD-40/low", k, n),
        ColumnValue.from_count("top1_acc/PGD-40/low", padded - successes, padded, variant="published",
                               note=f"Q2: denominator padded to {padded} ({padded // PGD_PUBLISHED_BATCH} batches of 128)"),
    ]


def _records_field(result: ProbeResult, *candidates: str) -> str:
    if not result.records:
        raise ReproError(f"{result.measurement}: the probe returned no per-item records")
    for name in candidates:
        if name in result.records[0]:
            return name
    raise ReproError(f"{result.measurement}: per-item records lack a field {candidates} (have {sorted(result.records[0])})")


def imagenet_real(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """ReaL accuracy from per-image predictions (``repro.scoring.real``): standard (every image
    with a ReaL label) and published (Q1: the last batch of 336 images in torchvision order).

    On a partial validation set (mini data) the last batch is not there: the published variant
    is stored as undefined rather than computed from whatever subset happens to be present.
    """
    import numpy as np

    from repro.scoring.accuracy import N_VAL, val_index
    from repro.scoring.predictions import from_records
    from repro.scoring.real import real_correct, real_count, real_last_batch_count
    from repro.stats import Count

    preds = from_records(result.records, source=f"{result.measurement} records")
    if len(preds) == N_VAL:
        std, pub = real_count(preds), real_last_batch_count(preds)
    else:
        idx = val_index(preds.file_name, preds.source)
        has, correct = real_correct(idx, preds.predicted_class)
        std, pub = Count(int(np.count_nonzero(correct & has)), int(np.count_nonzero(has))), None
    out = [ColumnValue.from_count("top1_acc/imagenet-real", std.k, std.n)]
    if pub is not None:
        out.append(ColumnValue.from_count("top1_acc/imagenet-real", pub.k, pub.n, variant="published",
                                          note="Q1: last batch only (336 images in torchvision order, those with ReaL labels)"))
    else:
        out.append(ColumnValue("top1_acc/imagenet-real", None, variant="published",
                               note=f"Q1 last batch undefined: predictions for {len(preds)} of {N_VAL} images"))
    return out


def shape_bias(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """S / (S + T) over the cue-conflict decisions, with the (S, S + T) count."""
    from repro.scoring.shape_bias import shape_bias as score

    s = score(result.records)
    n = int(s.shape) + int(s.texture)
    if n == 0:
        return [ColumnValue("shape-bias", None, 0, 0, None, note="no shape or texture decisions")]
    return [ColumnValue.from_count("shape-bias", int(s.shape), n, scale=1.0)]


def stylized(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """16-class decision accuracy on Stylized-ImageNet (decision == the image's category)."""
    dec = _records_field(result, "decision", "object_response")
    cat = _records_field(result, "category", "shape", "label_name")
    k = sum(1 for r in result.records if str(r[dec]) == str(r[cat]))
    return [ColumnValue.from_count("top1_acc/stylized", k, len(result.records))]


def spectral(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """Filtered accuracy / clean accuracy per cut-off (no binomial interval: a ratio of two rates)."""
    by_name = {c.condition: c for c in result.conditions}
    clean = by_name.get("clean")
    out: list[ColumnValue] = []
    for name, value in result.values.items():
        if name.startswith("metric/bandpass/"):
            out.append(ColumnValue(name, value, note="probe value"))
    if out:
        return out
    if clean is None:
        raise ReproError(f"spectral: need a 'clean' condition to form ratios (have {sorted(by_name)})")
    for name, c in by_name.items():
        if name == "clean":
            continue
        kind, _, cutoff = name.partition("/")
        if kind not in ("LFC", "HFC"):
            continue
        ratio = c.rate / clean.rate if clean.k else None  # undefined when no clean image is correct
        out.append(ColumnValue(f"metric/bandpass/{kind}/{cutoff}", ratio,
                               note=f"{c.k}/{c.n} filtered over {clean.k}/{clean.n} clean"))
    return out


def critical_band(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """The Gaussian-fit parameters; None (undefined) for a degenerate fit."""
    out = []
    for key in ("bw_norm", "cf_norm", "pns_norm", "bw", "cf", "pns"):
        if key in result.values:
            v = result.values[key]
            out.append(ColumnValue(f"metric/criticalband/{key}", None if v is None else float(v),
                                   note="degenerate fit: undefined" if v is None else ""))
    if not out:
        raise ReproError(f"critical_band: the probe returned none of bw_norm/cf_norm/pns_norm (values: {sorted(result.values)})")
    return out
