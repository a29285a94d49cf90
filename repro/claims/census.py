"""The census of a study: every quantitative or directional statement of its paper.

Each statement comes with what the suite does with it. A study's ``census`` file (its study.toml
names it, e.g. ``repro/studies/<study>/census.toml``) holds::

    paper = "arXiv 2211.01866v1"                # the text the statements were read from
    read = "abstract and introduction (...)"    # what of it was read, and how

    [tables.spillover]                          # a gated table a statement may rest on
    what = "rho of every sweep x factor"
    test = "tests/data/test_imagenetx_claims.py"   # the test file that checks it

    [[statement]]
    id = "colorjitter_pose_worse"               # unique in the file
    statement = "Colour jitter hurts robustness to pose"
    quote = "hurts robustness to pose"          # optional: at most a short phrase of the paper
    where = "abstract; Sec. 5"                  # section / figure / table
    status = "claim"                # claim | table | open | not testable here | out of scope
    claims = ["imagenetx_colorjitter_spillover_pose"]   # status claim: ids of the study's claims
    table = "spillover"                         # status table: a key of [tables]
    reason = "..."                              # why (required unless status is claim or table)
    see = ["subramanian2023:shape_bias_variance"]   # the same quantity in another study's census

Statuses: ``claim`` (gated by the named claims of the study's claim file), ``table`` (covered by a
gated table: a cell of it, named in ``[tables]``), ``open`` (testable with what the suite has, not
yet gated: ``reason`` says what is missing), ``not testable here`` (``reason``: data not
published, needs a measurement the suite cannot make, ...), ``out of scope`` (``reason``: not a
claim about models, a statement of method, ...). The testable statements are the ``claim``,
``table`` and ``open`` ones.

A file that does not parse, an unknown key, status or claim id, a table that is not declared, a
duplicate id is a ConfigError of one line naming the file, the statement and the field; a ``see``
that names no statement of another study's census is one too (``load_censuses``).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from repro.base.errors import ConfigError
from repro.base.schema import Expect, check, invalid, table
from repro.base.study import Study
from repro.base.textfile import read_toml

STATUSES = ("claim", "table", "open", "not testable here", "out of scope")
GATED = ("claim", "table")
TESTABLE = ("claim", "table", "open")

TEXT = "{where}: `{key}` = {value!r:.80}, expected a non-empty string"
MISSING = "{where}: missing field(s) {missing}"
STATUS = "{where}: status = {value!r:.80}, expected one of " + ", ".join(repr(s) for s in STATUSES)
NAMES = "{where}: `{key}` = {value!r:.80}, expected a list of strings"
Text = Annotated[str, Field(pattern=r"\S"), Expect(TEXT, MISSING)]
QUOTE_MAX = 120  # characters: a short phrase, never a passage


def _statement_where(parent: str, key: Any, data: Any, n: int | None) -> str:
    named = f" ({data['id']!r})" if isinstance(data, Mapping) and "id" in data else ""
    return f"{parent}: statement #{n}{named}"


@table
class CensusTable:
    """A gated table statements may rest on (``[tables.<name>]``)."""

    WHERE: ClassVar[str] = "{parent}: [tables.{key}]"
    INVALID: ClassVar[str] = "{where}: expected a table with `what` and `test`"
    what: Text
    test: Text

    @field_validator("test")
    @classmethod
    def _test_exists(cls, test: str, info: ValidationInfo) -> str:
        root = (info.context or {}).get("root")
        if root is not None and not (Path(root) / test.split("::")[0]).is_file():
            raise invalid("{where}: test = {value!r}: no such test file in the checkout")
        return test


@table(kw_only=True)
class Statement:
    """One ``[[statement]]`` of a census file (the module docstring lists its fields)."""

    WHERE: ClassVar[Any] = _statement_where
    INVALID: ClassVar[str] = "{where}: expected a [[statement]] table, got {value!r:.80}"
    id: Text
    statement: Text
    quote: Annotated[
        str,
        Field(pattern=r"\S", max_length=QUOTE_MAX),
        Expect(
            f"{{where}}: quote = {{value!r:.60}}: expected a short phrase of the paper (a "
            f"non-empty string of at most {QUOTE_MAX} characters)",
        ),
    ] = ""  # empty: the statement was not read in the paper's own words (``read`` says why)
    where: Text
    status: Annotated[
        Literal["claim", "table", "open", "not testable here", "out of scope"],
        Expect(STATUS, MISSING),
    ]
    claims: Annotated[tuple[str, ...], Expect(NAMES)] = ()
    table: Annotated[str, Expect(TEXT)] = ""
    reason: Annotated[str, Expect(TEXT)] = ""
    see: Annotated[tuple[str, ...], Expect(NAMES)] = ()

    @field_validator("claims")
    @classmethod
    def _known_claims(cls, claims: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        known = (info.context or {}).get("claim_ids")
        if known is None:
            return claims
        for cid in claims:
            if cid not in known:
                from repro.base.schema import did_you_mean

                raise invalid(
                    "{where}: claims: unknown claim id {cid!r}{dym} (the claims of {claims_file})",
                    cid=cid,
                    dym=did_you_mean(cid, known),
                    claims_file=(info.context or {}).get("claims_file", "the study's claim file"),
                )
        return claims

    @field_validator("see")
    @classmethod
    def _see_form(cls, see: tuple[str, ...]) -> tuple[str, ...]:
        for ref in see:
            study, _, sid = ref.partition(":")
            if not study or not sid:
                raise invalid(
                    "{where}: see: {ref!r}, expected 'study:statement-id' (a statement of "
                    "another study's census)",
                    ref=ref,
                )
        return see

    @model_validator(mode="after")
    def _status_fields(self) -> Statement:
        if self.status == "claim" and not self.claims:
            raise invalid("{where}: status 'claim' needs `claims` (the ids of the gating claims)")
        if self.status != "claim" and self.claims:
            raise invalid(
                f"{{where}}: claims given, but status is {self.status!r} (claims belong to "
                "status 'claim')"
            )
        if self.status == "table" and not self.table:
            raise invalid("{where}: status 'table' needs `table` (a key of [tables])")
        if self.status not in GATED and not self.reason.strip():
            raise invalid(f"{{where}}: status {self.status!r} needs a `reason` (why)")
        return self


@table
class CensusFile:
    """A census file: what was read, the gated tables, the statements."""

    paper: Text
    read: Text
    statement: Annotated[
        tuple[Statement, ...], Field(min_length=1), Expect(top="{where}: no [[statement]] tables")
    ]
    tables: Annotated[
        dict[str, CensusTable],
        Expect(top="{where}: [tables] must be a table of [tables.<name>] tables"),
    ] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> CensusFile:
        seen: set[str] = set()
        for n, s in enumerate(self.statement, 1):
            where = f"statement #{n} ({s.id!r})"
            if s.id in seen:
                raise invalid(f"{{where}}: {where}: id {s.id!r} appears twice")
            seen.add(s.id)
            if s.status == "table" and s.table not in self.tables:
                known = ", ".join(sorted(self.tables)) or "none declared"
                raise invalid(
                    f"{{where}}: {where}: table {s.table!r} is not a key of [tables] (known: "
                    f"{known})"
                )
        return self


@dataclass(frozen=True)
class Census:
    """A study's census, read and checked."""

    study: str
    origin: Path
    file: CensusFile

    @property
    def statements(self) -> tuple[Statement, ...]:
        return self.file.statement

    def counts(self) -> dict[str, int]:
        """Statements per status, every status listed (0 where none)."""
        c = Counter(s.status for s in self.statements)
        return {status: c.get(status, 0) for status in STATUSES}

    @property
    def gated(self) -> int:
        return sum(s.status in GATED for s in self.statements)

    @property
    def testable(self) -> int:
        return sum(s.status in TESTABLE for s in self.statements)

    def gated_claims(self) -> set[str]:
        return {cid for s in self.statements for cid in s.claims}


