"""Claims: per-model agreement, the reproduction question.

For each study model with a measured value of a published column (a current record of the store,
measured here or imported), is our value the published one up to implementation effects?

- ``agrees``: the interval of the difference (ours - published) lies inside the implementation
  margin that the study declares for the column's family, with its reason (the study's
  ``agreement`` file, e.g. ``repro/studies/gavrikov2024/agreement.toml``): an equivalence test
  (``repro.analysis.equivalence.interval_equivalence``, the (1 - 2 alpha) interval, alpha 0.05);
- ``differs``: a Holm-adjusted test over the models of the column (within the study) excludes
  0 at alpha AND the difference lies outside the margin;
- ``inconclusive``: neither (or no interval can be formed, or no margin is declared: said why).

The interval of the difference (the "measurement agreement" interval of
``repro.claims.verdict``) depends on what was sampled:

- fixed stimuli (the same images on both sides) and no per-item decisions: the measured value
  is not a sample; the difference is exact (a zero-width interval, p = 0 unless it is 0), so
  the margin alone decides;
- per-item decisions on both sides (a family's ``paired`` hook): Newcombe's paired interval
  (``repro.base.stats.paired_difference_interval``) and the exact McNemar test of the
  discordant items;
- stimuli drawn at random (``stimuli = "random"``: critical-band noise, PGD random starts): our
  draw and the study's are two samples of the same protocol: Newcombe's interval for two
  independent proportions (``repro.base.stats.difference_interval``) from our count and the
  published value taken as a count of the same n, and the two-proportion z test; a random
  value without a count (a fitted value) gets no interval: ``inconclusive``.

How this relates to a claim's verdict (``repro.claims.check.evaluate``): agreement answers
whether the measurements reproduce the published per-model values; the claim's own statistic
and tolerance (on measured inputs ``correlation_interval`` for a rounded published number:
``applicable_tolerance``) answer whether the claim still holds on our values. A claim is
``reproduced`` by measurement only when both hold: one input that ``differs`` makes it
``not_reproduced`` and names the models (flag ``differs``); ``inconclusive`` inputs are named
(flag ``inconclusive``) and neither pass nor fail it.

The agreement file (one ``[[family]]`` per column family; the first whose ``columns``
pattern, fnmatch, matches a column applies)::

    [[family]]
    name = "top-1 accuracy"
    columns = ["top1_acc/imagenet", "top1_acc/imagenet-v2"]
    margin = 0.1                 # in the column's unit
    scale = 100                  # value = scale * k / n (default 1)
    stimuli = "fixed"            # fixed | random
    reason = "why this margin"
    paired = "module:function"   # optional: (store, record, column, data_dir) -> [(ours, theirs),
                                 #   ...] | None
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from repro.analysis.multiple import holm
from repro.base.errors import ConfigError
from repro.base.registry import resolve_lazy
from repro.base.stats import difference_interval, paired_difference_interval
from repro.base.textfile import read_toml
from repro.claims.verdict import (
    AGREEMENT,
    AGREES,
    DIFFERS,
    INCONCLUSIVE,
    LABEL_IMPORTED,
    LABEL_MEASURED,
)
from repro.store.export import job_states, wide_columns
from repro.store.files import Store

FIXED, RANDOM = "fixed", "random"
STIMULI = (FIXED, RANDOM)
ALPHA = 0.05
FAMILY_FIELDS = ("name", "columns", "margin", "scale", "stimuli", "reason", "paired")

Pairs = Sequence[tuple[bool, bool]]  # per item: (ours, published) decisions, e.g. correct or not


@dataclass(frozen=True)
class Family:
    """A column family's implementation margin (see the module docstring)."""

    name: str
    columns: tuple[str, ...]
    margin: float
    stimuli: str
    reason: str
    scale: float = 1.0
    paired: str = ""  # lazy "module:function", or "" (no per-item decisions on both sides)

    def matches(self, column: str) -> bool:
        return any(fnmatchcase(column, pattern) for pattern in self.columns)


