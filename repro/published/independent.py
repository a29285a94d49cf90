"""Independent sources: other labs' published measurements of a study's own checkpoints.

The sources are declared as data (one TOML file per source) and read into values, one per (source
model, study column).

A study names its sources in ``study.toml``::

    [independent]
    sources = ["independent/testbed.toml", ...]   # declaration files of the study folder
    protocols = "independent/protocols.toml"      # the study's own protocol per column

and a user adds a lab with one more declaration file (and its CSV), named by
``REPRO_INDEPENDENT_PATH`` (``os.pathsep``-separated files or folders of ``*.toml``) or
``[studies] independent`` in repro.toml; such a declaration says which study it belongs to
(``study = "gavrikov2024"``). A declaration::

    name = "testbed"                    # unique among the study's sources
    title = "Taori et al. 2020, imagenet-testbed"
    citation = "..."
    study = "gavrikov2024"              # required outside the study folder

    [[files]]                           # the source's tables: a pinned file of the data directory
    name = "top1s"                      #   (path + url + sha256 + repository + commit +
    path = "independent/x.csv"          #   source_path + license: `data fetch` / `data verify`
    url = "https://..."                 #   handle it like a study's [[published]] entry), or a
    sha256 = "..."                      #   file beside the declaration (file = "mylab.csv",
    repository = "owner/name"           #   sha256 optional, license required)
    commit = "..."
    source_path = "results/x.csv"
    license = "MIT"
    model_columns = ["model"]           # the CSV column(s) naming the source's model (several:
                                        #   joined with ": ")
    protocol_columns = { size = "img_size" }   # protocol fields stated per row by the CSV

    [protocol]                          # the source's protocol (every column unless overridden)
    size = "224"

    [[identity]]                        # which source model is which study model
    study_model = "tv_resnet50"         # a model of the study's table
    source_model = "resnet50"
    level = "probable"                  # certain | probable | not_same (kept: never merged)
    evidence = "what was read"

    [[columns]]                         # which study column a source column measures
    column = "top1_acc/imagenet"        # a column of the study's table ({placeholders} of each)
    value = "val"                       # the CSV column holding the value
    file = "top1s"                      # a [[files]] name (default: the only file)
    where = { img_size = "224" }        # optional: only the rows with these cells
    unit = "percent"                    # percent (0..100) | fraction (0..1)
    decimals = 2                        # printed decimals, or the CSV column stating them
                                        #   (default: as printed in the CSV)
    images = 50000                      # images behind the value, or the CSV column stating them
    each = { c = ["fog"], s = ["1"] }   # optional: one mapping per combination of placeholders
    aggregate = "mean"                  # optional, with each: one value, the mean of the cells
    margin = 0.1                        # optional: else the study's agreement margin
    protocol = { crop_pct = "0.95" }    # the source's protocol for this column (over [protocol])
    study_protocol = { }                # the study's, over the study's protocols file

Protocol fields (strings; a field one side does not state is "not stated", never a match):
``images``, ``classes``, ``size``, ``crop_pct``, ``interpolation``, ``corruptions``,
``severities``, ``aggregation``. Every problem is one line naming the file, the row and the field
(``DataError``/``ConfigError``, exit 2).
"""

from __future__ import annotations

import csv
import itertools
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from repro.base.errors import ConfigError, DataError
from repro.base.filehash import sha256_of
from repro.base.schema import INTERNAL, Expect, Float, Int, check, did_you_mean, invalid, table
from repro.base.study import Pin, Study
from repro.base.textfile import read_toml

PROTOCOL_FIELDS = (
    "images",
    "classes",
    "size",
    "crop_pct",
    "interpolation",
    "corruptions",
    "severities",
    "aggregation",
)
LEVELS = ("certain", "probable", "not_same")
UNITS = {"percent": (0.0, 100.0), "fraction": (0.0, 1.0)}
ENV = "REPRO_INDEPENDENT_PATH"
KNOWN = "{where}: unknown field(s) {unknown} (known: {known})"
TEXT = Annotated[
    str, Field(pattern=r"\S"), Expect("{where}: field {key!r} must be a non-empty string")
]


