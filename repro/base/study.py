"""The study as the unit of extension: one folder per published study, described by its
``study.toml``; and the discovery of study folders.

A study folder holds its ``study.toml``, its claim file, its analysis definition (optional),
the statistics only it uses, its report sections and the readers of its own published files.
The core never names a study: it receives ``Study`` objects and reaches a study's code only
through the lazy ``"module:attr"`` references its ``study.toml`` names.

``study.toml``::

    name = "mystudy"                       # = the claims' `study` field
    title = "Doe et al., ICML 2031"        # report section header
    citation = "Doe, Roe: 'A paper', ICML 2031"
    url = "https://arxiv.org/abs/..."      # optional: the paper, linked from each claim's source
    claims = "claims.toml"                 # relative to the study folder
    analysis = "analysis.toml"             # optional: the analysis definition (repro.analysis.spec)
    replication = "replication.toml"       # optional: the count model of its columns (repro.claims.counts)
    agreement = "agreement.toml"           # optional: implementation margins per column family
                                           #   (repro.claims.agreement: per-model agreement)
    measurements = ["shape_bias"]          # what it needs measured (names of repro.measurements)
    models = ["tv_resnet50"]               # optional: the models it needs (default: its categories' models)

    [table]                                # the per-model table its claims read (one of):
    published = "mystudy/table.csv"        #   a pinned CSV in the data directory (first column `model`)
    file = "table.csv"                     #   a CSV shipped in the study folder
    loader = "module:function"             #   (data_dir) -> repro.base.table.ModelTable

    [categories]                           # optional model categories {category: [models]} (one of):
    published = "mystudy/categories.json"  #   a pinned JSON file in the data directory
    loader = "module:function"             #   (data_dir, known_models) -> dict

    [report]
    header = "text, may use {inputs} {analysis} {confidence} {interval_method}"
    sections = ["module:render", ...]      # its report sections, in order
    inputs = ["mystudy/table.csv"]         # the published files listed in the provenance

    [quirks]                               # optional
    detect = "module:function"             # (ModelTable, population) -> list of quirks
    variants = "module:function"           # (ClaimContext) -> quirk-corrected variants of the data
                                           # (repro.claims.variants: which verdicts survive them)

    [mini]                                 # optional: the tiny models of a mini run stand in for
    stand_ins = { tiny_random_a = "tv_resnet50" }   # these study models

    [sessions.real]                        # optional: named measuring sessions of models that are
    description = "..."                    # not study models (python -m repro measure --session real):
    models = ["efficientnet_lite0"]        # models x measurements into the configured store, on
    measurements = ["shape_bias"]          # `device` with `batch_size` (defaults cpu, 16); the
    device = "cpu"                         # study's report sections read them from the store
    batch_size = 16

    [placement]                            # optional: where a model that is not a study model lands
    population = "table"                   # whose values rank it: "table" = the study table over its
                                           #   analysis population, or "module:function"
                                           #   (study, data_dir) -> {name: {column: value or None}}
    population_label = "the 48 models"     # the population in words
    inside = ["timm:resnet50"]             # zoo architectures inside the study's population: residuals
                                           #   and claims with n + 1 only for these
    outside = "why others get neither"     # the note shown for a model outside
    references = "module:function"         # optional: (study, data_dir) -> reference rows (humans, ...)

    [[placement.columns]]                  # one per column on the study's own scale
    column = "shape-bias"                  # the population's column
    label = "shape bias"
    values = ["shape-bias"]                # the measured / external columns on this scale (default [column])
    protocol = "how the values are made"   # what makes them comparable, shown with every rank
    population = "module:function"         # optional: this column's own population (default the study's)
    interval = "module:function"           # optional: (record, column_value) -> (lo, hi) or None
    larger = "more shape-biased"           # what rank 1 (the largest value) means

    [[placement.fits]]                     # optional: residuals against the study's fit (inside only)
    bias = "shape_bias"                    # analysis bias and category ids
    category = "id"
    degree = 1                             # least-squares polynomial of the category on the bias

    [[placement.not_comparable]]           # optional: measured columns that look alike but are on
    values = ["metric/criticalband-16class/*"]   # another scale (fnmatch patterns), never ranked
    reason = "why"

    [[published]]                          # the pins of its published files (data fetch / verify)
    path = "mystudy/table.csv"
    url = "https://..."
    sha256 = "..."
    repository = "owner/name"
    commit = "..."
    source_path = "raw/table.csv"
    license = "CC BY 4.0"

Discovery: the built-in ``repro/studies/*/study.toml``, then every folder named by
``REPRO_STUDY_PATH`` (``os.pathsep``-separated) or ``[studies] paths`` in repro.toml; each of
those folders is a study folder itself (it holds a ``study.toml``) or holds study folders.
Names are unique; the order is stable (built-in studies by name, then the configured ones).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError
from repro.base.registry import Registry
from repro.base.settings import load_config

STUDY_FILE = "study.toml"
BUILTIN_DIR = Path(__file__).resolve().parents[1] / "studies"
PIN_FIELDS = ("path", "url", "sha256", "repository", "commit", "source_path", "license")
HEADER_FIELDS = ("inputs", "analysis", "confidence", "interval_method")


@dataclass(frozen=True)
class Session:
    """A named measuring session of a study (``[sessions.<name>]``): models x measurements."""

    name: str
    description: str
    models: tuple[str, ...]
    measurements: tuple[str, ...]
    device: str = "cpu"
    batch_size: int = 16


@dataclass(frozen=True)
class PlacementColumn:
    """One column a model is placed on (``[[placement.columns]]``): the population's ``column``,
    the measured or external columns on the same scale (``values``) and its protocol."""

    column: str
    label: str
    values: tuple[str, ...]
    protocol: str
    population: str = ""  # "" = the study's [placement] population
    interval: str | None = None  # "module:function" (record, column_value) -> (lo, hi) | None
    larger: str = ""  # what rank 1 means


@dataclass(frozen=True)
class PlacementFit:
    """A bias-vs-category fit of the study (``[[placement.fits]]``): residuals of models inside."""

    bias: str
    category: str
    degree: int = 1


@dataclass(frozen=True)
class NotComparable:
    """Measured columns (fnmatch patterns) that are not on the study's scale, and why."""

    values: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Placement:
    """A study's ``[placement]``: its population and the columns on its own scale."""

    columns: tuple[PlacementColumn, ...]
    population: str = "table"  # "table" or "module:function"
    population_label: str = ""
    inside: tuple[str, ...] = ()  # zoo architectures ("timm:resnet50") inside the population
    outside: str = ""
    references: str | None = None
    fits: tuple[PlacementFit, ...] = ()
    not_comparable: tuple[NotComparable, ...] = ()


