"""The study as the unit of extension, and the discovery of study folders.

One folder per published study, described by its ``study.toml``.

A study folder holds its ``study.toml``, its claim file, its analysis definition (optional),
the statistics only it uses, its report sections and the readers of its own published files.
The core never names a study: it receives ``Study`` objects and reaches a study's code only
through the lazy ``"module:attr"`` references its ``study.toml`` names.

``study.toml``: every field, with what it is for, in docs/howto/add-study.md ("Every field of
study.toml"); ``read_study`` checks them and names the file and the field of a wrong one.

Discovery: the built-in ``repro/studies/*/study.toml``, then every folder named by
``REPRO_STUDY_PATH`` (``os.pathsep``-separated) or ``[studies] paths`` in repro.toml; each of
those folders is a study folder itself (it holds a ``study.toml``) or holds study folders.
Names are unique; the order is stable (built-in studies by name, then the configured ones).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from repro.base.errors import ConfigError
from repro.base.registry import Registry
from repro.base.schema import INTERNAL, Expect, Int, check, invalid, keyed, rule, table
from repro.base.settings import current
from repro.base.textfile import read_toml

STUDY_FILE = "study.toml"
BUILTIN_DIR = Path(__file__).resolve().parents[1] / "studies"
HEADER_FIELDS = ("inputs", "analysis", "confidence", "interval_method")

Text = Annotated[
    str, Field(pattern=r"\S"), Expect("{where}: field {key!r} must be a non-empty string")
]
Names = Annotated[tuple[str, ...], Expect("{where}: field {key!r} must be a list of strings")]
LAZY = "is not a lazy reference 'module:attribute'"


def _lazy(ref: str) -> bool:
    return ":" in ref


@table
class Source:
    """Where a study's table (or categories) comes from.

    Exactly one of ``published`` (a pinned file of the data directory), ``file``
    (in the study folder), ``loader`` (``"module:function"``). Read like the mapping
    ``{kind: value}``."""

    WHERE: ClassVar[str] = "{parent}: [{key}]"
    INVALID: ClassVar[str] = "{where}: expected a table with one of published, file, loader"
    UNKNOWN: ClassVar[str] = (
        "{where}: expected exactly one of published, file, loader (unknown: {unknown})"
    )
    published: (
        Annotated[str, Field(min_length=1), Expect("{where}: {key} must be a path")] | None
    ) = None
    file: Annotated[str, Field(min_length=1), Expect("{where}: {key} must be a path")] | None = None
    loader: (
        Annotated[
            str,
            rule(_lazy, "{where}: loader: {value!r} " + LAZY),
            Expect("{where}: loader: {value!r} " + LAZY),
        ]
        | None
    ) = None

    @model_validator(mode="after")
    def _one(self, info: ValidationInfo) -> Source:
        if (
            info.context and len(self._given()) != 1
        ):  # in a file: exactly one (empty: none given, in code)
            raise invalid("{where}: expected exactly one of published, file, loader")
        return self

    def _given(self) -> dict[str, str]:
        return {
            k: v for k in ("published", "file", "loader") if (v := getattr(self, k)) is not None
        }

    def __contains__(self, kind: object) -> bool:
        return kind in self._given()

    def __getitem__(self, kind: str) -> str:
        return self._given()[kind]

    def items(self) -> Any:
        return self._given().items()


@table
class Report:
    """``[report]``: the report's header, the study's sections and its inputs."""

    WHERE: ClassVar[str] = "{parent}: [report]"
    INVALID: ClassVar[str] = "{where} must be a table"
    header: Text = ""
    sections: Names = ()
    inputs: Names = ()

    @field_validator("header")
    @classmethod
    def _placeholders(cls, header: str) -> str:
        try:
            header.format(**dict.fromkeys(HEADER_FIELDS, ""))
        except (KeyError, IndexError, ValueError) as exc:
            raise invalid(
                "{where} header: unknown placeholder {problem} (known: {fields})",
                problem=str(exc),
                fields=", ".join(HEADER_FIELDS),
            ) from None
        return header

    @field_validator("sections")
    @classmethod
    def _refs(cls, sections: tuple[str, ...]) -> tuple[str, ...]:
        for ref in sections:
            if not _lazy(ref):
                raise invalid("{where} sections: {ref!r} " + LAZY, ref=ref)
        return sections


def _ref(key: str) -> Any:
    """A lazy reference field (``"module:function"``) whose message names ``{where} <key>``."""
    return Annotated[
        str,
        rule(_lazy, "{where} " + key + ": {value!r} " + LAZY),
        Expect("{where} " + key + ": {value!r} " + LAZY),
    ]


@table
class Quirks:
    """``[quirks]``: the detector of the published numbers' quirks, and the corrected variants.

    The detector of the quirks of the study's published numbers, and the quirk-corrected variants
    of its data (``repro.diagnostics.quirk_corrections``: which verdicts survive them)."""

    WHERE: ClassVar[str] = "{parent}: [quirks]"
    INVALID: ClassVar[str] = '{where}: expected a table with detect = "module:function"'
    detect: _ref("detect") | None = None  # (ModelTable, population) -> list of quirks
    variants: _ref("variants") | None = (
        None  # (ClaimContext) -> quirk-corrected variants of the data
    )


STAND_INS = "{where} stand_ins must map tiny model names to study model names"


@table
class Mini:
    """``[mini]``: the study models a mini run's tiny models stand in for."""

    WHERE: ClassVar[str] = "{parent}: [mini]"
    INVALID: ClassVar[str] = STAND_INS
    stand_ins: Annotated[dict[str, str], Expect(STAND_INS)] = Field(default_factory=dict)


