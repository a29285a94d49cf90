"""Base, the JSON documents the commands write for other programs, declared as pydantic models.

The documents of ``place --json``, ``compare --json`` and ``claims --json``, declared as pydantic
models and published as JSON Schema (``repro/schemas/<name>-<version>.json``, written from these
models; docs/json-outputs.md).

Every document carries ``schema_version``: it goes up when a field is removed, renamed or changes
its meaning; a field added to a document also goes up, since the models below forbid keys they do
not declare (a reader learns of a new field from a new version, never from a silent extra key).
Parts that are tables of their own (a claim's statements, its replication, the analysis tables)
are declared as objects only, and documented where they are written.

``check(name, doc)`` validates a parsed document and raises ``ConfigError`` with one line that
names the document, the field and what was expected; ``json_schema(name)`` is the schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel, ValidationError

from repro.base.errors import ConfigError

#: the version each command writes today
VERSIONS = {"place": 1, "compare": 2, "claims": 2}  # compare 2: rows[].chance; claims 2: strength

Number = float | int
Interval = tuple[Number, Number]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Open(BaseModel):
    """A sub-object declared by its key fields only.

    Its other keys are documented where it is written."""

    model_config = ConfigDict(extra="allow")


# ----- place --json: a list, one document per study ------------------------------------------


class PlaceRank(_Doc):
    rank: int
    tie_worst: int
    best: int
    worst: int
    percentile: float
    of: int  # the N of "rank of N": the population's defined values and this one
    population: int
    undefined: int
    at_chance: bool | None = None  # in a placed row: the value rests on decisions at chance


class PlaceChance(_Open):
    k: int
    n: int
    chance: float
    p: float
    at_chance: bool


class PlacedValue(_Doc):
    column: str
    value: Number | None
    evidence: str  # measured | external
    interval: Interval | None
    k: int | None
    n: int | None
    measurement: str | None
    protocol: str | None
    source: str | None
    unit: str | None = None  # an external value's stated unit (percent, fraction, ...)


class PlacedRow(PlacedValue):
    placement_column: str
    rank: PlaceRank | None
    chance: PlaceChance | None
    population: str
    note: str | None


class NotComparable(PlacedValue):
    reason: str


class PlaceReference(_Doc):
    label: str
    values: dict[str, Number | None]
    ranks: dict[str, PlaceRank | None]


class StudyPlacementDoc(_Doc):
    schema_version: Literal[1]
    study: str
    model: str
    inside: bool
    scope: str
    placed: list[PlacedRow]
    missing: list[str]
    not_used: dict[str, str]
    not_comparable: list[NotComparable]
    external: list[PlacedValue]
    references: list[PlaceReference]
    residuals: list[_Open]
    claims_n_plus_1: list[_Open]


class PlaceDocument(RootModel[list[StudyPlacementDoc]]):
    """``place --json``: a list, each study's placement of the model."""


# ----- compare --json ------------------------------------------------------------------------


class CompareRow(_Doc):
    model: str
    measurement: str
    column: str
    ours: Number | None
    k: int | None
    n: int | None
    interval: Interval | None
    published: Number | None
    diff: Number | None
    status: str
    variant: str
    note: str
    mini: bool
    chance: str | None  # "AT CHANCE (...)": the value rests on decisions at chance (version 2)


class Agreement(_Open):
    study: str
    model: str
    column: str
    ours: Number | None
    published: Number | None
    diff: Number | None
    margin: Number | None
    status: Literal["agrees", "differs", "inconclusive"]
    why: str


class Differs(_Doc):
    model: str
    column: str
    diff: Number


class CompareDocument(_Doc):
    """``compare --json`` (not ``compare --independent``, which writes its own table)."""

    schema_version: Literal[2]
    store: str
    rows: list[CompareRow]
    agreement: list[Agreement]
    agreement_counts: dict[str, int]
    differs: list[Differs]


# ----- claims --json -------------------------------------------------------------------------


class Evidence(_Open):
    kind: str  # re-analysis | measured | mixed | mini
    measured: int
    total: int


class Judged(_Doc):
    verdict: str
    p: Number | None  # under replication; None where not computed
    by: str | None = None  # what the finding is judged by (the digits: absent)
    paper_reading: str | None = None  # a null's verdict under the paper's p >= 0.05 reading
    lenient_reading: str | None = None  # a range's verdict with bounds widened by rounding


class StrengthCheck(_Doc):
    check: str  # replication | leave-one-category-out | quirk corrections
    status: Literal["holds", "flips", "not available"]
    detail: str


class Strength(_Doc):
    grade: Literal[
        "not checked", "derived", "untestable", "not supported", "robust", "fragile", "unexamined"
    ]
    rule: str
    why: str
    checks: list[StrengthCheck]


class ClaimEntry(_Open):
    """One claim: its key fields.

    The statement fields (``estimand``, ``quirk_variants``, ...) are documented in
    docs/claims.md."""

    id: str
    published: Number | None
    measured: Number | None
    interval: Interval | None
    verdict: str
    evidence: Evidence
    phrase: str
    flags: list[_Open]
    agreement: Any
    provenance: dict[str, int] | None
    p_verdict: Number | None
    replication: _Open | None
    finding: Judged  # the verdict of what the claim states (repro.diagnostics.strength)
    digits: Judged | None  # the printed digits' verdict, where the claim judges digits
    strength: Strength


class ClaimsDocument(_Doc):
    """``claims --json`` (``--census --json`` writes the census, not this)."""

    schema_version: Literal[2]
    claims: list[ClaimEntry]
    tables: dict[str, Any]
    power: dict[str, Any] | None = None  # with --power


MODELS: dict[str, type[BaseModel]] = {
    "place": PlaceDocument,
    "compare": CompareDocument,
    "claims": ClaimsDocument,
}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of ``name``'s document."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"repro/{name}-{VERSIONS[name]}.json",
        "title": f"python -m repro {name} --json, schema_version {VERSIONS[name]}",
        **MODELS[name].model_json_schema(),
    }


def _where(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc) or "(document)"


def check(name: str, doc: Any, origin: str = "document") -> Any:
    """Validate ``doc`` (parsed JSON) as ``name``'s document; returns the pydantic model(s).

    Otherwise raises ``ConfigError`` naming ``origin``, the field and what was expected."""
    try:  # strict, on the JSON text: "48" is not the integer 48
        return MODELS[name].model_validate_json(json.dumps(doc), strict=True)
    except ValidationError as exc:
        err = exc.errors()[0]
        version = f"{name} --json schema_version {VERSIONS[name]}"
        raise ConfigError(
            f"{origin}: field {_where(err['loc'])}: {err['msg']} ({version}; got "
            f"{_short(err.get('input'))})"
        ) from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"


def schema_file(name: str) -> Path:
    """The published JSON Schema of ``name``'s current version (``repro/schemas/``)."""
    return SCHEMA_DIR / f"{name}-{VERSIONS[name]}.json"


def write_schemas() -> list[Path]:
    """Write every document's JSON Schema from the models above.

    Run as ``python -c "from repro.base.output_schemas import write_schemas; write_schemas()"``;
    a test checks that the files are current."""
    SCHEMA_DIR.mkdir(exist_ok=True)
    out = []
    for name in MODELS:
        path = schema_file(name)
        path.write_text(json.dumps(json_schema(name), indent=1, sort_keys=True) + "\n")
        out.append(path)
    return out