def read_census(
    path: str | os.PathLike[str],
    study: str,
    claim_ids: Sequence[str] | None = None,
    *,
    claims_file: str = "",
    root: str | os.PathLike[str] | None = None,
) -> Census:
    """One census file, read and checked.

    ``claim_ids``: the study's claims every ``claims`` entry must name; ``root``: the checkout every
    ``[tables]`` test path must exist in."""
    path = Path(path)
    raw = read_toml(path, "a census of [[statement]] tables")
    context: dict[str, Any] = {}
    if claims_file:  # else an unknown id is "(the claims of the study's claim file)"
        context["claims_file"] = claims_file
    if claim_ids is not None:
        context["claim_ids"] = set(claim_ids)
    if root is not None:
        context["root"] = str(root)
    return Census(study, path, check(CensusFile, raw, str(path), context=context))


def study_census(study: Study) -> Census | None:
    """The study's census (None when its study.toml names none), checked against its claims."""
    from repro.base.settings import checkout_dir
    from repro.claims.loader import study_claims

    if study.census is None:
        return None
    ids = [c.id for c in study_claims(study)]
    return read_census(
        study.census, study.name, ids, claims_file=str(study.claims), root=checkout_dir()
    )


def load_censuses(studies: Sequence[Study]) -> list[Census]:
    """The censuses of the given studies (those that have one).

    Their ``see`` references are checked against every discovered study's census."""
    from repro.base.study import select

    chosen = [c for c in (study_census(s) for s in studies) if c is not None]
    wanted = {ref.partition(":")[0] for c in chosen for s in c.statements for ref in s.see}
    by_name = {c.study: c for c in chosen}
    for s in select():
        if s.name in wanted and s.name not in by_name:
            other = study_census(s)
            if other is not None:
                by_name[s.name] = other
    for c in chosen:
        for n, s in enumerate(c.statements, 1):
            for ref in s.see:
                name, _, sid = ref.partition(":")
                other = by_name.get(name)
                if other is None or sid not in {t.id for t in other.statements}:
                    why = (
                        f"no study {name!r} with a census"
                        if other is None
                        else f"no statement {sid!r} in {other.origin}"
                    )
                    raise ConfigError(f"{c.origin}: statement #{n} ({s.id!r}): see: {ref!r}: {why}")
    return chosen