@dataclass(frozen=True)
class Study:
    """One study, as its ``study.toml`` describes it (see the module docstring)."""

    name: str
    title: str
    citation: str
    folder: Path
    claims: Path
    analysis: Path | None = None
    table: Mapping[str, str] = field(default_factory=dict)  # one of published | file | loader
    agreement: Path | None = None  # implementation margins per column family (repro.claims.agreement)
    categories: Mapping[str, str] = field(default_factory=dict)  # published | loader, or empty
    measurements: tuple[str, ...] = ()
    models: tuple[str, ...] | None = None
    header: str = ""
    sections: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    quirks: str | None = None
    quirk_variants: str | None = None  # [quirks] variants: the quirk-corrected variants of its data
    stand_ins: Mapping[str, str] = field(default_factory=dict)
    published: tuple[Mapping[str, str], ...] = ()
    url: str = ""  # the paper (claims link their source to it)
    sessions: Mapping[str, Session] = field(default_factory=dict)  # named measuring sessions
    replication: Path | None = None  # the count model of its columns (repro.claims.counts)
    placement: Placement | None = None  # where models that are not study models land ([placement])

    @property
    def origin(self) -> Path:
        return self.folder / STUDY_FILE


def _str(raw: Mapping[str, Any], key: str, where: str, required: bool = True) -> str:
    value = raw.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: field {key!r} must be a non-empty string")
    return value


