"""Analysis: do our critical-band stimuli and the authors' pre-made ones (CBMSplit) agree?

Does a model give the same answers on both? Same model, same images, same (SD, band) condition; only
the noise draw differs (our Philox fields vs the authors' NumPy draws, saved as JPEG).

Pairs: each CBMSplit image ``<split>/<i>_cbm_noise<sd>_freq<band>_gray_g_<c>.JPEG`` is GraySplit's
``<split>/<i>_color_gray_g_<c>.JPEG`` with ONE condition applied
(``repro.datasets.critical_band_stimuli.graysplit_name``). Our synthesis of that condition on
that GraySplit image (a record of the full 29-condition grid, ``critical_band_16``, or of
``repro.measurements.loop.run_matched``) pairs with the model's answer on the CBMSplit file. About
30 pairs per cell (the SD-0 files of all bands pool into ``sd=0``).

Per cell: n pairs; ours right ``k_ours``, theirs right ``k_theirs``; the discordant pairs ``b``
(ours right, theirs wrong) and ``c`` (ours wrong, theirs right). The exact McNemar test (two-sided
binomial test of b against b + c trials at 1/2; p = 1 when b + c = 0) asks whether the model is
right equally often on the two versions of the same images. The difference of the two accuracies
is (b - c) / n; its interval is Newcombe's for paired proportions (method 10, the square-and-add of
the two Wilson intervals with the phi correction: ``repro.base.stats.paired_difference_interval``),
which, unlike an interval conditional on b + c, stays informative when b or c is 0. The 29 cells
are one family: Holm-adjusted p (``repro.analysis.multiple.holm``). ``pooled``: the same over
every pair of the 28 noisy cells, which sees a small systematic shift (e.g. weaker noise in one
version) that no single ~30-pair cell can.

``AGREEMENT`` is the one decision rule the label follows (``Agreement.status``), in the words of
per-model agreement (``repro.claims.agreement``): ``differs`` when a cell differs at family-wise
level 0.05 (Holm), or the pooled McNemar test rejects at 0.05 and the pooled difference lies outside
``MARGIN``; ``agrees`` when no cell differs and the pooled difference's 90% Newcombe interval lies
inside +-``MARGIN`` (an equivalence test at 0.05:
``repro.analysis.equivalence.interval_equivalence``); ``inconclusive`` otherwise. ``MARGIN`` is one
image of a ~30-image cell.

Pure Python + SciPy (no torch); condition names as the probes write them (``sd=0``,
``f=<band>/sd=<sd>``), checked against ``repro.probes.critical_band.conditions`` by a unit test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from repro.analysis.multiple import holm
from repro.base.errors import DataError
from repro.base.stats import paired_difference_interval
from repro.datasets.critical_band_stimuli import graysplit_name
from repro.scoring.critical_band import N_BANDS, NOISE_SDS
from repro.scoring.critical_band import thresholds as rule

ALPHA = 0.05
MARGIN = 1 / 30  # one image of a ~30-image cell, as a difference of accuracies
MARGIN_REASON = (
    "one image of a ~30-image cell: a systematic shift smaller than that cannot, on average, move "
    "a cell's count by a whole image, so the pre-made grid could not tell the two apart"
)
AGREES, DIFFERS, INCONCLUSIVE = "agrees", "differs", "inconclusive"
AGREEMENT = (
    "the label follows one rule: differs when a cell's exact McNemar test of the paired decisions "
    "(same image, same condition, our noise vs the authors' pre-made noise) rejects at "
    f"family-wise level {ALPHA} (Holm over the 29 cells), or the pooled test over the 28 noisy "
    f"cells rejects at {ALPHA} with the pooled difference outside +-{100 * MARGIN:.1f} points "
    f"({MARGIN_REASON}); agrees when no cell differs and the pooled difference's 90% Newcombe "
    f"interval lies inside +-{100 * MARGIN:.1f} points; inconclusive otherwise"
)
CLEAN = "sd=0"


def condition_name(band: int, sd: float) -> str:
    return f"f={band}/sd={sd:g}"


CONDITIONS: tuple[str, ...] = (
    CLEAN,
    *(condition_name(b, sd) for b in range(N_BANDS) for sd in NOISE_SDS[1:]),
)


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
    diff_interval: tuple[
        float, float
    ]  # of (k_ours - k_theirs) / n, 95%, Newcombe's paired interval

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
    def status(self) -> str:
        """``agrees``, ``differs`` or ``inconclusive`` by the one rule ``AGREEMENT``."""
        return self.decision[0]

    @property
    def why(self) -> str:
        return self.decision[1]

    @property
    def decision(self) -> tuple[str, str]:
        from repro.analysis.equivalence import interval_equivalence

        cells = self.differing()
        p = self.pooled
        pts = f"pooled difference {100 * p.diff:+.1f} points"
        if cells:
            return DIFFERS, f"{len(cells)} cell(s) differ at family-wise {ALPHA} (Holm)"
        outside = abs(p.diff) > MARGIN
        if p.p < ALPHA and outside:
            return DIFFERS, (
                f"{pts}, outside +-{100 * MARGIN:.1f}, and the pooled McNemar test rejects "
                f"(p = {p.p:.2g})"
            )
        eq = interval_equivalence(p.diff, paired_interval(p, 1 - 2 * ALPHA), MARGIN, alpha=ALPHA)
        if eq.passed:
            return AGREES, f"no cell differs; {pts}, its 90% interval inside +-{100 * MARGIN:.1f}"
        return INCONCLUSIVE, (
            f"no cell differs, but the {pts} has a 90% interval "
            f"[{100 * eq.interval[0]:+.1f}, {100 * eq.interval[1]:+.1f}] reaching beyond "
            f"+-{100 * MARGIN:.1f}" + (f" (pooled McNemar p = {p.p:.2g})" if p.p < ALPHA else "")
        )

    @property
    def agrees(self) -> bool:
        """The status by ``AGREEMENT`` is ``agrees``."""
        return self.status == AGREES

    def grids(self) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
        """(ours, theirs) per-cell (k, n) over the paired images."""
        return (
            {c.condition: (c.k_ours, c.n) for c in self.cells},
            {c.condition: (c.k_theirs, c.n) for c in self.cells},
        )


def _correct(row: Mapping[str, Any]) -> bool:
    return str(row["object_response"]) == str(row["category"])


def pair_decisions(
    ours: Iterable[Mapping[str, Any]], theirs: Iterable[Mapping[str, Any]]
) -> dict[str, list[tuple[bool, bool]]]:
    """Each pre-made record's decision paired with ours, per condition.

    {condition: [(ours right, theirs right), ...]}: each pre-made record (``theirs``: imagename a
    CBMSplit item, its condition) with our record of the same GraySplit image in the same condition.
    A pre-made image without our counterpart is a DataError (the grids do not match).
    """
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
        raise DataError(
            f"{len(missing)} pre-made image(s) have no decision of ours on the same GraySplit "
            f"image and condition, e.g. {missing[:2]} (is our grid complete, on splits 0-4?)"
        )
    return out


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p of ``b`` against ``c`` discordant pairs (1 when there are none)."""
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(b, b + c, 0.5).pvalue)