PIN_MISSING = "{where}: missing field(s) {failed} (strings)"


@table
class Pin:
    """One ``[[published]]`` pin: a published file of the data directory.

    Its path in the data directory, where it is downloaded from, its sha256 and its source
    (repository, commit, path, license)."""

    WHERE: ClassVar[str] = "{parent}: [[published]] #{n}"
    INVALID: ClassVar[str] = "{where}: expected a table"
    path: Annotated[str, Expect(PIN_MISSING)]  # relative to the data directory
    url: Annotated[str, Expect(PIN_MISSING)]
    sha256: Annotated[str, Expect(PIN_MISSING)]
    repository: Annotated[str, Expect(PIN_MISSING)]
    commit: Annotated[str, Expect(PIN_MISSING)]
    source_path: Annotated[str, Expect(PIN_MISSING)]
    license: Annotated[str, Expect(PIN_MISSING)]


NON_EMPTY = "{where}: 'models' and 'measurements' must be non-empty lists of names"


PART = "{where}: 'models' and 'measurements' must be non-empty lists of names"


@table
class SessionPart:
    """A session's ``reproduce = { models = [...], measurements = [...] }``.

    The part of it ``python -m repro reproduce`` measures when no dataset is configured."""

    WHERE: ClassVar[str] = "{parent} reproduce"
    INVALID: ClassVar[str] = "{where}: expected a table {{ models = [...], measurements = [...] }}"
    UNKNOWN: ClassVar[str] = "{where}: unknown field(s) {unknown} (known: {known})"
    models: Annotated[Names, rule(bool, PART), Expect(missing=PART)]
    measurements: Annotated[Names, rule(bool, PART), Expect(missing=PART)]

    def __iter__(self) -> Any:  # (models, measurements)
        return iter((self.models, self.measurements))


@table
class Session:
    """A named measuring session of a study (``[sessions.<name>]``): models x measurements."""

    WHERE: ClassVar[str] = "{parent}: [sessions.{key}]"
    INVALID: ClassVar[str] = "{where}: expected a table"
    UNKNOWN: ClassVar[str] = "{where}: unknown field(s) {unknown} (known: {known})"
    name: Annotated[str, INTERNAL]
    description: Text
    models: Annotated[Names, rule(bool, NON_EMPTY), Expect(missing=NON_EMPTY)]
    measurements: Annotated[Names, rule(bool, NON_EMPTY), Expect(missing=NON_EMPTY)]
    device: Text = "cpu"
    batch_size: Annotated[
        Int,
        rule(
            lambda n: n > 0, "{where}: field 'batch_size' must be a positive integer, got {value!r}"
        ),
        Expect("{where}: field 'batch_size' must be a positive integer, got {value!r}"),
    ] = 16
    # the part `python -m repro reproduce` measures when no dataset is configured (None: no part)
    reproduce: SessionPart | None = None

    @model_validator(mode="after")
    def _part_within(self) -> Session:
        if self.reproduce is not None:
            for field_name, part, whole in (
                ("models", self.reproduce.models, self.models),
                ("measurements", self.reproduce.measurements, self.measurements),
            ):
                extra = [x for x in part if x not in whole]
                if extra:
                    raise invalid(
                        "{where} reproduce: {field_name} {extra} not in the session's {field_name} "
                        "({whole})",
                        field_name=field_name,
                        extra=", ".join(extra),
                        whole=", ".join(whole),
                    )
        return self