@dataclass(frozen=True)
class Margins:
    """A study's declared margins (empty: the study declares none)."""

    families: tuple[Family, ...] = ()
    origin: str = ""

    def family(self, column: str) -> Family | None:
        return next((f for f in self.families if f.matches(column)), None)


def _family(raw: Any, where: str) -> Family:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table with {', '.join(FAMILY_FIELDS[:6])}")
    unknown = sorted(set(raw) - set(FAMILY_FIELDS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(FAMILY_FIELDS)})"
        )
    for key in ("name", "reason"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ConfigError(
                f"{where}: field {key!r} must be a non-empty string"
                + (" (why this margin)" if key == "reason" else "")
            )
    columns = raw.get("columns")
    if (
        not isinstance(columns, list)
        or not columns
        or not all(isinstance(c, str) and c for c in columns)
    ):
        raise ConfigError(
            f"{where}: field 'columns' must be a non-empty list of column names or patterns"
        )
    margin, scale = raw.get("margin"), raw.get("scale", 1)
    for key, value in (("margin", margin), ("scale", scale)):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise ConfigError(f"{where}: field {key!r} must be a finite number >= 0, got {value!r}")
    if scale == 0:
        raise ConfigError(f"{where}: field 'scale' must be > 0 (value = scale * k / n)")
    stimuli = raw.get("stimuli")
    if stimuli not in STIMULI:
        raise ConfigError(
            f"{where}: field 'stimuli' must be one of {', '.join(STIMULI)}, got {stimuli!r}"
        )
    paired = raw.get("paired", "")
    if paired and (not isinstance(paired, str) or ":" not in paired):
        raise ConfigError(
            f"{where}: field 'paired' must be a lazy reference 'module:function', got {paired!r}"
        )
    return Family(
        raw["name"], tuple(columns), float(margin), stimuli, raw["reason"], float(scale), paired
    )


def read_margins(path: str | os.PathLike[str]) -> Margins:
    """The ``[[family]]`` tables of an agreement file.

    A mistake is a ConfigError naming the file and the field."""
    path = Path(path)
    raw = read_toml(path, "an agreement file of [[family]] tables")
    unknown = sorted(set(raw) - {"family"})
    if unknown:
        raise ConfigError(
            f"{path}: unknown table(s) {', '.join(unknown)} (expected [[family]] tables)"
        )
    entries = raw.get("family")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(
            f"{path}: no [[family]] tables (each declares a column family's margin and its reason)"
        )
    return Margins(
        tuple(_family(e, f"{path}: [[family]] #{i + 1}") for i, e in enumerate(entries)), str(path)
    )


def study_margins(study: Any) -> Margins:
    """The margins the study's ``agreement`` file declares (none when it names no file)."""
    path = getattr(study, "agreement", None)
    return read_margins(path) if path is not None else Margins()


@dataclass(frozen=True)
class Agreement:
    """One study model x published column: our value next to the published one.

    See the module docstring. ``interval``: the (1 - 2 alpha) interval of ``diff`` (None: none can
    be formed); ``p``: the test of diff = 0 (None: no test), ``p_holm`` Holm-adjusted over the
    column."""

    study: str
    model: str
    column: str
    measurement: str
    source: str  # measured | imported
    ours: float
    published: float
    k: int | None = None
    n: int | None = None
    family: str = ""
    margin: float | None = None
    stimuli: str = ""
    interval: tuple[float, float] | None = None
    confidence: float = 1 - 2 * ALPHA
    method: str = ""
    p: float | None = None
    p_holm: float | None = None
    status: str = INCONCLUSIVE
    why: str = ""

    @property
    def diff(self) -> float:
        return self.ours - self.published

    def as_json(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "model": self.model,
            "column": self.column,
            "measurement": self.measurement,
            "source": self.source,
            "ours": self.ours,
            "k": self.k,
            "n": self.n,
            "published": self.published,
            "diff": self.diff,
            "interval_kind": AGREEMENT,
            "interval": None if self.interval is None else list(self.interval),
            "confidence": self.confidence,
            "method": self.method,
            "p": self.p,
            "p_holm": self.p_holm,
            "family": self.family,
            "margin": self.margin,
            "stimuli": self.stimuli,
            "status": self.status,
            "why": self.why,
        }


@dataclass(frozen=True)
class Difference:
    """The interval and test of one difference, before the column's Holm correction."""

    interval: tuple[float, float] | None
    p: float | None
    method: str
    why: str = ""


def exact_difference(diff: float) -> Difference:
    """Fixed stimuli, no per-item decisions: the difference is not a sample."""
    return Difference(
        (diff, diff),
        0.0 if diff != 0 else 1.0,
        "fixed stimuli: not a sample, the difference is exact (zero-width interval)",
    )


def paired_difference(pairs: Pairs, scale: float, confidence: float) -> Difference:
    """The difference of two rates from per-item decisions on both sides.

    Newcombe's paired interval of the difference of the two rates and the exact McNemar test
    (binomial on the discordant items): ``paired_table`` of the pairs' 2x2 table."""
    a = sum(1 for x, y in pairs if x and y)
    b = sum(1 for x, y in pairs if x and not y)
    c = sum(1 for x, y in pairs if y and not x)
    return paired_table(a, b, c, len(pairs) - a - b - c, scale, confidence)


def paired_table(
    both: int, ours_only: int, theirs_only: int, neither: int, scale: float, confidence: float
) -> Difference:
    """``paired_difference`` of the 2x2 table of the items both sides decided.

    Items correct on both sides, on ours only, on theirs only, on neither."""
    from scipy import stats

    b, c = ours_only, theirs_only
    n = both + b + c + neither
    if not n:
        return Difference(None, None, "paired", "no items on both sides")
    lo, hi = paired_difference_interval(both, b, c, neither, confidence)
    p = float(stats.binomtest(b, b + c, 0.5).pvalue) if b + c else 1.0
    return Difference(
        (scale * lo, scale * hi),
        p,
        f"paired over {n} items ({b} ours only, {c} published only): Newcombe's paired "
        "interval, exact McNemar test",
    )


def independent_difference(
    k: int, n: int, published: float, scale: float, confidence: float
) -> Difference:
    """The difference of our rate and the published one, for random stimuli.

    Our k of n and the published value as a count of the same n (another draw of the same protocol):
    Newcombe's interval for two independent proportions, and the pooled two-proportion z test."""
    from scipy import stats

    k_pub = int(round(published / scale * n))
    if not 0 <= k_pub <= n:
        return Difference(
            None,
            None,
            "independent draws",
            f"the published value {published} is not a rate of n = {n} (scale {scale:g})",
        )
    lo, hi = difference_interval(k, n, k_pub, n, confidence)
    pooled = (k + k_pub) / (2 * n)
    se = math.sqrt(pooled * (1 - pooled) * 2 / n)
    p = (
        (1.0 if k == k_pub else 0.0)
        if se == 0
        else float(2 * stats.norm.sf(abs(k - k_pub) / n / se))
    )
    return Difference(
        (scale * lo, scale * hi),
        p,
        f"independent draws: ours {k}/{n}, published {k_pub}/{n} (the published value as a count "
        "of the same n): Newcombe's interval, two-proportion z test",
    )


def difference(
    family: Family,
    ours: float,
    published: float,
    k: int | None,
    n: int | None,
    pairs: Pairs | None,
    confidence: float,
) -> Difference:
    """The interval and test of ours - published under ``family``'s stimuli (module docstring)."""
    if pairs is not None:
        return paired_difference(pairs, family.scale, confidence)
    if family.stimuli == FIXED:
        return exact_difference(ours - published)
    if k is None or n is None or n <= 0:
        return Difference(
            None,
            None,
            "random stimuli",
            "drawn at random and published as a value without counts (a fit): no interval of the "
            "difference can be formed",
        )
    return independent_difference(int(k), int(n), published, family.scale, confidence)


def decide(
    diff: float, d: Difference, p_holm: float | None, margin: float, alpha: float
) -> tuple[str, str]:
    """The status of one difference and why."""
    from repro.analysis.equivalence import interval_equivalence

    if d.interval is None:
        return INCONCLUSIVE, d.why
    eq = interval_equivalence(diff, d.interval, margin, alpha=alpha, method=d.method)
    span = f"[{d.interval[0]:+.4g}, {d.interval[1]:+.4g}]"
    if eq.passed:
        return AGREES, f"difference {diff:+.4g}, interval {span} inside +-{margin:g}"
    outside = abs(diff) > margin
    if p_holm is not None and p_holm < alpha and outside:
        if d.interval[0] == d.interval[1]:
            return (
                DIFFERS,
                f"difference {diff:+.4g} outside +-{margin:g} (fixed stimuli: the difference is "
                "exact)",
            )
        return DIFFERS, (
            f"difference {diff:+.4g} outside +-{margin:g} and the test excludes 0 "
            f"(Holm-adjusted p = {p_holm:.2g})"
        )
    if outside:
        return INCONCLUSIVE, (
            f"difference {diff:+.4g} outside +-{margin:g} but the test does not exclude 0 "
            f"(Holm-adjusted p = {p_holm:.2g})"
            if p_holm is not None
            else "no test"
        )
    return (
        INCONCLUSIVE,
        f"difference {diff:+.4g}, but its interval {span} reaches beyond +-{margin:g}",
    )


@dataclass(frozen=True)
class Measured:
    """One measured value to compare: from the store (``measured_values``)."""

    model: str
    column: str
    measurement: str
    source: str
    value: float
    k: int | None = None
    n: int | None = None
    pairs: Pairs | None = None


def measured_values(
    store_dir: str | os.PathLike[str],
    *,
    versions: Mapping[str, str] | None,
    margins: Margins | None = None,
    data_dir: Any = None,
    models: Iterable[str] | None = None,
) -> list[Measured]:
    """Every current, evidence-grade value of the store, labelled measured or imported.

    The values as ``wide_table`` overlays them (the published variant of a quirk column, mini and
    partial records left out), each with its count, and its per-item pairs where the column's family
    has a ``paired`` hook that returns them."""
    states = job_states(store_dir, versions=versions)
    store = Store(store_dir)
    wanted = None if models is None else set(models)
    out = []
    for model, cols in wide_columns(store_dir, versions=versions, report=None).items():
        if wanted is not None and model not in wanted:
            continue
        for column, (col, measurement) in cols.items():
            state = states.get((model, measurement))
            source = LABEL_IMPORTED if state is not None and state.imported else LABEL_MEASURED
            family = margins.family(column) if margins is not None else None
            pairs = None
            if family is not None and family.paired:
                record = store.read(model, measurement)
                hook: Callable[..., Pairs | None] = resolve_lazy(family.paired)  # type: ignore[assignment]
                pairs = None if record is None else hook(store, record, column, data_dir)
            out.append(
                Measured(model, column, measurement, source, float(col.value), col.k, col.n, pairs)
            )
    return out


def compare_values(
    study: str,
    values: Sequence[Measured],
    published: Mapping[str, Mapping[str, float]],
    margins: Margins,
    *,
    alpha: float = ALPHA,
) -> list[Agreement]:
    """The agreement of each measured value with its published one.

    Values of models or columns the study does not publish are left out; the tests are Holm-adjusted
    over the models of each column."""
    confidence = 1 - 2 * alpha
    staged: list[tuple[Measured, float, Family | None, Difference | None]] = []
    for m in values:
        pub = published.get(m.model, {}).get(m.column)
        if pub is None or not isinstance(pub, int | float) or not math.isfinite(pub):
            continue
        family = margins.family(m.column)
        d = (
            None
            if family is None
            else difference(family, m.value, float(pub), m.k, m.n, m.pairs, confidence)
        )
        staged.append((m, float(pub), family, d))
    holm_of = holm_by_column([(m.column, d.p if d is not None else None) for m, _, _, d in staged])
    rows = []
    for i, (m, pub, family, d) in enumerate(staged):
        common = dict(
            study=study,
            model=m.model,
            column=m.column,
            measurement=m.measurement,
            source=m.source,
            ours=m.value,
            published=pub,
            k=m.k,
            n=m.n,
            confidence=confidence,
        )
        if family is None or d is None:
            where = margins.origin or "the study (no agreement file)"
            rows.append(
                Agreement(
                    **common,
                    status=INCONCLUSIVE,  # type: ignore[arg-type]
                    why=f"no implementation margin declared for {m.column} in {where}",
                )
            )
            continue
        status, why = decide(m.value - pub, d, holm_of[i], family.margin, alpha)
        rows.append(
            Agreement(
                **common,
                family=family.name,
                margin=family.margin,  # type: ignore[arg-type]
                stimuli="paired" if m.pairs is not None else family.stimuli,
                interval=d.interval,
                method=d.method,
                p=d.p,
                p_holm=holm_of[i],
                status=status,
                why=why,
            )
        )
    return rows


def holm_by_column(tests: Sequence[tuple[str, float | None]]) -> list[float | None]:
    """Holm-adjusted p per (column, p), adjusted over the tests of each column (None: no test)."""
    out: list[float | None] = [None] * len(tests)
    by_column: dict[str, list[int]] = {}
    for i, (column, p) in enumerate(tests):
        if p is not None:
            by_column.setdefault(column, []).append(i)
    for idx in by_column.values():
        for i, adj in zip(idx, holm([tests[i][1] for i in idx]), strict=True):  # type: ignore[misc]
            out[i] = adj
    return out


def study_agreement(
    study: Any,
    store_dir: str | os.PathLike[str],
    published: Mapping[str, Mapping[str, float]],
    *,
    versions: Mapping[str, str] | None,
    data_dir: Any = None,
    alpha: float = ALPHA,
    models: Iterable[str] | None = None,
) -> list[Agreement]:
    """The per-model agreement of the store's values with the study's published table."""
    margins = study_margins(study)
    values = measured_values(
        store_dir, versions=versions, margins=margins, data_dir=data_dir, models=models
    )
    return compare_values(study.name, values, published, margins, alpha=alpha)


@dataclass(frozen=True)
class InputAgreement:
    """The agreement of one claim's measured inputs: rows by status (``repro.claims.check``)."""

    rows: tuple[Agreement, ...] = ()
    unmatched: int = 0  # measured inputs with no agreement row (the study does not publish them)
    by_status: dict[str, list[Agreement]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, cells: Mapping[str, Mapping[str, str]], table: Mapping[tuple[str, str], Agreement]
    ) -> InputAgreement:
        """From a claim's provenance cells ``{column: {model: label}}`` and the context's rows."""
        rows, unmatched = [], 0
        for column, labels in cells.items():
            for model, label in labels.items():
                if label not in (LABEL_MEASURED, LABEL_IMPORTED):
                    continue
                row = table.get((model, column))
                if row is None:
                    unmatched += 1
                else:
                    rows.append(row)
        by: dict[str, list[Agreement]] = {}
        for r in rows:
            by.setdefault(r.status, []).append(r)
        return cls(tuple(rows), unmatched, by)

    def named(self, status: str, show: int = 5) -> str:
        """``tv_resnet50 (shape-bias +0.1503), ...`` for the rows of ``status`` (+N more)."""
        rows = self.by_status.get(status, [])
        text = ", ".join(f"{r.model} ({r.column} {r.diff:+.4g})" for r in rows[:show])
        return text + (f", +{len(rows) - show} more" if len(rows) > show else "")

    def counts(self) -> dict[str, int]:
        return {s: len(self.by_status.get(s, [])) for s in (AGREES, DIFFERS, INCONCLUSIVE)}

    def as_json(self) -> dict[str, Any]:
        return {
            **self.counts(),
            "differs_models": sorted({r.model for r in self.by_status.get(DIFFERS, [])}),
            "differs_inputs": [f"{r.model} x {r.column}" for r in self.by_status.get(DIFFERS, [])],
        }
