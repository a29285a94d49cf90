"""Scoring stage, spectral bias: the low/high-pass box masks and the summaries of the counts.

The masks are the low/high-pass filter's; the summaries are computed from the per-condition counts.
Pure NumPy, no torch.

Definitions follow METHODS.md section 3 (``eval_spectral.py:18-38`` of the study): for an
image of size S (224 in the study, half = S // 2 = 112) and cut-off c, the low-pass radius is
``int(c * half)`` and the high-pass radius ``int((1 - c) * half)``; the mask is the square of
rows and columns ``[half - r, half + r)`` of the fftshift-ed spectrum, 1 inside for low-pass
and 0 inside for high-pass. ``LFC/c`` and ``HFC/c`` are filtered top-1 divided by clean top-1;
the low-frequency bias is the mean of LFC at c = 0.1..0.5, the high-frequency bias the mean of
HFC at c = 0.1..0.5. ``score`` is the scorer of a measured result (the registry's ``score``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from repro.base.results import ProbeResult
from repro.base.stats import Count

#: The study's cut-offs, by the names benchmark.csv uses (``metric/bandpass/LFC/0.3``).
CUTOFFS: tuple[float, ...] = (0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99)

#: The float values the study's code actually used, ``[0.01, *np.arange(0.1, 0.99, 0.1), 0.99]``
#: (0.30000000000000004, 0.7000000000000001, ...). ``radius`` computes with these: at 224 px
#: they give the same radii as the rounded names, but at some sizes (e.g. 20, 40 px,
#: high-pass 0.7) ``int()`` of the two differs by one bin.
STUDY_CUTOFFS: tuple[float, ...] = (0.01, *(float(c) for c in np.arange(0.1, 0.99, 0.1)), 0.99)
_AS_RUN = dict(zip(CUTOFFS, STUDY_CUTOFFS, strict=True))

#: The cut-offs averaged by the bias summaries.
BIAS_CUTOFFS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5)

KINDS: tuple[str, ...] = ("low", "high")
_TAG = {"low": "LFC", "high": "HFC"}


def condition_name(kind: str, cutoff: float) -> str:
    """The condition name, as the suffix of benchmark.csv's ``metric/bandpass/<tag>/<c>`` column."""
    _check_kind(kind)
    return f"{_TAG[kind]}/{cutoff:g}"


def conditions() -> list[tuple[str, str, float]]:
    """All 22 filtered conditions as (name, kind, cut-off): low-pass first, then high-pass."""
    return [(condition_name(kind, c), kind, c) for kind in KINDS for c in CUTOFFS]


def stimulus_conditions() -> tuple[str, ...]:
    """What the probe shows the model of each image: ``clean``, then the 22 filtered conditions."""
    return ("clean", *(name for name, _, _ in conditions()))


def _check_kind(kind: str) -> None:
    if kind not in _TAG:
        raise ValueError(f"filter kind must be 'low' or 'high', got {kind!r}")


def radius(size: int, cutoff: float, kind: str) -> int:
    """Half-width of the box (in frequency bins) for an image of ``size`` pixels.

    A named cut-off (one of ``CUTOFFS``) is replaced by the float the study computed with
    (``STUDY_CUTOFFS``), so the radii are the study's at every size.
    """
    _check_kind(kind)
    if not 0.0 <= cutoff <= 1.0:
        raise ValueError(f"cut-off must be in [0, 1], got {cutoff}")
    half = size // 2
    cutoff = _AS_RUN.get(round(cutoff, 12), cutoff)
    c = cutoff if kind == "low" else 1.0 - cutoff
    return int(c * half)


def box_mask(size: int, cutoff: float, kind: str) -> np.ndarray:
    """The (size, size) float mask applied to the fftshift-ed spectrum.

    Low-pass: 1 on rows and columns ``[half - r, half + r)``, 0 elsewhere; high-pass: the
    complement. ``half = size // 2`` (112 at the study's 224 px).
    """
    r = radius(size, cutoff, kind)
    half = size // 2
    inside = np.zeros((size, size), dtype=bool)
    inside[half - r : half + r, half - r : half + r] = True
    return (inside if kind == "low" else ~inside).astype(np.float64)


def lfc_hfc_ratios(counts: Mapping[str, Count], clean: Count) -> dict[str, float]:
    """Filtered top-1 divided by clean top-1 for every condition in ``counts``.

    ``counts`` maps condition names (``LFC/0.1``, ``HFC/0.99``, ...) to correct-of-n counts;
    ``clean`` is the unfiltered count on the same images. The ratio of rates is the published
    column; the counts stay available to the caller for intervals.
    """
    if clean.n == 0 or clean.k == 0:
        raise ValueError(f"clean accuracy is {clean.k}/{clean.n}: the LFC/HFC ratios are undefined")
    out: dict[str, float] = {}
    for name, count in counts.items():
        if count.n == 0:
            raise ValueError(f"condition {name!r} has no images (n = 0)")
        out[name] = count.rate / clean.rate
    return out


def _bias(ratios: Mapping[str, float], kind: str, cutoffs: Sequence[float]) -> float:
    names = [condition_name(kind, c) for c in cutoffs]
    missing = [n for n in names if n not in ratios]
    if missing:
        raise KeyError(f"{_TAG[kind]} bias needs the ratios {names}; missing {missing}")
    return float(np.mean([ratios[n] for n in names]))


def low_frequency_bias(
    ratios: Mapping[str, float], cutoffs: Sequence[float] = BIAS_CUTOFFS
) -> float:
    """Mean LFC ratio at c = 0.1..0.5 (the study's low-frequency bias)."""
    return _bias(ratios, "low", cutoffs)


def high_frequency_bias(
    ratios: Mapping[str, float], cutoffs: Sequence[float] = BIAS_CUTOFFS
) -> float:
    """Mean HFC ratio at c = 0.1..0.5 (the study's high-frequency bias)."""
    return _bias(ratios, "high", cutoffs)


def score(result: ProbeResult, params: dict[str, Any] | None = None) -> ProbeResult:
    """``result`` with the LFC/HFC ratios and the low-/high-frequency biases added.

    Its counts: clean first, then the filtered conditions. Both biases are None when no clean image
    is right (the ratios divide by the clean count). Both protocols (1000 and 16 classes) score so.
    """
    counts = result.conditions
    clean = Count(counts[0].k, counts[0].n)
    if clean.k > 0:
        ratios = lfc_hfc_ratios({c.condition: Count(c.k, c.n) for c in counts[1:]}, clean)
        result.values.update(ratios)
        result.values["low_frequency_bias"] = low_frequency_bias(ratios)
        result.values["high_frequency_bias"] = high_frequency_bias(ratios)
    else:
        result.values.update({"low_frequency_bias": None, "high_frequency_bias": None})
    return result