# --------------------------------------------------------------------------- [placement]
POPULATION = (
    '{where}: population must be "table" (the study table over its analysis population) or a lazy '
    "reference 'module:function', got {value!r}"
)
Population = Annotated[
    str, rule(lambda v: v == "table" or ":" in v, POPULATION), Expect(POPULATION)
]
KNOWN_FIELDS = "{where}: unknown field(s) {unknown} (known: {known})"
TABLES = "{where} {key}: expected an array of tables ([[...]])"


@table(kw_only=True)
class PlacementColumn:
    """One column a model is placed on (``[[placement.columns]]``).

    The population's ``column``, the measured or external columns on the same scale (``values``)
    and its protocol."""

    WHERE: ClassVar[str] = "{origin}: [[placement.columns]] #{n}"
    INVALID: ClassVar[str] = "{where}: expected a table"
    UNKNOWN: ClassVar[str] = KNOWN_FIELDS
    column: Text
    label: Text  # default: the column
    values: Annotated[
        Names, rule(bool, "{where}: field 'values' must name at least one column")
    ]  # default [column]
    protocol: Text
    population: Population | Literal[""] = ""  # "" = the study's [placement] population
    interval: (
        Annotated[
            str,
            rule(_lazy, "{where}: interval: {value!r} " + LAZY),
            Expect("{where}: interval: {value!r} " + LAZY),
        ]
        | None
    ) = None  # (record, value) -> (lo, hi)
    larger: Text = ""  # what rank 1 means

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        """``label`` and ``values`` default to the column."""
        if isinstance(data, Mapping) and isinstance(data.get("column"), str):
            return {"label": data["column"], "values": [data["column"]], **data}
        return data


@table
class PlacementFit:
    """A bias-vs-category fit of the study (``[[placement.fits]]``): residuals of models inside."""

    WHERE: ClassVar[str] = "{origin}: [[placement.fits]] #{n}"
    INVALID: ClassVar[str] = "{where}: expected a table"
    UNKNOWN: ClassVar[str] = KNOWN_FIELDS
    bias: Text
    category: Text
    degree: Annotated[
        Int,
        rule(lambda d: 1 <= d <= 3, "{where}: field 'degree' must be 1, 2 or 3, got {value!r}"),
        Expect("{where}: field 'degree' must be 1, 2 or 3, got {value!r}"),
    ] = 1


@table
class NotComparable:
    """Measured columns (fnmatch patterns) that are not on the study's scale, and why."""

    WHERE: ClassVar[str] = "{origin}: [[placement.not_comparable]] #{n}"
    INVALID: ClassVar[str] = "{where}: expected a table"
    UNKNOWN: ClassVar[str] = KNOWN_FIELDS
    values: Annotated[
        Names,
        rule(bool, "{where}: field 'values' must name at least one column pattern"),
        Expect(missing="{where}: field 'values' must name at least one column pattern"),
    ]
    reason: Text


COLUMNS = (
    "{where}: needs at least one [[placement.columns]] table (the columns on the study's scale)"
)


@table
class Placement:
    """A study's ``[placement]``: its population and the columns on its own scale."""

    WHERE: ClassVar[str] = "{parent}: [placement]"
    INVALID: ClassVar[str] = "{where}: expected a table"
    UNKNOWN: ClassVar[str] = KNOWN_FIELDS
    population: Population = "table"  # "table" or "module:function"
    population_label: Text = ""
    inside: Names = ()  # zoo architectures ("timm:resnet50") inside the population
    outside: Text = ""
    references: (
        Annotated[
            str,
            rule(_lazy, "{where}: references: {value!r} " + LAZY),
            Expect("{where}: references: {value!r} " + LAZY),
        ]
        | None
    ) = None
    columns: Annotated[
        tuple[PlacementColumn, ...],
        rule(bool, COLUMNS),
        Field(validate_default=True),
        Expect(missing=COLUMNS, top=TABLES),
    ] = ()
    fits: Annotated[tuple[PlacementFit, ...], Expect(top=TABLES)] = ()
    not_comparable: Annotated[tuple[NotComparable, ...], Expect(top=TABLES)] = ()

    @model_validator(mode="after")
    def _distinct(self) -> Placement:
        seen = [c.column for c in self.columns]
        if len(set(seen)) != len(seen):
            raise invalid(
                "{where}: column names repeat ({names})",
                names=", ".join(sorted({c for c in seen if seen.count(c) > 1})),
            )
        return self