@table
class Protocol:
    """How a value was made (see the module docstring); a field left out is not stated."""

    WHERE: ClassVar[str] = "{parent} {key}"
    UNKNOWN: ClassVar[str] = KNOWN
    images: str | None = None
    classes: str | None = None
    size: str | None = None
    crop_pct: str | None = None
    interpolation: str | None = None
    corruptions: str | None = None
    severities: str | None = None
    aggregation: str | None = None

    def stated(self) -> dict[str, str]:
        return {k: v for k in PROTOCOL_FIELDS if (v := getattr(self, k)) is not None}


def merged(*layers: Mapping[str, str] | Protocol | None) -> dict[str, str]:
    """Protocol layers, later over earlier."""
    out: dict[str, str] = {}
    for layer in layers:
        if layer is None:
            continue
        out.update(layer.stated() if isinstance(layer, Protocol) else dict(layer))
    return out


PIN_FIELDS = ("url", "sha256", "repository", "commit", "source_path", "license")


class _Entry:
    """What an entry of a declaration's arrays of tables says when it is wrong.

    Its unknown key names the known ones; an entry that is not a table says so."""

    UNKNOWN: ClassVar[str] = KNOWN
    INVALID: ClassVar[str] = "{where}: expected a table"


@table
class SourceFile(_Entry):
    """One table of a source: a pinned file of the data directory or a file beside the declaration.

    A pinned file is given by ``path`` and its pin; a file beside the declaration by ``file``.
    """

    WHERE: ClassVar[str] = "{parent}: [[files]] #{n}"
    name: str = ""
    path: str = ""
    file: str = ""
    url: str = ""
    sha256: str = ""
    repository: str = ""
    commit: str = ""
    source_path: str = ""
    license: str = ""
    kind: Literal["table", "predictions"] = "table"
    model_columns: tuple[str, ...] = ("model",)
    model: str = ""  # kind = "predictions": the one source model the file holds
    protocol_columns: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one(self) -> SourceFile:
        if bool(self.path) == bool(self.file):
            raise invalid("{where}: expected exactly one of 'path' (data directory) or 'file'")
        if self.path:
            missing = [k for k in PIN_FIELDS if not getattr(self, k)]
            if missing:
                raise invalid(
                    "{where}: a pinned file needs {fields} (as a study's [[published]] entry)",
                    fields=", ".join(missing),
                )
        elif not self.license:
            raise invalid("{where}: field 'license' must be a non-empty string")
        if self.sha256 and not re.fullmatch(r"[0-9a-f]{64}", self.sha256):
            raise invalid(
                "{where}: sha256 must be 64 lower-case hex digits, got {v!r}", v=self.sha256
            )
        unknown = sorted(set(self.protocol_columns) - set(PROTOCOL_FIELDS))
        if unknown:
            raise invalid(
                "{where}: protocol_columns: unknown protocol field(s) {u} (known: {k})",
                u=", ".join(unknown),
                k=", ".join(PROTOCOL_FIELDS),
            )
        if self.kind == "predictions" and not self.model:
            raise invalid("{where}: kind = 'predictions' needs 'model' (the source model)")
        return self

    @property
    def handle(self) -> str:
        return self.name or Path(self.path or self.file).name

    def pin(self) -> Pin | None:
        if not self.path:
            return None
        return Pin(**{"path": self.path, **{k: getattr(self, k) for k in PIN_FIELDS}})


@table
class Identity(_Entry):
    """One row of the identity map."""

    WHERE: ClassVar[str] = "{parent}: [[identity]] #{n}"
    study_model: TEXT
    source_model: TEXT
    level: Annotated[
        Literal["certain", "probable", "not_same"],
        Expect("{where}: level must be one of certain, probable, not_same, got {value!r}"),
    ]
    evidence: TEXT


