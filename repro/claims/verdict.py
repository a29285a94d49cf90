"""Claims: the vocabulary of what a claim check says and what it rests on.

Verdicts, evidence, flags and the three kinds of interval, and the functions that map a check to its
verdict. Every other module (checker, robustness, table, report, tests, CLI) uses these names.

Verdicts (the answer to "did the claim hold?"):

- ``reproduced``: the recomputed statistic is within the claim's tolerance;
- ``not_reproduced``: it is not (or an input model's measured value ``differs`` from its
  published value: ``repro.claims.agreement``);
- ``undefined``: the statistic, or a p or rho the claim's policy reads, is NaN (e.g. a
  correlation with a constant column): nothing could be compared;
- ``incomplete``: some input the claim needs measured is missing or its job failed
  (``repro.claims.provenance``): the claim was not checked on our measurements;
- ``mini``: some input comes from generated mini data (tiny random models on generated
  images): the pipeline ran, but nothing about the claim was learnt. Never ``reproduced``
  or ``not_reproduced``, whatever the numbers.

Only the first two can be a claim's recorded expectation: the others are never "as expected",
whatever the claim file records.

Evidence (the answer to "what does the verdict rest on?"), from the provenance of the claim's
input values (``repro.claims.provenance`` labels):

- ``re-analysis``: every input value is published; the verdict says whether the paper's own
  numbers support the claim ("consistent with the published data"), not whether the
  measurements reproduce;
- ``measured``: every input value the claim reads per model was measured by this suite (or
  imported with counts and provenance: ``python -m repro store import``);
- ``mixed``: k of N per-model input values measured, the rest published;
- ``mini``: some input from generated mini data (the verdict is then ``mini``).

The three kinds of interval, named once (``INTERVAL_KINDS``):

- ``across models``: resampling the models of the population (bootstrap over models): how the
  statistic would vary with another set of models;
- ``replication``: redrawing every model's counts around its values (parametric bootstrap over
  images / trials): how the statistic would vary on another sample of images or noise;
- ``measurement agreement``: the interval of the difference between one model's measured and
  published value (``repro.claims.agreement``): whether the measurement reproduces that model.

Per-model agreement (``repro.claims.agreement``), the answer to "does our measurement of this
model reproduce its published value?": ``agrees`` (the difference's interval lies inside the
column's implementation margin), ``differs`` (a Holm-adjusted test excludes 0 and the difference
lies outside the margin), ``inconclusive`` (neither).

Flags: short named facts attached to a verdict that qualify it (``Flag``): e.g. ``derived`` (the
expected value comes from the data under test), ``differs`` (names the input models whose
measured value differs from the published one: the claim is then not_reproduced),
``inconclusive`` (names the measured inputs whose agreement is inconclusive: neither a pass nor
a fail), ``quirk`` (the verdict depends on a quirk of the published numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not_reproduced"
UNDEFINED = "undefined"
INCOMPLETE = "incomplete"
MINI = "mini"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, UNDEFINED, INCOMPLETE, MINI)
JUDGED = frozenset({REPRODUCED, NOT_REPRODUCED})  # a comparison was made on real inputs
NOT_CHECKED = frozenset({UNDEFINED, INCOMPLETE, MINI})  # no comparison that is evidence was made

# evidence kinds
REANALYSIS = "re-analysis"
MEASURED = "measured"
MIXED = "mixed"
MINI_EVIDENCE = "mini"
EVIDENCE_KINDS = (REANALYSIS, MIXED, MEASURED, MINI_EVIDENCE)

# the provenance labels an evidence count reads (repro.claims.provenance uses the same strings)
LABEL_PUBLISHED, LABEL_MEASURED, LABEL_IMPORTED, LABEL_MINI = (
    "published",
    "measured",
    "imported",
    "mini",
)
MEASURED_LABELS = frozenset({LABEL_MEASURED, LABEL_IMPORTED})  # count as measured evidence

# the three kinds of interval
ACROSS_MODELS = "across models"
REPLICATION = "replication"
AGREEMENT = "measurement agreement"
INTERVAL_KINDS = (ACROSS_MODELS, REPLICATION, AGREEMENT)

# per-model agreement (repro.claims.agreement)
AGREES = "agrees"
DIFFERS = "differs"
INCONCLUSIVE = "inconclusive"
AGREEMENT_STATUSES = (AGREES, DIFFERS, INCONCLUSIVE)

# flags
DERIVED = "derived"
# DIFFERS (above): input models whose measured value differs from the published one
INCONCLUSIVE_INPUTS = INCONCLUSIVE  # measured inputs whose agreement is inconclusive
QUIRK = "quirk"


@dataclass(frozen=True)
class Evidence:
    """What a verdict rests on: its kind and how many input values were measured.

    Per model value, how many of the claim's input values were measured (``measured`` of
    ``total``)."""

    kind: str
    measured: int = 0
    total: int = 0

    def __post_init__(self) -> None:
        if self.kind not in EVIDENCE_KINDS:
            raise ValueError(
                f"unknown evidence kind {self.kind!r} (known: {', '.join(EVIDENCE_KINDS)})"
            )

    def text(self) -> str:
        """``re-analysis``, ``measured (48 of 48)``, ``mixed (3 of 48 measured)``, ``mini``."""
        if self.kind == MEASURED:
            return f"measured ({self.measured} of {self.total})"
        if self.kind == MIXED:
            return f"mixed ({self.measured} of {self.total} measured)"
        return self.kind

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "measured": self.measured, "total": self.total}


def evidence_of(counts: Mapping[str, int]) -> Evidence:
    """The evidence of a claim from its provenance counts ``{label: number of input values}``.

    Any mini value makes it ``mini``; no measured value ``re-analysis``; every value measured
    ``measured``; else ``mixed``. Missing and failed values count in the total (they are inputs the
    claim needed and did not get), never as measured."""
    total = sum(int(n) for n in counts.values())
    measured = sum(int(n) for label, n in counts.items() if label in MEASURED_LABELS)
    if counts.get(LABEL_MINI, 0):
        return Evidence(MINI_EVIDENCE, measured, total)
    if measured == 0:
        return Evidence(REANALYSIS, 0, total)
    if measured == total:
        return Evidence(MEASURED, measured, total)
    return Evidence(MIXED, measured, total)


@dataclass(frozen=True)
class Flag:
    """A named fact qualifying a verdict (``derived``, ``differs``, ``quirk``, ...).

    It carries the details a reader needs (e.g. the models that differ)."""

    name: str
    detail: str = ""

    def text(self) -> str:
        return f"{self.name}: {self.detail}" if self.detail else self.name


class _Checked(Protocol):
    @property
    def passed(self) -> bool: ...

    @property
    def status(self) -> str | None: ...


_STATUSES = frozenset({UNDEFINED, INCOMPLETE})  # what a Check's status can say


def verdict_of(check: _Checked, evidence: Evidence | None = None) -> str:
    """The verdict of a ``repro.claims.tolerance.Check`` on inputs of ``evidence``.

    Its status (undefined, incomplete) when it has one; ``mini`` when the evidence is mini; else
    reproduced or not_reproduced by ``passed``."""
    if check.status is not None:
        if check.status not in _STATUSES:
            raise ValueError(
                f"unknown check status {check.status!r} (known: {', '.join(sorted(_STATUSES))})"
            )
        return check.status
    if evidence is not None and evidence.kind == MINI_EVIDENCE:
        return MINI
    return REPRODUCED if check.passed else NOT_REPRODUCED


def verdict_phrase(verdict: str, evidence: Evidence | None) -> str:
    """The verdict in words that keep re-analysis and reproduction apart.

    "consistent with the published data" (re-analysis) vs "reproduced by measurement" (measured or
    mixed)."""
    kind = REANALYSIS if evidence is None else evidence.kind
    if verdict == MINI or kind == MINI_EVIDENCE:
        return "mini run: not evidence"
    if verdict == UNDEFINED:
        return "undefined: nothing could be compared"
    if verdict == INCOMPLETE:
        return "incomplete: inputs it needs measured are missing"
    if kind == REANALYSIS:
        return (
            "consistent with the published data"
            if verdict == REPRODUCED
            else "not supported by the published data"
        )
    return "reproduced by measurement" if verdict == REPRODUCED else "not reproduced by measurement"