def _existing(kind: str, hint: str) -> Any:
    """A field validator: a file name of the study folder, as its path.

    The folder is ``info.context['folder']``."""

    def resolve(cls: Any, value: Any, info: ValidationInfo) -> Any:
        folder = (info.context or {}).get("folder")
        if folder is None or isinstance(value, Path):
            return value
        if not isinstance(value, str) or not value.strip():
            raise invalid("{where}: field {key!r} must be a non-empty string")
        path = Path(folder) / value
        if not path.is_file():
            raise invalid("{where}: {kind} file {path} not found" + hint, kind=kind, path=path)
        return path

    return resolve


@table
class Independent:
    """``[independent]``: the study's independent sources, other labs' measurements of its models.

    ``repro.published.independent`` reads them: their declaration files and the study's own
    protocol per column, both in the study folder."""

    WHERE: ClassVar[str] = "{parent}: [independent]"
    INVALID: ClassVar[str] = "{where}: expected a table with sources and protocols"
    UNKNOWN: ClassVar[str] = "{where}: unknown field(s) {unknown} (known: {known})"
    sources: Names = ()
    protocols: str = ""

    @model_validator(mode="after")
    def _files(self, info: ValidationInfo) -> Independent:
        folder = (info.context or {}).get("folder")
        if folder is not None:
            for name in (*self.sources, *([self.protocols] if self.protocols else [])):
                if not (Path(folder) / name).is_file():
                    raise invalid("{where}: file {path} not found", path=Path(folder) / name)
        return self


@table
class Study:
    """One study, as its ``study.toml`` describes it (see the module docstring).

    Every table and key of the file is a field here; ``folder`` is the folder that holds it."""

    WHERE: ClassVar[str] = "{parent}"
    FIRST: ClassVar[tuple[str, ...]] = (
        "claims",
        "table",
    )  # an empty study.toml: 'claims' is reported
    name: Text
    title: Text
    citation: Text
    folder: Annotated[Path, INTERNAL]
    claims: Annotated[Path, Expect("{where}: field {key!r} must be a non-empty string")]
    analysis: (
        Annotated[Path, Expect("{where}: field {key!r} must be a non-empty string")] | None
    ) = None
    # the count model of its columns (repro.diagnostics.counts)
    replication: (
        Annotated[Path, Expect("{where}: field {key!r} must be a non-empty string")] | None
    ) = None
    # implementation margins per column family (repro.claims.agreement)
    agreement: (
        Annotated[Path, Expect("{where}: field {key!r} must be a non-empty string")] | None
    ) = None
    # every statement of the paper and its status (repro.claims.census)
    census: Annotated[Path, Expect("{where}: field {key!r} must be a non-empty string")] | None = (
        None
    )
    table: Source = Field(default_factory=Source)  # required in a study.toml
    categories: Source = Field(default_factory=Source)  # empty: the study has no model categories
    measurements: Names = ()
    models: Names | None = None
    report: Report = Field(default_factory=Report)
    quirks: Quirks | None = None
    mini: Mini = Field(default_factory=Mini)
    published: Annotated[
        tuple[Pin, ...], Expect(top="{where}: [[published]] must be an array of tables")
    ] = ()
    url: Text = ""  # the paper (claims link their source to it)
    sessions: Annotated[
        dict[str, Session],
        keyed("name"),
        Expect(top="{where}: [sessions] must be a table of [sessions.<name>] tables"),
    ] = Field(default_factory=dict)  # named measuring sessions
    placement: Placement | None = None  # where models that are not study models land ([placement])
    # other labs' measurements of its models ([independent]; repro.published.independent)
    independent: Independent = Field(default_factory=Independent)

    _claims = field_validator("claims", mode="before")(
        classmethod(_existing("claims", "; expected 'claims' to name a file in the study folder"))
    )
    _analysis = field_validator("analysis", mode="before")(classmethod(_existing("analysis", "")))
    _replication = field_validator("replication", mode="before")(
        classmethod(_existing("replication", ""))
    )
    _census = field_validator("census", mode="before")(
        classmethod(
            _existing(
                "census",
                "; expected 'census' to name a file of [[statement]] tables in the study folder",
            )
        )
    )
    _agreement = field_validator("agreement", mode="before")(
        classmethod(
            _existing(
                "agreement",
                "; expected 'agreement' to name a file of [[family]] margins in the study folder",
            )
        )
    )

    @model_validator(mode="before")
    @classmethod
    def _table_required(cls, data: Any, info: ValidationInfo) -> Any:
        """In a study.toml [table] is required (left out: its "expected a table" error)."""
        if info.context and "folder" in info.context and isinstance(data, Mapping):
            return {"table": None, **data}
        return data

    @property
    def origin(self) -> Path:
        return self.folder / STUDY_FILE

    @property
    def header(self) -> str:
        return self.report.header

    @property
    def sections(self) -> tuple[str, ...]:
        return self.report.sections

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.report.inputs

    @property
    def stand_ins(self) -> Mapping[str, str]:
        return self.mini.stand_ins

    @property
    def quirk_variants(self) -> str | None:
        """[quirks] variants: the quirk-corrected variants of its data.

        See ``repro.diagnostics.quirk_corrections``."""
        return self.quirks.variants if self.quirks is not None else None