def paired_interval(cell: CellAgreement, confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's paired interval of (k_ours - k_theirs) / n from the cell's 2 x 2 table.

    The table: both right, only ours, only theirs, neither; (0, 0) for an empty cell.
    """
    if cell.n == 0:
        return (0.0, 0.0)

    both = cell.k_ours - cell.b
    return paired_difference_interval(
        both, cell.b, cell.c, cell.n - both - cell.b - cell.c, confidence
    )


def _cell(
    condition: str, pairs: Sequence[tuple[bool, bool]], p_holm: float | None = None
) -> CellAgreement:
    arr = np.asarray(pairs, dtype=bool).reshape(-1, 2)
    ours, theirs = arr[:, 0], arr[:, 1]
    b, c = int(np.sum(ours & ~theirs)), int(np.sum(~ours & theirs))
    p = mcnemar_exact(b, c)
    cell = CellAgreement(
        condition,
        len(arr),
        int(ours.sum()),
        int(theirs.sum()),
        b,
        c,
        p,
        p if p_holm is None else p_holm,
        (0.0, 0.0),
    )
    return replace(cell, diff_interval=paired_interval(cell))


def compare(pairs: Mapping[str, Sequence[tuple[bool, bool]]]) -> Agreement:
    """Per-cell and pooled paired comparison (see the module docstring); every cell needs pairs."""
    empty = [c for c in CONDITIONS if not pairs.get(c)]
    if empty:
        raise DataError(f"paired comparison: no pairs in cell(s) {', '.join(empty[:4])}")
    raw = [_cell(c, pairs[c]) for c in CONDITIONS]
    adjusted = holm([cell.p for cell in raw])
    cells = [_cell(c, pairs[c], p) for c, p in zip(CONDITIONS, adjusted, strict=True)]
    noisy = [pair for c in CONDITIONS[1:] for pair in pairs[c]]
    return Agreement(cells, _cell("pooled noisy cells", noisy))


def grid(counts: Mapping[str, tuple[int, int]]) -> np.ndarray:
    """(5 SDs x 7 bands) accuracy from per-condition (k, n).

    Row 0 repeats the SD-0 accuracy (the layout ``repro.scoring.critical_band.thresholds`` reads).
    """
    out = np.empty((len(NOISE_SDS), N_BANDS))
    k, n = counts[CLEAN]
    out[0, :] = k / n
    for i, sd in enumerate(NOISE_SDS[1:], start=1):
        for band in range(N_BANDS):
            k, n = counts[condition_name(band, sd)]
            out[i, band] = k / n if n else np.nan
    return out


def thresholds(counts: Mapping[str, tuple[int, int]]) -> dict[str, list[int] | None]:
    """Threshold vectors of a grid under the absolute and the relative criterion.

    ``abs``: the absolute criterion; ``norm``: relative to the grid's own SD-0 accuracy (None when
    that accuracy is 0).
    """
    g = grid(counts)
    return {
        "abs": [int(t) for t in rule(g)],
        "norm": None if g[0, 0] <= 0 else [int(t) for t in rule(g, baseline=g[0, 0])],
    }
