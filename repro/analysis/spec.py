"""Analysis definition as data: population, groups, categories, biases and benchmarks.

A study's definition is the ``analysis`` file its study.toml names. A user variant is a
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

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError, UnknownNameError
from repro.base.study import discover


@dataclass(frozen=True)
class Selector:
    models: tuple[str, ...] | None = None
    model_categories: tuple[str, ...] | str | None = None
    exclude_model_categories: tuple[str, ...] = ()
    exclude_models: tuple[str, ...] = ()

    def select(self, candidates: list[str], model_categories: dict[str, list[str]], where: str) -> list[str]:
        """The selected models, in the order of ``candidates`` (or of ``models`` when listed)."""
        known_cats = set(model_categories)
        for c in ([] if self.model_categories in (None, "all") else list(self.model_categories)) + list(
                self.exclude_model_categories):
            if c not in known_cats:
                raise ConfigError(f"{where}: unknown model category {c!r} (known: {', '.join(sorted(known_cats))})")
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
    from repro.base.textfile import read_toml

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


def _raw(ref: str | os.PathLike[str], base: Path | None = None, depth: int = 0) -> tuple[dict[str, Any], Path]:
    path = _resolve(ref, base)
    data = _read(path)
    if "extends" in data:
        if not isinstance(data["extends"], str) or not data["extends"]:
            raise ConfigError(f"{path}: extends = {data['extends']!r}, expected a study name or a .toml path")
        if depth > 5:
            raise ConfigError(f"{path}: `extends` chain is too deep (more than 5 files; check that no file "
                              "extends itself)")
        try:
            parent, _ = _raw(data["extends"], path.parent, depth + 1)
        except ConfigError as exc:
            if str(path) in str(exc):
                raise
            raise ConfigError(f"{path}: extends = {data['extends']!r}: {exc}") from None
        data = _merge(parent, data)
    return data, path


def _tuple(value: Any, where: str, field_name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: field {field_name!r} must be a list of strings")
    return tuple(value)


def _selector(body: dict[str, Any], where: str) -> Selector:
    unknown = set(body) - {"models", "model_categories", "exclude_model_categories", "exclude_models", "label"}
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {', '.join(sorted(unknown))} "
                          "(expected models, model_categories, exclude_model_categories, exclude_models)")
    mc = body.get("model_categories")
    return Selector(
        models=_tuple(body["models"], where, "models") if "models" in body else None,
        model_categories=mc if mc in (None, "all") else _tuple(mc, where, "model_categories"),
        exclude_model_categories=_tuple(body.get("exclude_model_categories", []), where, "exclude_model_categories"),
        exclude_models=_tuple(body.get("exclude_models", []), where, "exclude_models"),
    )


def _table(raw: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = raw[key]
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {key} = {value!r:.80}, expected a table [{key}]")
    return value


def _label(body: dict[str, Any], default: str, where: str) -> str:
    label = body.get("label", default)
    if not isinstance(label, str):
        raise ConfigError(f"{where}: label = {label!r:.80}, expected a string")
    return label


def _derived(kind: str, entries: dict[str, Any], where: str) -> dict[str, Derived]:
    out = {}
    for key, body in entries.items():
        w = f"{where}: [{kind}.{key}]"
        if not isinstance(body, dict) or "columns" not in body:
            raise ConfigError(f"{w} needs `columns = [...]` (benchmark.csv column names)")
        cols = _tuple(body["columns"], w, "columns")
        if not cols:
            raise ConfigError(f"{w}: `columns` is empty")
        out[key] = Derived(key, _label(body, key, w), cols)
    return out


#: the top-level keys of an analysis definition
TOP_KEYS = frozenset({"extends", "name", "alpha", "population", "groups", "categories", "biases", "benchmarks",
                      "bootstrap"})


def _number(table: dict[str, Any], key: str, default: Any, kind: type, where: str) -> Any:
    """``table[key]`` as an int (``kind=int``: an integer) or a finite float; ConfigError naming it."""
    import math

    value = table.get(key, default)
    ok = isinstance(value, int) if kind is int else isinstance(value, int | float) and math.isfinite(value)
    if isinstance(value, bool) or not ok:
        raise ConfigError(f"{where}: {key} = {value!r:.80}, expected {'an integer' if kind is int else 'a finite number'}")
    return kind(value)


def load_spec(ref: str | os.PathLike[str]) -> AnalysisSpec:
    """The analysis definition: a study name (its definition) or a TOML path."""
    raw, path = _raw(ref)
    where = str(path)
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        from repro.base.config_check import did_you_mean

        raise ConfigError(f"{where}: unknown key {unknown[0]!r:.80}{did_you_mean(unknown[0], TOP_KEYS)} "
                          f"(expected {', '.join(sorted(TOP_KEYS))})")
    for required in ("population", "groups", "categories", "biases", "benchmarks"):
        if required not in raw:
            raise ConfigError(f"{where}: missing table [{required}] (an analysis definition needs [population], "
                              "[groups], [categories], [biases] and [benchmarks], or `extends` a study's)")
        _table(raw, required, where)
    boot = _table(raw, "bootstrap", where) if "bootstrap" in raw else {}
    bad_boot = sorted(set(boot) - {"resamples", "seed", "confidence"})
    if bad_boot:
        raise ConfigError(f"{where}: [bootstrap] unknown key {bad_boot[0]!r:.80} (expected resamples, seed, confidence)")
    resamples = _number(boot, "resamples", 2000, int, f"{where}: [bootstrap]")
    if resamples < 2000:
        raise ConfigError(f"{where}: [bootstrap] resamples = {resamples}, expected at least 2000")
    confidence = _number(boot, "confidence", 0.95, float, f"{where}: [bootstrap]")
    alpha = _number(raw, "alpha", 0.05, float, where)
    for key, value in (("confidence", confidence), ("alpha", alpha)):
        if not 0 < value < 1:
            raise ConfigError(f"{where}: {key} = {value}, expected a number strictly between 0 and 1")
    groups = {}
    for gid, body in raw["groups"].items():
        w = f"{where}: [groups.{gid}]"
        if not isinstance(body, dict):
            raise ConfigError(f"{w}: {body!r:.80}, expected a table with models or model_categories")
        groups[gid] = Group(gid, _label(body, gid, w), _selector(body, w))
    name = raw.get("name", path.stem)
    if not isinstance(name, str):
        raise ConfigError(f"{where}: name = {name!r:.80}, expected a string")
    benchmarks = raw["benchmarks"]
    if not all(isinstance(v, str) for v in benchmarks.values()):
        raise ConfigError(f"{where}: [benchmarks] maps ids to benchmark.csv column names (strings)")
    return AnalysisSpec(
        name=name,
        alpha=alpha,
        population=_selector(raw["population"], f"{where}: [population]"),
        groups=groups,
        categories=_derived("categories", raw["categories"], where),
        biases=_derived("biases", raw["biases"], where),
        benchmarks=dict(benchmarks),
        resamples=resamples,
        seed=_number(boot, "seed", 0, int, f"{where}: [bootstrap]"),
        confidence=confidence,
        origin=where,
        raw=raw,
    )