def read_study(folder: str | os.PathLike[str]) -> Study:
    """Parse ``<folder>/study.toml`` (ConfigError naming the file and field on any problem)."""
    folder = Path(folder).resolve()
    path = folder / STUDY_FILE

    raw = read_toml(path, "a study definition (a study folder holds a study.toml)")
    return check(Study, raw, str(path), context={"folder": folder}, inject={"folder": folder})


def study_paths() -> list[Path]:
    """Extra study folders: ``REPRO_STUDY_PATH`` > ``[studies] paths``.

    ``REPRO_STUDY_PATH`` is ``os.pathsep``-separated."""
    env = os.environ.get("REPRO_STUDY_PATH")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    return [Path(p).expanduser() for p in current().studies.paths]


def _folders(root: Path, where: str) -> list[Path]:
    if (root / STUDY_FILE).is_file():
        return [root]
    if not root.is_dir():
        raise ConfigError(
            f"{where}: study folder {root} not found; point it at a folder holding study.toml, "
            "or at a folder of study folders"
        )
    return sorted(p.parent for p in root.glob(f"*/{STUDY_FILE}"))


def discover(extra: Sequence[str | os.PathLike[str]] | None = None) -> Registry[Study]:
    """Every study: the built-in ones (by name), then those of ``extra``.

    ``extra`` defaults to the configured study paths. Duplicate names are a ConfigError naming
    both folders."""
    folders = _folders(BUILTIN_DIR, "built-in studies")
    for root in study_paths() if extra is None else [Path(p) for p in extra]:
        folders += _folders(root, "REPRO_STUDY_PATH / [studies] paths")
    stamps = tuple((str(f.resolve()), (f / STUDY_FILE).stat().st_mtime_ns) for f in folders)
    return _registry(stamps)


@lru_cache(maxsize=8)
def _registry(stamps: tuple[tuple[str, int], ...]) -> Registry[Study]:
    """The studies of these folders (cached per folder and study.toml modification time)."""
    reg: Registry[Study] = Registry("study")
    for folder, _ in stamps:
        study = read_study(folder)
        if study.name in reg:
            raise ConfigError(
                f"{study.origin}: study {study.name!r} is already defined in "
                f"{reg.get(study.name).origin}; give it another name, or remove one of the two "
                "from REPRO_STUDY_PATH"
            )
        reg.register(study.name, study)
    return reg


def select(names: Sequence[str] | None = None) -> list[Study]:
    """The named studies, or every discovered study.

    Unknown names fail with the closest matches."""
    reg = discover()
    return [reg.get(n) for n in names] if names else [s for _, s in reg.items()]


def get_study(name: str) -> Study:
    return discover().get(name)