@table(kw_only=True)
class ColumnMap(_Entry):
    """One row of the column map: which study column a source column measures."""

    WHERE: ClassVar[str] = "{parent}: [[columns]] #{n}"
    column: TEXT
    value: TEXT
    unit: Annotated[
        Literal["percent", "fraction"],
        Expect("{where}: unit must be 'percent' or 'fraction', got {value!r}"),
    ]
    file: str = ""
    where: dict[str, str] = Field(default_factory=dict)
    unless: dict[str, tuple[str, ...]] = Field(
        default_factory=dict
    )  # rows with one of these cells: skipped
    decimals: Int | str | None = None
    images: Int | str | None = None
    each: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    aggregate: Literal["mean"] | None = None
    margin: Float | None = None
    reason: str = ""
    label: str = ""
    protocol: Protocol = Field(default_factory=Protocol)
    study_protocol: Protocol = Field(default_factory=Protocol)

    @model_validator(mode="after")
    def _placeholders(self) -> ColumnMap:
        named = set(re.findall(r"{(\w+)}", self.column + self.value))
        if named != set(self.each):
            raise invalid(
                "{where}: placeholders {p} of column/value and the keys {e} of 'each' differ",
                p=sorted(named),
                e=sorted(self.each),
            )
        if self.aggregate and not self.each:
            raise invalid("{where}: aggregate needs 'each' (the cells it averages)")
        if self.margin is not None and self.margin < 0:
            raise invalid("{where}: margin must be >= 0, got {m!r}", m=self.margin)
        return self

    @property
    def name(self) -> str:
        return self.label or self.column

    def cells(self) -> list[tuple[str, str]]:
        """(study column, source column) per combination of ``each``."""
        if not self.each:
            return [(self.column, self.value)]
        keys = list(self.each)
        out = []
        for combo in itertools.product(*(self.each[k] for k in keys)):
            sub = dict(zip(keys, combo, strict=True))
            out.append((self.column.format(**sub), self.value.format(**sub)))
        return out


@table(kw_only=True)
class Declaration:
    """One independent source (a ``*.toml`` declaration file)."""

    WHERE: ClassVar[str] = "{origin}"
    UNKNOWN: ClassVar[str] = KNOWN
    name: TEXT
    title: TEXT
    citation: TEXT
    origin: Annotated[Path, INTERNAL]
    url: str = ""
    study: str = ""
    files: Annotated[
        tuple[SourceFile, ...],
        Field(min_length=1),
        Expect(
            top="{where}: [[files]] must be an array of tables",
            missing="{where}: needs at least one [[files]] table",
        ),
    ]
    protocol: Protocol = Field(default_factory=Protocol)
    identity: tuple[Identity, ...] = ()
    columns: tuple[ColumnMap, ...] = ()

    def file(self, entry: ColumnMap, n: int) -> SourceFile:
        if not entry.file:
            if len(self.files) != 1:
                raise ConfigError(
                    f"{self.origin}: [[columns]] #{n}: field 'file' must name one of "
                    f"{', '.join(f.handle for f in self.files)} (the source has several)"
                )
            return self.files[0]
        for f in self.files:
            if f.handle == entry.file:
                return f
        raise ConfigError(
            f"{self.origin}: [[columns]] #{n}: file {entry.file!r} is not a [[files]] name "
            f"(known: {', '.join(f.handle for f in self.files)})"
        )


@table(kw_only=True)
class StudyProtocol(Protocol):
    """The study's own protocol (``Protocol``'s fields) for the columns its patterns match.

    The patterns are ``columns``. It also holds the images behind each value and the decimals it
    prints.
    """

    WHERE: ClassVar[str] = "{origin}: [[column]] #{n}"
    columns: tuple[str, ...]
    n: Int | None = None  # images behind each value
    decimals: Int | None = None  # printed decimals (None: printed in full)


@table(kw_only=True)
class ModelProtocol(Protocol):
    """One study model measured under another protocol than its column's, with the evidence.

    ``Protocol``'s fields given here replace the column's for this model in the columns its
    patterns match (``columns``).
    """

    WHERE: ClassVar[str] = "{origin}: [[model]] #{n}"
    model: TEXT
    columns: tuple[str, ...]
    evidence: TEXT


@table
class ProtocolsFile:
    """The study's own protocol per column, and the models measured otherwise."""

    WHERE: ClassVar[str] = "{origin}"
    UNKNOWN: ClassVar[str] = KNOWN
    rule: TEXT
    column: tuple[StudyProtocol, ...] = ()
    model: tuple[ModelProtocol, ...] = ()

    def of(self, column: str) -> StudyProtocol | None:
        return next(
            (p for p in self.column if any(fnmatchcase(column, c) for c in p.columns)), None
        )

    def of_model(self, column: str, model: str) -> ModelProtocol | None:
        """The model's own protocol in ``column`` where one is declared (the first that matches)."""
        return next(
            (
                p
                for p in self.model
                if p.model == model and any(fnmatchcase(column, c) for c in p.columns)
            ),
            None,
        )


