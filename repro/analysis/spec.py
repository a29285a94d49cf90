"""Analysis definition as data: population, groups, categories, biases and benchmarks.

A study's definition is the ``analysis`` file its study.toml names. A user's own analysis is a
TOML file with ``extends = "<study name>"`` (that study's definition) or ``extends = "<path>"``
whose tables add or replace entries:
``[categories.<id>]``, ``[biases.<id>]``, ``[groups.<id>]`` replace one entry each;
``[population]``, ``[bootstrap]``, ``[benchmarks]`` and ``alpha`` replace the whole value.
Set an entry to ``{ drop = true }`` to remove it.

A model selector (population or group) is a table with any of: ``models`` (explicit list),
``model_categories`` (``"all"`` or category names of the study's categories),
``exclude_model_categories``, ``exclude_models``.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from repro.base.errors import ConfigError, UnknownNameError
from repro.base.schema import Expect, Float, Int, check, rule, table
from repro.base.study import discover
from repro.base.textfile import read_toml

STRINGS = "{where}: field {key!r} must be a list of strings"
Names = Annotated[tuple[str, ...], Expect(STRINGS)]
SELECTOR_UNKNOWN = (
    "{where}: unknown field(s) {unknown} (expected models, model_categories, "
    "exclude_model_categories, exclude_models)"
)


@table
class Selector:
    """Which models: an explicit list or model categories, less the excluded ones.

    ``models`` (an explicit list), ``model_categories`` (``"all"`` or names of the study's
    categories), less ``exclude_model_categories`` and ``exclude_models``.
    """

    WHERE: ClassVar[str] = "{parent}: [{key}]"
    UNKNOWN: ClassVar[str] = SELECTOR_UNKNOWN
    models: Names | None = None
    model_categories: Annotated[Names | Literal["all"], Expect(STRINGS)] | None = None
    exclude_model_categories: Names = ()
    exclude_models: Names = ()

    def select(
        self, candidates: list[str], model_categories: dict[str, list[str]], where: str
    ) -> list[str]:
        """The selected models, in the order of ``candidates`` (or of ``models`` when listed)."""
        known_cats = set(model_categories)
        for c in (
            [] if self.model_categories in (None, "all") else list(self.model_categories)
        ) + list(self.exclude_model_categories):
            if c not in known_cats:
                raise ConfigError(
                    f"{where}: unknown model category {c!r} (known: "
                    f"{', '.join(sorted(known_cats))})"
                )
        if self.models is not None:
            chosen = list(self.models)
        elif self.model_categories == "all" or self.model_categories is None:
            chosen = list(candidates)
        else:
            wanted = {m for c in self.model_categories for m in model_categories[c]}
            chosen = [m for m in candidates if m in wanted]
        excluded = {m for c in self.exclude_model_categories for m in model_categories[c]}
        excluded |= set(self.exclude_models)
        return [m for m in chosen if m not in excluded]


@dataclass(frozen=True)
class Derived:
    """A per-model quantity: the unweighted mean of ``columns``."""

    id: str
    label: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Group:
    id: str
    label: str
    selector: Selector


@dataclass(frozen=True)
class AnalysisSpec:
    """An analysis as its TOML declares it: population, groups, and the biases and categories."""

    name: str
    alpha: float
    population: Selector
    groups: dict[str, Group]
    categories: dict[str, Derived]
    biases: dict[str, Derived]
    benchmarks: dict[str, str]
    resamples: int = 2000
    seed: int = 0
    confidence: float = 0.95
    origin: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def columns(self) -> list[str]:
        """Every benchmark.csv column the analysis reads."""
        cols: list[str] = []
        for d in [*self.categories.values(), *self.biases.values()]:
            cols += [c for c in d.columns if c not in cols]
        cols += [c for c in self.benchmarks.values() if c not in cols]
        return cols


def _read(path: Path) -> dict[str, Any]:
    return read_toml(path, "an analysis definition (.toml)")


def _resolve(ref: str | os.PathLike[str], base: Path | None = None) -> Path:
    p = Path(ref)
    if p.suffix != ".toml":  # a study name: that study's analysis definition
        try:
            study = discover().get(str(ref))
        except UnknownNameError as exc:
            raise ConfigError(f"analysis definition {ref!r}: not a .toml path, and {exc}") from None
        if study.analysis is None:
            raise ConfigError(f"{study.origin}: study {study.name!r} has no analysis definition")
        return study.analysis
    if base is not None and not p.is_absolute():
        p = base / p
    return p


def _merge(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(parent)
    for key, value in child.items():
        if key == "extends":
            continue
        if key in ("groups", "categories", "biases") and isinstance(value, dict):
            merged = dict(parent.get(key, {}))
            for entry, body in value.items():
                if isinstance(body, dict) and body.get("drop"):
                    merged.pop(entry, None)
                else:
                    merged[entry] = body
            out[key] = merged
        else:
            out[key] = value
    return out


def _raw(
    ref: str | os.PathLike[str], base: Path | None = None, depth: int = 0
) -> tuple[dict[str, Any], Path]:
    path = _resolve(ref, base)
    data = _read(path)
    if "extends" in data:
        if not isinstance(data["extends"], str) or not data["extends"]:
            raise ConfigError(
                f"{path}: extends = {data['extends']!r}, expected a study name or a .toml path"
            )
        if depth > 5:
            raise ConfigError(
                f"{path}: `extends` chain is too deep (more than 5 files; check that no file "
                "extends itself)"
            )
        try:
            parent, _ = _raw(data["extends"], path.parent, depth + 1)
        except ConfigError as exc:
            if str(path) in str(exc):
                raise
            raise ConfigError(f"{path}: extends = {data['extends']!r}: {exc}") from None
        data = _merge(parent, data)
    return data, path


# --------------------------------------------------------------------------- the file's schema
LABEL = Expect("{where}: label = {value!r:.80}, expected a string")
INTEGER = Expect("{where}: {key} = {value!r:.80}, expected an integer")
NUMBER = Expect("{where}: {key} = {value!r:.80}, expected a finite number")
TABLE = "{where}: {key} = {value!r:.80}, expected a table [{key}]"
REQUIRED = Expect(
    missing="{where}: missing table [{key}] (an analysis definition needs [population], [groups], "
    "[categories], [biases] and [benchmarks], or `extends` a study's)",
    top=TABLE,
)


def _fraction(name: str) -> Any:
    return rule(
        lambda v: 0 < v < 1,
        "{origin}: " + name + " = {value}, expected a number strictly between 0 and 1",
    )


@table
class GroupTable(Selector):
    """``[groups.<id>]``: a label and a model selector."""

    WHERE: ClassVar[str] = "{parent}: [groups.{key}]"
    INVALID: ClassVar[str] = (
        "{where}: {value!r:.80}, expected a table with models or model_categories"
    )
    label: Annotated[str, LABEL] | None = None

    def group(self, gid: str) -> Group:
        selector = Selector(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Selector)})
        return Group(gid, self.label if self.label is not None else gid, selector)


COLUMNS = "{where} needs `columns = [...]` (benchmark.csv column names)"


@table
class DerivedTable:
    """``[categories.<id>]`` / ``[biases.<id>]``: a label and the benchmark.csv columns averaged."""

    WHERE: ClassVar[str] = "{parent}: [{field}.{key}]"
    INVALID: ClassVar[str] = COLUMNS
    columns: Annotated[
        tuple[str, ...],
        rule(bool, "{where}: `columns` is empty"),
        Expect("{where}: field 'columns' must be a list of strings", missing=COLUMNS),
    ]
    label: Annotated[str, LABEL] | None = None

    def derived(self, key: str) -> Derived:
        return Derived(key, self.label if self.label is not None else key, self.columns)


@table
class Bootstrap:
    """``[bootstrap]``: the bootstrap interval of every correlation."""

    WHERE: ClassVar[str] = "{parent}: [bootstrap]"
    UNKNOWN: ClassVar[str] = "{where} unknown key {key!r:.80} (expected {known})"
    resamples: Annotated[
        Int,
        rule(lambda n: n >= 2000, "{where} resamples = {value}, expected at least 2000"),
        INTEGER,
    ] = 2000
    seed: Annotated[Int, INTEGER] = 0
    confidence: Annotated[Float, Field(allow_inf_nan=False), _fraction("confidence"), NUMBER] = 0.95


@table
class AnalysisFile:
    """An analysis definition (after its ``extends`` chain is merged): the module docstring."""

    WHERE: ClassVar[str] = "{parent}"
    KNOWN: ClassVar[tuple[str, ...]] = (
        "alpha",
        "benchmarks",
        "biases",
        "bootstrap",
        "categories",
        "extends",
        "groups",
        "name",
        "population",
    )
    UNKNOWN: ClassVar[str] = "{where}: unknown key {key!r:.80}{dym} (expected {known})"
    population: Annotated[Selector, REQUIRED]
    groups: Annotated[dict[str, GroupTable], REQUIRED]
    categories: Annotated[dict[str, DerivedTable], REQUIRED]
    biases: Annotated[dict[str, DerivedTable], REQUIRED]
    benchmarks: Annotated[
        dict[str, str],
        Expect(
            "{where}: [benchmarks] maps ids to benchmark.csv column names (strings)",
            REQUIRED.missing,
            TABLE,
        ),
    ]
    name: Annotated[str, Expect("{where}: name = {value!r:.80}, expected a string")] | None = None
    alpha: Annotated[Float, Field(allow_inf_nan=False), _fraction("alpha"), NUMBER] = 0.05
    bootstrap: Annotated[Bootstrap, Expect(top=TABLE)] = Field(default_factory=Bootstrap)
    extends: str | None = None  # merged away (``_raw``) before the check


def load_spec(ref: str | os.PathLike[str]) -> AnalysisSpec:
    """The analysis definition: a study name (its definition) or a TOML path."""
    raw, path = _raw(ref)
    spec = check(AnalysisFile, raw, str(path))
    return AnalysisSpec(
        name=spec.name if spec.name is not None else path.stem,
        alpha=spec.alpha,
        population=spec.population,
        groups={gid: body.group(gid) for gid, body in spec.groups.items()},
        categories={key: body.derived(key) for key, body in spec.categories.items()},
        biases={key: body.derived(key) for key, body in spec.biases.items()},
        benchmarks=dict(spec.benchmarks),
        resamples=spec.bootstrap.resamples,
        seed=spec.bootstrap.seed,
        confidence=spec.bootstrap.confidence,
        origin=str(path),
        raw=raw,
    )
