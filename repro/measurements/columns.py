"""Measurements, summarizers: a probe's ``ProbeResult`` -> the benchmark.csv columns it measures.

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

import numpy as np

from repro.base.errors import ReproError
from repro.base.results import ConditionCount, ProbeResult, top1_count
from repro.base.stats import Count
from repro.scoring.accuracy import N_VAL, val_index
from repro.scoring.imagenet_c import IMAGENET_C_19, VARIANTS, aggregate
from repro.scoring.predictions import from_records
from repro.scoring.real import real_correct, real_count, real_last_batch_count
from repro.scoring.shape_bias import shape_bias as score
from repro.store.record import ColumnValue

PGD_PUBLISHED_BATCH = 128


@dataclass
class SummaryContext:
    dataset: str
    n_items: int
    extra: dict[str, Any] = field(default_factory=dict)


def _pooled(conditions: Iterable[ConditionCount]) -> tuple[int, int]:
    conds = list(conditions)
    return sum(c.k for c in conds), sum(c.n for c in conds)


def _accuracy(result: ProbeResult, column: str) -> list[ColumnValue]:
    k, n = top1_count(result)
    if n == 0:
        raise ReproError(
            f"{result.measurement}: the probe returned no counted items (conditions: "
            f"{result.conditions!r})"
        )
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


def _split_condition(name: str) -> tuple[str, int]:
    for sep in ("/", "_"):
        head, _, tail = name.rpartition(sep)
        if head and tail.isdigit():
            return head, int(tail)
    raise ReproError(f"corruption condition {name!r} is not of the form '<corruption>/<severity>'")


def _cells(result: ProbeResult) -> dict[tuple[str, int], Count]:
    return {_split_condition(c.condition): Count(c.k, c.n) for c in result.conditions}


def _corruption_mean(
    cells: dict[tuple[str, int], Count], variant: str, column: str, col_variant: str, note: str
) -> ColumnValue:
    """The mean over a corruption variant's cells in %, with the pooled count kept alongside.

    Computed by ``repro.scoring.imagenet_c.aggregate`` (unweighted mean over the variant's cells,
    normal 95% interval with independent cells)."""
    summary = aggregate(cells, variant)
    used = [cells[c] for c in summary.cells]
    iv = (
        None if summary.interval is None else (100 * summary.interval[0], 100 * summary.interval[1])
    )
    return ColumnValue(
        column,
        100 * summary.mean,
        sum(c.k for c in used),
        sum(c.n for c in used),
        iv,
        col_variant,
        f"{note}: mean over {len(VARIANTS[variant])} corruptions x 5 severities",
    )


def imagenet_c(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """ImageNet-C columns: per-cell accuracies and the 15- and 19-corruption means.

    Per-cell accuracies (``top1_acc/<corruption>_<severity>``), the standard 15-corruption mean
    and the published 19-corruption mean (Q3)."""
    cells = _cells(result)
    unknown = sorted({c for c, _ in cells} - set(IMAGENET_C_19))
    if unknown:
        raise ReproError(
            f"imagenet_c: unknown corruptions {unknown} (expected the 19 of METHODS.md Q3)"
        )
    out = [ColumnValue.from_count(f"top1_acc/{c}_{s}", n.k, n.n) for (c, s), n in cells.items()]
    out.append(
        _corruption_mean(
            cells, "imagenet_c", "top1_acc/imagenet-c", "standard", "15 standard corruptions"
        )
    )
    out.append(
        _corruption_mean(
            cells, "imagenet_c_published", "top1_acc/imagenet-c", "published", "Q3: 19 corruptions"
        )
    )
    return out


def imagenet_cbar(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    return [
        _corruption_mean(
            _cells(result), "imagenet_cbar", "top1_acc/imagenet-cbar", "standard", "C-bar"
        )
    ]


def pgd_low(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """Robust accuracy under PGD, standard and published variants.

    Published variant (Q2): 1 - successes / (batches x 128), computed here from the standard
    count so that it does not depend on the batch size the runner used."""
    named = [c for c in result.conditions if c.condition == "robust"]
    k, n = _pooled(named or result.conditions)
    if n == 0:
        raise ReproError("pgd_low: the benchmark returned no counted items")
    padded = math.ceil(n / PGD_PUBLISHED_BATCH) * PGD_PUBLISHED_BATCH
    successes = n - k
    return [
        ColumnValue.from_count("top1_acc/PGD-40/low", k, n),
        ColumnValue.from_count(
            "top1_acc/PGD-40/low",
            padded - successes,
            padded,
            variant="published",
            note=f"Q2: denominator padded to {padded} ({padded // PGD_PUBLISHED_BATCH} batches of "
            "128)",
        ),
    ]


#: the early-stop variant's column: its own, never the study's ``top1_acc/PGD-40/low``,
#: so that no store, comparison or claim counts it as the study's protocol
PGD_EARLY_STOP_COLUMN = "top1_acc/PGD-40-early-stop/low"


def pgd_low_early_stop(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """Robust accuracy under the early-stop rule, in its own column.

    Standard denominator only: a protocol variant has no published computation."""
    named = [c for c in result.conditions if c.condition == "robust"]
    k, n = _pooled(named or result.conditions)
    if n == 0:
        raise ReproError("pgd_low_early_stop: the benchmark returned no counted items")
    return [
        ColumnValue.from_count(
            PGD_EARLY_STOP_COLUMN,
            k,
            n,
            note="protocol variant: each image's attack stopped at its first misclassified "
            "iterate (rule early_stop), not the study's final-point rule",
        )
    ]


def _records_field(result: ProbeResult, *candidates: str) -> str:
    if not result.records:
        raise ReproError(f"{result.measurement}: the probe returned no per-item records")
    for name in candidates:
        if name in result.records[0]:
            return name
    raise ReproError(
        f"{result.measurement}: per-item records lack a field {candidates} (have "
        f"{sorted(result.records[0])})"
    )


def imagenet_real(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """ReaL accuracy from per-image predictions (``repro.scoring.real``), standard and published.

    Standard: every image with a ReaL label; published (Q1): the last batch of 336 images in
    torchvision order.

    On a partial validation set (mini data) the last batch is not there: the published variant
    is stored as undefined rather than computed from whatever subset happens to be present.
    """
    preds = from_records(result.records, source=f"{result.measurement} records")
    if len(preds) == N_VAL:
        std, pub = real_count(preds), real_last_batch_count(preds)
    else:
        idx = val_index(preds.file_name, preds.source)
        has, correct = real_correct(idx, preds.predicted_class)
        std, pub = Count(int(np.count_nonzero(correct & has)), int(np.count_nonzero(has))), None
    out = [ColumnValue.from_count("top1_acc/imagenet-real", std.k, std.n)]
    if pub is not None:
        out.append(
            ColumnValue.from_count(
                "top1_acc/imagenet-real",
                pub.k,
                pub.n,
                variant="published",
                note="Q1: last batch only (336 images in torchvision order, those with ReaL "
                "labels)",
            )
        )
    else:
        out.append(
            ColumnValue(
                "top1_acc/imagenet-real",
                None,
                variant="published",
                note=f"Q1 last batch undefined: predictions for {len(preds)} of {N_VAL} images",
            )
        )
    return out


def shape_bias(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """S / (S + T) over the cue-conflict decisions, with the (S, S + T) count."""
    s = score(result.records)
    n = int(s.shape) + int(s.texture)
    if n == 0:
        return [ColumnValue("shape-bias", None, 0, 0, None, note="no shape or texture decisions")]
    return [ColumnValue.from_count("shape-bias", int(s.shape), n, scale=1.0)]


def stylized(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """16-class decision accuracy on Stylized-ImageNet (``repro.benchmarks.stylized``), in %."""
    return _accuracy(result, "top1_acc/stylized")


def spectral(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """Filtered accuracy / clean accuracy per cut-off.

    No binomial interval: the value is a ratio of two rates."""
    out: list[ColumnValue] = []
    for name, value in result.values.items():
        if name.startswith("metric/bandpass/"):
            out.append(ColumnValue(name, value, note="probe value"))
    if out:
        return out
    return _ratio_columns(result, "metric/bandpass")


def _ratio_columns(result: ProbeResult, prefix: str) -> list[ColumnValue]:
    """``<prefix>/<LFC|HFC>/<cut-off>`` = filtered rate / clean rate, from the condition counts."""
    by_name = {c.condition: c for c in result.conditions}
    clean = by_name.get("clean")
    if clean is None:
        raise ReproError(
            f"{result.measurement}: need a 'clean' condition to form ratios (have "
            f"{sorted(by_name)})"
        )
    out: list[ColumnValue] = []
    for name, c in by_name.items():
        if name == "clean":
            continue
        kind, _, cutoff = name.partition("/")
        if kind not in ("LFC", "HFC"):
            continue
        ratio = c.rate / clean.rate if clean.k else None  # undefined when no clean image is correct
        out.append(
            ColumnValue(
                f"{prefix}/{kind}/{cutoff}",
                ratio,
                note=f"{c.k}/{c.n} filtered over {clean.k}/{clean.n} clean",
            )
        )
    return out


def critical_band(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """The Gaussian-fit parameters; None (undefined) for a degenerate fit."""
    return _fit_columns(
        result, "metric/criticalband", ("bw_norm", "cf_norm", "pns_norm", "bw", "cf", "pns")
    )


def _fit_columns(
    result: ProbeResult,
    prefix: str,
    keys: tuple[str, ...],
    undefined: str = "degenerate fit: undefined",
) -> list[ColumnValue]:
    out = []
    for key in keys:
        if key in result.values:
            v = result.values[key]
            out.append(
                ColumnValue(
                    f"{prefix}/{key}",
                    None if v is None else float(v),
                    note=undefined if v is None else "",
                )
            )
    if not out:
        raise ReproError(
            f"{result.measurement}: the probe returned none of {'/'.join(keys)} "
            f"(values: {sorted(result.values)})"
        )
    return out


# The 16-class protocol of Subramanian et al. 2023 (METHODS.md section 3, the original protocol):
# columns of their own, never benchmark.csv's, so a store never mixes the two protocols. The
# absolute 50% criterion is the protocol's (listed first); ``_norm`` is kept for comparison.
CRITICAL_BAND_16_KEYS = ("bw", "cf", "pns", "bw_norm", "cf_norm", "pns_norm")
CRITICAL_BAND_16_PREFIX = "metric/criticalband-16class"
CRITICAL_BAND_16_PREMADE_PREFIX = "metric/criticalband-16class-premade"
SPECTRAL_16_PREFIX = "metric/bandpass-16class"


def critical_band_16(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """The fit of our synthesised grid on GraySplit with 16-class decisions."""
    why = "degenerate fit or a condition without images: undefined"
    return _fit_columns(result, CRITICAL_BAND_16_PREFIX, CRITICAL_BAND_16_KEYS, why)


def critical_band_16_premade(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """The fit of the pre-made CBMSplit grid with 16-class decisions.

    Undefined with an empty cell."""
    why = "degenerate fit or a (SD, band) cell without images: undefined"
    return _fit_columns(result, CRITICAL_BAND_16_PREMADE_PREFIX, CRITICAL_BAND_16_KEYS, why)


def spectral_16(result: ProbeResult, ctx: SummaryContext) -> list[ColumnValue]:
    """16-class filtered / clean rate per cut-off on GraySplit."""
    return _ratio_columns(result, SPECTRAL_16_PREFIX)