# --------------------------------------------------------------------------- reading declarations
_READ: dict[tuple[str, int], Declaration] = {}


def read_declaration(path: str | os.PathLike[str], study: str = "") -> Declaration:
    """A declaration file, checked.

    It is read once per (file, mtime) in a process: every verify of a pinned file asks the manifest,
    which holds the sources' pins.
    """
    path = Path(path).resolve()
    try:
        key = (str(path), path.stat().st_mtime_ns)
    except OSError:
        key = (str(path), -1)
    decl = _READ.get(key)
    if decl is None:
        raw = read_toml(path, "an independent-source declaration")
        decl = check(Declaration, raw, str(path), inject={"origin": path})
        _READ[key] = decl
    if study and decl.study and decl.study != study:
        raise ConfigError(f"{path}: study {decl.study!r} is not the study {study!r} that lists it")
    return decl


def _user_paths() -> list[Path]:
    env = os.environ.get(ENV)
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    from repro.base.settings import current

    return [Path(p).expanduser() for p in current().studies.independent]


def user_declarations() -> list[Path]:
    out: list[Path] = []
    for p in _user_paths():
        if p.is_dir():
            out += sorted(p.glob("*.toml"))
        elif p.is_file():
            out.append(p)
        else:
            raise ConfigError(
                f"{ENV} / [studies] independent: {p} not found; expected a declaration file or a "
                "folder of them"
            )
    return out


def study_declarations(study: Study, *, user: bool = True) -> list[Declaration]:
    """The study's sources: those its study.toml lists, then the user's that name it."""
    decls = [read_declaration(study.folder / s, study.name) for s in study.independent.sources]
    if user:
        for path in user_declarations():
            d = read_declaration(path)
            if not d.study:
                raise ConfigError(
                    f"{path}: field 'study' must name the study the source belongs to"
                )
            if d.study == study.name:
                decls.append(d)
    seen: dict[str, Path] = {}
    for d in decls:
        if d.name in seen:
            raise ConfigError(
                f"{d.origin}: source name {d.name!r} is also declared in {seen[d.name]}"
            )
        seen[d.name] = d.origin
    return decls


def study_protocols(study: Study, models: Sequence[str] | None = None) -> ProtocolsFile | None:
    """The study's protocols file, checked.

    With ``models`` (the study's), every ``[[model]]`` must name one of them (else a ConfigError
    naming the entry)."""
    if not study.independent.protocols:
        return None
    path = (study.folder / study.independent.protocols).resolve()
    out = check(ProtocolsFile, read_toml(path, "a study's protocols file"), str(path))
    for n, p in enumerate(out.model if models is not None else (), start=1):
        if p.model not in models:
            raise ConfigError(
                f"{path}: [[model]] #{n}: model {p.model!r} is not a study model"
                f"{did_you_mean(p.model, models)}"
            )
    return out


def pins(study: Study) -> list[Pin]:
    """The pinned files of the study's own sources (``repro.published.fetch.manifest``)."""
    out = []
    for s in study.independent.sources:
        for f in read_declaration(study.folder / s, study.name).files:
            if (pin := f.pin()) is not None:
                out.append(pin)
    return out