def _strings(raw: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: field {key!r} must be a list of strings")
    return tuple(value)


def _ref(value: Any, where: str) -> str:
    if not isinstance(value, str) or ":" not in value:
        raise ConfigError(f"{where}: {value!r} is not a lazy reference 'module:attribute'")
    return value


def _source(raw: Any, where: str, kinds: Sequence[str], required: bool) -> dict[str, str]:
    if raw is None and not required:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table with one of {', '.join(kinds)}")
    given = [k for k in kinds if k in raw]
    unknown = sorted(set(raw) - set(kinds))
    if len(given) != 1 or unknown:
        raise ConfigError(f"{where}: expected exactly one of {', '.join(kinds)}"
                          + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
    kind = given[0]
    value = raw[kind]
    if kind == "loader":
        _ref(value, f"{where}: loader")
    elif not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: {kind} must be a path")
    return {kind: value}


def _pins(raw: Any, where: str) -> tuple[dict[str, str], ...]:
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: [[published]] must be an array of tables")
    out = []
    for i, pin in enumerate(raw):
        w = f"{where}: [[published]] #{i + 1}"
        if not isinstance(pin, dict):
            raise ConfigError(f"{w}: expected a table")
        missing = [f for f in PIN_FIELDS if not isinstance(pin.get(f), str)]
        if missing:
            raise ConfigError(f"{w}: missing field(s) {', '.join(missing)} (strings)")
        out.append({f: pin[f] for f in PIN_FIELDS})
    return tuple(out)


def _sessions(raw: Any, where: str) -> dict[str, Session]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [sessions] must be a table of [sessions.<name>] tables")
    out = {}
    for name, table in raw.items():
        w = f"{where}: [sessions.{name}]"
        if not isinstance(table, dict):
            raise ConfigError(f"{w}: expected a table")
        unknown = sorted(set(table) - {"description", "models", "measurements", "device", "batch_size"})
        if unknown:
            raise ConfigError(f"{w}: unknown field(s) {', '.join(unknown)} (known: description, models, "
                              "measurements, device, batch_size)")
        models, measurements = _strings(table, "models", w), _strings(table, "measurements", w)
        if not models or not measurements:
            raise ConfigError(f"{w}: 'models' and 'measurements' must be non-empty lists of names")
        batch = table.get("batch_size", 16)
        if not isinstance(batch, int) or isinstance(batch, bool) or batch <= 0:
            raise ConfigError(f"{w}: field 'batch_size' must be a positive integer, got {batch!r}")
        out[name] = Session(name, _str(table, "description", w), models, measurements,
                            _str(table, "device", w, required=False) or "cpu", batch)
    return out


PLACEMENT_FIELDS = ("population", "population_label", "inside", "outside", "references", "columns", "fits",
                    "not_comparable")
COLUMN_FIELDS = ("column", "label", "values", "protocol", "population", "interval", "larger")
FIT_FIELDS = ("bias", "category", "degree")


def _known(table: Mapping[str, Any], fields: Sequence[str], where: str) -> None:
    unknown = sorted(set(table) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(fields)})")


def _tables(raw: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise ConfigError(f"{where}: expected an array of tables ([[...]])")
    return raw


def _population_ref(value: Any, where: str) -> str:
    if value == "table":
        return value
    if not isinstance(value, str) or ":" not in value:
        raise ConfigError(f"{where}: population must be \"table\" (the study table over its analysis population) "
                          f"or a lazy reference 'module:function', got {value!r}")
    return value


def _placement(raw: Any, where: str) -> Placement | None:
    if raw is None:
        return None
    w = f"{where}: [placement]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{w}: expected a table")
    _known(raw, PLACEMENT_FIELDS, w)
    columns = []
    for i, col in enumerate(_tables(raw.get("columns", []), f"{w} columns")):
        wc = f"{where}: [[placement.columns]] #{i + 1}"
        _known(col, COLUMN_FIELDS, wc)
        name = _str(col, "column", wc)
        values = _strings(col, "values", wc) if "values" in col else (name,)
        if not values:
            raise ConfigError(f"{wc}: field 'values' must name at least one column")
        columns.append(PlacementColumn(
            name, _str(col, "label", wc, required=False) or name, values, _str(col, "protocol", wc),
            _population_ref(col["population"], wc) if "population" in col else "",
            _ref(col["interval"], f"{wc}: interval") if "interval" in col else None,
            _str(col, "larger", wc, required=False)))
    if not columns:
        raise ConfigError(f"{w}: needs at least one [[placement.columns]] table (the columns on the study's scale)")
    seen = [c.column for c in columns]
    if len(set(seen)) != len(seen):
        raise ConfigError(f"{w}: column names repeat ({', '.join(sorted({c for c in seen if seen.count(c) > 1}))})")
    fits = []
    for i, fit in enumerate(_tables(raw.get("fits", []), f"{w} fits")):
        wf = f"{where}: [[placement.fits]] #{i + 1}"
        _known(fit, FIT_FIELDS, wf)
        degree = fit.get("degree", 1)
        if not isinstance(degree, int) or isinstance(degree, bool) or not 1 <= degree <= 3:
            raise ConfigError(f"{wf}: field 'degree' must be 1, 2 or 3, got {degree!r}")
        fits.append(PlacementFit(_str(fit, "bias", wf), _str(fit, "category", wf), degree))
    others = []
    for i, nc in enumerate(_tables(raw.get("not_comparable", []), f"{w} not_comparable")):
        wn = f"{where}: [[placement.not_comparable]] #{i + 1}"
        _known(nc, ("values", "reason"), wn)
        values = _strings(nc, "values", wn)
        if not values:
            raise ConfigError(f"{wn}: field 'values' must name at least one column pattern")
        others.append(NotComparable(values, _str(nc, "reason", wn)))
    return Placement(
        tuple(columns), _population_ref(raw.get("population", "table"), w),
        _str(raw, "population_label", w, required=False), _strings(raw, "inside", w),
        _str(raw, "outside", w, required=False),
        _ref(raw["references"], f"{w}: references") if "references" in raw else None, tuple(fits), tuple(others))


def read_study(folder: str | os.PathLike[str]) -> Study:
    """Parse ``<folder>/study.toml`` (ConfigError naming the file and field on any problem)."""
    folder = Path(folder).resolve()
    path = folder / STUDY_FILE
    from repro.base.textfile import read_toml

    raw = read_toml(path, "a study definition (a study folder holds a study.toml)")
    where = str(path)
    claims = folder / _str(raw, "claims", where)
    if not claims.is_file():
        raise ConfigError(f"{where}: claims file {claims} not found; expected 'claims' to name a file in the "
                          "study folder")
    analysis = None
    if raw.get("analysis") is not None:
        analysis = folder / _str(raw, "analysis", where)
        if not analysis.is_file():
            raise ConfigError(f"{where}: analysis file {analysis} not found")
    replication = None
    if raw.get("replication") is not None:
        replication = folder / _str(raw, "replication", where)
        if not replication.is_file():
            raise ConfigError(f"{where}: replication file {replication} not found")
    agreement = None
    if raw.get("agreement") is not None:
        agreement = folder / _str(raw, "agreement", where)
        if not agreement.is_file():
            raise ConfigError(f"{where}: agreement file {agreement} not found; expected 'agreement' to name a file "
                              "of [[family]] margins in the study folder")
    table = _source(raw.get("table"), f"{where}: [table]", ("published", "file", "loader"), required=True)
    categories = _source(raw.get("categories"), f"{where}: [categories]", ("published", "file", "loader"),
                         required=False)
    report = raw.get("report", {})
    if not isinstance(report, dict):
        raise ConfigError(f"{where}: [report] must be a table")
    header = _str(report, "header", f"{where}: [report]", required=False)
    try:
        header.format(**dict.fromkeys(HEADER_FIELDS, ""))
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(f"{where}: [report] header: unknown placeholder {exc} "
                          f"(known: {', '.join(HEADER_FIELDS)})") from None
    sections = tuple(_ref(s, f"{where}: [report] sections") for s in _strings(report, "sections", f"{where}: [report]"))
    quirks = raw.get("quirks", {})
    mini = raw.get("mini", {})
    stand_ins = mini.get("stand_ins", {}) if isinstance(mini, dict) else None
    if not isinstance(stand_ins, dict) or not all(isinstance(v, str) for v in stand_ins.values()):
        raise ConfigError(f"{where}: [mini] stand_ins must map tiny model names to study model names")
    models = _strings(raw, "models", where) if "models" in raw else None
    return Study(
        name=_str(raw, "name", where), title=_str(raw, "title", where), citation=_str(raw, "citation", where),
        folder=folder, claims=claims, analysis=analysis, agreement=agreement, table=table, categories=categories,
        measurements=_strings(raw, "measurements", where), models=models, header=header, sections=sections,
        inputs=_strings(report, "inputs", f"{where}: [report]"),
        quirks=_ref(quirks["detect"], f"{where}: [quirks] detect") if isinstance(quirks, dict) and "detect" in quirks
        else None,
        quirk_variants=(_ref(quirks["variants"], f"{where}: [quirks] variants")
                        if isinstance(quirks, dict) and "variants" in quirks else None),
        stand_ins=dict(stand_ins), published=_pins(raw.get("published", []), where),
        url=_str(raw, "url", where, required=False),
        sessions=_sessions(raw.get("sessions", {}), where),
        replication=replication,
        placement=_placement(raw.get("placement"), where),
    )


def study_paths() -> list[Path]:
    """Extra study folders: ``REPRO_STUDY_PATH`` (``os.pathsep``-separated) > ``[studies] paths``."""
    env = os.environ.get("REPRO_STUDY_PATH")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    cfg = load_config().get("studies", {}).get("paths", [])
    if not isinstance(cfg, list) or not all(isinstance(p, str) for p in cfg):
        raise ConfigError("repro.toml: [studies] paths must be a list of folders")
    return [Path(p).expanduser() for p in cfg]


def _folders(root: Path, where: str) -> list[Path]:
    if (root / STUDY_FILE).is_file():
        return [root]
    if not root.is_dir():
        raise ConfigError(f"{where}: study folder {root} not found; point it at a folder holding study.toml, "
                          "or at a folder of study folders")
    return sorted(p.parent for p in root.glob(f"*/{STUDY_FILE}"))


def discover(extra: Sequence[str | os.PathLike[str]] | None = None) -> Registry[Study]:
    """Every study: the built-in ones (by name), then those of ``extra`` (default: the
    configured study paths). Duplicate names are a ConfigError naming both folders."""
    folders = _folders(BUILTIN_DIR, "built-in studies")
    for root in (study_paths() if extra is None else [Path(p) for p in extra]):
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
            raise ConfigError(f"{study.origin}: study {study.name!r} is already defined in {reg.get(study.name).origin}; "
                              "give it another name, or remove one of the two from REPRO_STUDY_PATH")
        reg.register(study.name, study)
    return reg


def select(names: Sequence[str] | None = None) -> list[Study]:
    """The named studies (unknown names fail with the closest matches), or every discovered study."""
    reg = discover()
    return [reg.get(n) for n in names] if names else [s for _, s in reg.items()]


def get_study(name: str) -> Study:
    return discover().get(name)
