"""Analysis: do our critical-band stimuli and the authors' pre-made ones (CBMSplit) give a model
the same answers? Same model, same images, same (SD, band) condition; only the noise draw
differs (our Philox fields vs the authors' NumPy draws, saved as JPEG).

Pairs: each CBMSplit image ``<split>/<i>_cbm_noise<sd>_freq<band>_gray_g_<c>.JPEG`` is GraySplit's
``<split>/<i>_color_gray_g_<c>.JPEG`` with ONE condition applied
(``repro.datasets.critical_band_stimuli.graysplit_name``). Our synthesis of that condition on
that GraySplit image (a record of the full 29-condition grid, ``critical_band_16``, or of
``critical_band_matched``) pairs with the model's answer on the CBMSplit file. About 30 pairs per
cell (the SD-0 files of all bands pool into ``sd=0``).

Per cell: n pairs; ours right ``k_ours``, theirs right ``k_theirs``; the discordant pairs ``b``
(ours right, theirs wrong) and ``c`` (ours wrong, theirs right). The exact McNemar test (two-sided
binomial test of b against b + c trials at 1/2; p = 1 when b + c = 0) asks whether the model is
right equally often on the two versions of the same images. The difference of the two accuracies
is (b - c) / n; its interval is exact conditional on b + c (Clopper-Pearson of b / (b + c), mapped
to that scale). The 29 cells are one family: Holm-adjusted p (``repro.analysis.multiple.holm``).
``pooled``: the same test over every pair of the 28 noisy cells, which sees a small systematic
shift (e.g. weaker noise in one version) that no single ~30-pair cell can.

``AGREEMENT`` states what "agreement" means (fixed before any real model was compared): no cell
differs at family-wise level 0.05 (Holm). It says nothing about differences smaller than a
~30-pair cell can detect; ``pooled`` and the per-cell table are reported beside it.

Pure Python + SciPy (no torch); condition names as the probes write them (``sd=0``,
``f=<band>/sd=<sd>``), checked against ``repro.probes.critical_band.conditions`` by a unit test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repro.base.errors import DataError
from repro.scoring.critical_band import N_BANDS, NOISE_SDS

ALPHA = 0.05
AGREEMENT = ("agreement: in none of the 29 cells does the exact McNemar test of the paired decisions (same image, "
             "same condition, our noise vs the authors' pre-made noise) reject equal accuracy at family-wise "
             f"level {ALPHA} (Holm over the 29 cells)")
CLEAN = "sd=0"


def condition_name(band: int, sd: float) -> str:
    return f"f={band}/sd={sd:g}"


CONDITIONS: tuple[str, ...] = (CLEAN, *(condition_name(b, sd) for b in range(N_BANDS) for sd in NOISE_SDS[1:]))


@dataclass(frozen=True)
class CellAgreement:
    condition: str
    n: int  # pairs
    k_ours: int
    k_theirs: int
    b: int  # ours right, theirs wrong
    c: int  # ours wrong, theirs right
    p: float  # exact McNemar, two-sided
    p_holm: float
    diff_interval: tuple[float, float]  # of (k_ours - k_theirs) / n, 95%, exact conditional on b + c

    @property
    def diff(self) -> float:
        return (self.k_ours - self.k_theirs) / self.n if self.n else float("nan")

    def differs(self, alpha: float = ALPHA) -> bool:
        return self.p_holm < alpha


@dataclass(frozen=True)
class Agreement:
    cells: list[CellAgreement]  # in CONDITIONS order
    pooled: CellAgreement  # over the pairs of the 28 noisy cells (p_holm = p)

    def differing(self, alpha: float = ALPHA) -> list[CellAgreement]:
        """The cells that differ at family-wise level ``alpha`` (Holm)."""
        return [c for c in self.cells if c.differs(alpha)]

    @property
    def agrees(self) -> bool:
        """``AGREEMENT``: no cell differs at family-wise level ``ALPHA``."""
        return not self.differing()

    def grids(self) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
        """(ours, theirs) per-cell (k, n) over the paired images."""
        return ({c.condition: (c.k_ours, c.n) for c in self.cells},
                {c.condition: (c.k_theirs, c.n) for c in self.cells})


def _correct(row: Mapping[str, Any]) -> bool:
    return str(row["object_response"]) == str(row["category"])


def pair_decisions(ours: Iterable[Mapping[str, Any]], theirs: Iterable[Mapping[str, Any]]
                   ) -> dict[str, list[tuple[bool, bool]]]:
    """{condition: [(ours right, theirs right), ...]}: each pre-made record (``theirs``: imagename
    a CBMSplit item, its condition) with our record of the same GraySplit image in the same
    condition. A pre-made image without our counterpart is a DataError (the grids do not match)."""
    from repro.datasets.critical_band_stimuli import graysplit_name

    mine = {(str(r["imagename"]), str(r["condition"])): _correct(r) for r in ours}
    out: dict[str, list[tuple[bool, bool]]] = {c: [] for c in CONDITIONS}
    missing = []
    for r in theirs:
        cond = str(r["condition"])
        if cond not in out:
            raise DataError(f"pre-made record {r.get('imagename')!r}: unknown condition {cond!r}")
        key = (graysplit_name(str(r["imagename"])), cond)
        if key not in mine:
            missing.append(f"{key[0]} in {cond}")
            continue
        out[cond].append((mine[key], _correct(r)))
    if missing:
        raise DataError(f"{len(missing)} pre-made image(s) have no decision of ours on the same GraySplit image "
                        f"and condition, e.g. {missing[:2]} (is our grid complete, on splits 0-4?)")
    return out


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p of ``b`` against ``c`` discordant pairs (1 when there are none)."""
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(b, b + c, 0.5).pvalue)