# --------------------------------------------------------------------------- checking the maps
def check_maps(decl: Declaration, models: Sequence[str], columns: Sequence[str]) -> None:
    """Check the maps: identity rows name models of the study's table, column-map rows its columns.

    No pair may appear twice. A problem is a ConfigError naming the file, the row and the field.
    """
    known_models, known_columns = set(models), set(columns)
    pairs: dict[tuple[str, str], int] = {}
    mapped: dict[str, tuple[int, str]] = {}
    for n, row in enumerate(decl.identity, start=1):
        where = f"{decl.origin}: [[identity]] #{n}"
        if row.study_model not in known_models:
            raise ConfigError(
                f"{where}: study_model {row.study_model!r} is not a model of the study's table"
                f"{did_you_mean(row.study_model, known_models)}"
            )
        key = (row.study_model, row.source_model)
        if key in pairs:
            raise ConfigError(
                f"{where}: duplicate mapping: the same pair as [[identity]] #{pairs[key]}"
            )
        pairs[key] = n
        if row.level != "not_same":
            if row.source_model in mapped:
                first, model = mapped[row.source_model]
                raise ConfigError(
                    f"{where}: duplicate mapping: source_model {row.source_model!r} is already "
                    f"{model!r} ([[identity]] #{first}); one source model is one checkpoint"
                )
            mapped[row.source_model] = (n, row.study_model)
    seen: dict[tuple[str, str, str, tuple[tuple[str, str], ...]], int] = {}
    for n, entry in enumerate(decl.columns, start=1):
        where = f"{decl.origin}: [[columns]] #{n}"
        f = decl.file(entry, n)
        for column, value in entry.cells():
            if column not in known_columns:
                raise ConfigError(
                    f"{where}: column {column!r} is not a column of the study's table"
                    f"{did_you_mean(column, known_columns)}"
                )
            key = (f.handle, column, value, tuple(sorted(entry.where.items())))
            if key in seen:
                raise ConfigError(
                    f"{where}: duplicate mapping: {value!r} -> {column!r} is already [[columns]] "
                    f"#{seen[key]}"
                )
            seen[key] = n


# --------------------------------------------------------------------------- reading the values
@dataclass(frozen=True)
class SourceValue:
    """One independent value: a source model's value of a study column, as printed."""

    source: str
    source_model: str
    column: str
    entry: int  # 1-based [[columns]] row
    label: str
    value: float
    unit: str
    decimals: int | None  # None: printed in full (no rounding interval)
    images: int | None
    protocol: dict[str, str] = field(default_factory=dict)
    where: str = ""  # file and row it came from
    count: tuple[int, int] | None = None  # (k, n) where the value is a count of images


def _decimals(text: str) -> int | None:
    t = text.strip()
    if "e" in t.lower():
        return None
    return len(t.split(".")[1]) if "." in t else 0


def _rows(path: Path, where: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise DataError(f"{path}: empty file (expected a header row)")
            rows = [
                (i, dict(zip(header, r, strict=False))) for i, r in enumerate(reader, start=2) if r
            ]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path}: cannot be read as CSV ({exc}) ({where})") from None
    return header, rows


def source_path(decl: Declaration, f: SourceFile, data_dir: Path) -> Path:
    """The file's path, verified.

    A pinned file is verified against its pin, a local one against its sha256 when the declaration
    states one.
    """
    if f.path:
        path = Path(data_dir) / f.path
        if not path.is_file():
            raise DataError(
                f"published data file {f.path} not found in data directory {data_dir} (pinned by "
                f"{decl.origin}; set --data-dir or REPRO_DATA_DIR, or run `python -m repro data "
                "fetch`)"
            )
        actual = sha256_of(path)
        if actual != f.sha256:
            raise DataError(
                f"{path}: sha256 {actual} does not match the sha256 {f.sha256} pinned by "
                f"{decl.origin} [[files]] {f.handle!r}; the file is corrupt or a different "
                "version (re-run `python -m repro data fetch`)"
            )
        return path
    path = (decl.origin.parent / f.file).resolve()
    if not path.is_file():
        raise DataError(f"{decl.origin}: [[files]] {f.handle!r}: file {path} not found")
    if f.sha256:
        actual = sha256_of(path)
        if actual != f.sha256:
            raise DataError(
                f"{path}: sha256 {actual} does not match the sha256 {f.sha256} that "
                f"{decl.origin} [[files]] {f.handle!r} states"
            )
    return path