def gated_summary(census: Census) -> str:
    """ "N of M statements gated", with the testable share.

    The report's summary line for one study."""
    pct = f"{100.0 * census.gated / census.testable:.0f}%" if census.testable else "-"
    return (
        f"{census.gated} of {len(census.statements)} statements gated "
        f"({census.gated} of {census.testable} testable, {pct})"
    )


def format_census(censuses: Sequence[Census]) -> str:
    """The census as text.

    Per study its statements (id, status, what gates it or why not, where in the paper), then the
    counts per status."""
    out: list[str] = []
    for c in censuses:
        out.append(f"{c.study} ({c.file.paper}; {c.origin.name})")
        width = max(len(s.id) for s in c.statements)
        for s in c.statements:
            if s.status == "claim":
                how = ", ".join(s.claims)
            elif s.status == "table":
                how = f"table {s.table}"
            else:
                how = s.reason
            see = f" [see {', '.join(s.see)}]" if s.see else ""
            out.append(f"  {s.id:<{width}}  {s.status:<17}  {how} ({s.where}){see}")
        counts = ", ".join(f"{k} {v}" for k, v in c.counts().items())
        out.append(f"  {gated_summary(c)}; by status: {counts}")
        out.append("")
    total = sum(len(c.statements) for c in censuses)
    gated = sum(c.gated for c in censuses)
    testable = sum(c.testable for c in censuses)
    out.append(
        f"{gated} of {total} statements gated over {len(censuses)} "
        f"{'study' if len(censuses) == 1 else 'studies'} "
        f"({gated} of {testable} testable)"
    )
    return "\n".join(out)


def census_document(censuses: Sequence[Census]) -> dict[str, Any]:
    """The census as JSON-ready data (``claims --census --json``)."""
    return {
        c.study: {
            "file": str(c.origin),
            "paper": c.file.paper,
            "read": c.file.read,
            "counts": c.counts(),
            "gated": c.gated,
            "testable": c.testable,
            "statements": len(c.statements),
            "summary": gated_summary(c),
            "tables": {k: {"what": t.what, "test": t.test} for k, t in c.file.tables.items()},
            "entries": [
                {
                    "id": s.id,
                    "statement": s.statement,
                    "quote": s.quote,
                    "where": s.where,
                    "status": s.status,
                    "claims": list(s.claims),
                    "table": s.table,
                    "reason": s.reason,
                    "see": list(s.see),
                }
                for s in c.statements
            ],
        }
        for c in censuses
    }