def difference_interval(b: int, c: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Interval of (b - c) / n, exact conditional on b + c: Clopper-Pearson of b / (b + c),
    mapped to d (2 pi - 1) / n with d = b + c; (0, 0) when d = 0."""
    d = b + c
    if d == 0 or n == 0:
        return (0.0, 0.0)
    from repro.base.stats import binomial_interval

    lo, hi = binomial_interval(b, d, confidence, method="clopper-pearson")
    return (d * (2 * lo - 1) / n, d * (2 * hi - 1) / n)


def _cell(condition: str, pairs: Sequence[tuple[bool, bool]], p_holm: float | None = None) -> CellAgreement:
    arr = np.asarray(pairs, dtype=bool).reshape(-1, 2)
    ours, theirs = arr[:, 0], arr[:, 1]
    b, c = int(np.sum(ours & ~theirs)), int(np.sum(~ours & theirs))
    p = mcnemar_exact(b, c)
    return CellAgreement(condition, len(arr), int(ours.sum()), int(theirs.sum()), b, c, p,
                         p if p_holm is None else p_holm, difference_interval(b, c, len(arr)))


def compare(pairs: Mapping[str, Sequence[tuple[bool, bool]]]) -> Agreement:
    """Per-cell and pooled paired comparison (see the module docstring); every cell needs pairs."""
    from repro.analysis.multiple import holm

    empty = [c for c in CONDITIONS if not pairs.get(c)]
    if empty:
        raise DataError(f"paired comparison: no pairs in cell(s) {', '.join(empty[:4])}")
    raw = [_cell(c, pairs[c]) for c in CONDITIONS]
    adjusted = holm([cell.p for cell in raw])
    cells = [_cell(c, pairs[c], p) for c, p in zip(CONDITIONS, adjusted, strict=True)]
    noisy = [pair for c in CONDITIONS[1:] for pair in pairs[c]]
    return Agreement(cells, _cell("pooled noisy cells", noisy))


def grid(counts: Mapping[str, tuple[int, int]]) -> np.ndarray:
    """(5 SDs x 7 bands) accuracy from per-condition (k, n); row 0 repeats the SD-0 accuracy
    (the layout ``repro.scoring.critical_band.thresholds`` reads)."""
    out = np.empty((len(NOISE_SDS), N_BANDS))
    k, n = counts[CLEAN]
    out[0, :] = k / n
    for i, sd in enumerate(NOISE_SDS[1:], start=1):
        for band in range(N_BANDS):
            k, n = counts[condition_name(band, sd)]
            out[i, band] = k / n if n else np.nan
    return out


def thresholds(counts: Mapping[str, tuple[int, int]]) -> dict[str, list[int] | None]:
    """Threshold vectors of a grid under the absolute criterion (``abs``) and relative to its own
    SD-0 accuracy (``norm``; None when that accuracy is 0)."""
    from repro.scoring.critical_band import thresholds as rule

    g = grid(counts)
    return {"abs": [int(t) for t in rule(g)],
            "norm": None if g[0, 0] <= 0 else [int(t) for t in rule(g, baseline=g[0, 0])]}