def read_values(decl: Declaration, data_dir: Path) -> list[SourceValue]:
    """Every value the column map reads from the source's tables (empty cells: no value)."""
    out: list[SourceValue] = []
    cache: dict[str, tuple[Path, list[str], list[tuple[int, dict[str, str]]]]] = {}
    for n, entry in enumerate(decl.columns, start=1):
        f = decl.file(entry, n)
        if f.kind == "predictions":
            continue  # per-image decisions: read by repro.diagnostics.independent (it scores them)
        if f.handle not in cache:
            path = source_path(decl, f, data_dir)
            cache[f.handle] = (path, *_rows(path, f"{decl.origin} [[files]] {f.handle!r}"))
        path, header, rows = cache[f.handle]
        for col in (*f.model_columns, *entry.where, *entry.unless, *f.protocol_columns.values()):
            if col not in header:
                raise DataError(
                    f"{path}: column {col!r} missing (named by {decl.origin} [[columns]] #{n} / "
                    f"[[files]] {f.handle!r})"
                )
        for key in ("decimals", "images"):
            ref = getattr(entry, key)
            if isinstance(ref, str) and ref not in header:
                raise DataError(
                    f"{path}: column {ref!r} missing (named by {decl.origin} [[columns]] #{n} "
                    f"{key})"
                )
        lo, hi = UNITS[entry.unit]
        seen: dict[tuple[str, str], int] = {}
        cells = entry.cells()
        for _column, value_col in cells:
            if value_col not in header:
                raise DataError(
                    f"{path}: column {value_col!r} missing (named by {decl.origin} [[columns]] "
                    f"#{n} value)"
                )
        for lineno, row in rows:
            if any(row.get(k, "").strip() != v for k, v in entry.where.items()):
                continue
            if any(row.get(k, "").strip() in vs for k, vs in entry.unless.items()):
                continue
            model = ": ".join(row.get(c, "").strip() for c in f.model_columns)
            protocol = merged(
                decl.protocol,
                entry.protocol,
                {k: row.get(c, "").strip() for k, c in f.protocol_columns.items()},
            )
            values: list[tuple[str, float, int | None]] = []
            for column, value_col in cells:
                text = row.get(value_col, "").strip()
                if not text:
                    values = [] if entry.aggregate else values
                    if entry.aggregate:
                        break
                    continue
                try:
                    v = float(text)
                except ValueError:
                    raise DataError(
                        f"{path}: row {lineno}, field {value_col!r}: {text[:40]!r} is not a number"
                    ) from None
                if not (math.isfinite(v) and lo <= v <= hi):
                    raise DataError(
                        f"{path}: row {lineno}, field {value_col!r}: {v:g} is outside the range of "
                        f"its unit {entry.unit} [{lo:g}, {hi:g}] ({decl.origin} [[columns]] #{n})"
                    )
                dec = _int_cell(row, entry.decimals, path, lineno, "decimals")
                values.append((column, v, _decimals(text) if dec is None else dec))
            if not values:
                continue
            images = _int_cell(row, entry.images, path, lineno, "images")
            if entry.aggregate:
                decs = [d for _, _, d in values]
                values = [
                    (
                        entry.column,
                        sum(v for _, v, _ in values) / len(values),
                        None if any(d is None for d in decs) else min(decs),  # type: ignore[type-var]
                    )
                ]
            for column, v, dec in values:
                key = (model, column)
                if key in seen:
                    raise DataError(
                        f"{path}: row {lineno}, field {value_col if not entry.each else column!r}: "
                        f"duplicate mapping: model {model!r} has a value of {column!r} in row "
                        f"{seen[key]} too ({decl.origin} [[columns]] #{n}: add a 'where' filter)"
                    )
                seen[key] = lineno
                out.append(
                    SourceValue(
                        source=decl.name,
                        source_model=model,
                        column=column,
                        entry=n,
                        label=entry.name,
                        value=v,
                        unit=entry.unit,
                        decimals=dec,
                        images=images,
                        protocol=protocol,
                        where=f"{path.name} row {lineno}",
                    )
                )
    return out


def _int_cell(
    row: Mapping[str, str], ref: int | str | None, path: Path, lineno: int, key: str
) -> int | None:
    if ref is None or isinstance(ref, int):
        return ref
    text = row.get(ref, "").strip()
    if not text:
        return None
    try:
        n = int(text)
    except ValueError:
        raise DataError(
            f"{path}: row {lineno}, field {ref!r}: {text[:40]!r} is not an integer ({key})"
        ) from None
    if n < 0:
        raise DataError(f"{path}: row {lineno}, field {ref!r}: {n} is negative ({key})")
    return n


def study_aliases() -> dict[str, list[dict[str, str]]]:
    """Per model of any study: its names in that study's independent sources, with identity level.

    ``not_same`` is included: a name that collides, never the same checkpoint.
    """
    from repro.base.study import discover

    out: dict[str, list[dict[str, str]]] = {}
    for study in discover().values():
        for decl in study_declarations(study):
            for ident in decl.identity:
                out.setdefault(ident.study_model, []).append(
                    {"source": decl.name, "name": ident.source_model, "identity": ident.level}
                )
    return out
