"""Claims: parse each study's claim file (the ``claims`` of its study.toml) into ``Claim`` objects.

A file that fails to parse, a missing field, an unknown policy, a claim whose ``study`` is not
the study whose file holds it, or a duplicate id is a ConfigError naming the file and the
claim; nothing is skipped silently.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError
from repro.base.registry import Registry
from repro.base.study import Study, select
from repro.claims.spec import (
    ESTIMAND_KINDS,
    TURNING_POINT_TESTS,
    Claim,
    Derived,
    Equivalence,
    Estimand,
    Tolerance,
    TurningPoint,
)
from repro.claims.tolerance import POLICIES

REQUIRED = ("id", "study", "statement", "source", "statistic", "tolerance", "version")


def _tolerance(body: Any, where: str) -> Tolerance:
    if not isinstance(body, dict):
        raise ConfigError(f"{where}: tolerance must be a table with policy, params, reason")
    policy = body.get("policy")
    if not isinstance(policy, str) or policy not in POLICIES:
        raise ConfigError(f"{where}: unknown tolerance policy {policy!r} (known: {', '.join(POLICIES)})")
    reason = body.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ConfigError(f"{where}: tolerance needs a `reason` (why this tolerance)")
    params = body.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(f"{where}: tolerance params must be a table")
    return Tolerance(policy, dict(params), reason)


def _reasoned(body: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    """A table with a non-empty ``reason`` and no field outside ``allowed``."""
    if not isinstance(body, dict):
        raise ConfigError(f"{where}: expected a table with a `reason`")
    unknown = sorted(set(body) - allowed - {"reason"})
    if unknown:
        raise ConfigError(f"{where}: unknown field {unknown[0]!r} (expected {', '.join(sorted(allowed | {'reason'}))})")
    reason = body.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ConfigError(f"{where}: needs a `reason` (a non-empty string)")
    return body


def _text(body: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = body.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: `{key}` = {value!r:.80}, expected a non-empty string")
    return value


def _estimand(body: Any, where: str) -> Estimand:
    body = _reasoned(body, where, {"kind", "population", "unit", "clusters"})
    kind = body.get("kind")
    if kind not in ESTIMAND_KINDS:
        raise ConfigError(f"{where}: kind = {kind!r:.80}, expected one of {', '.join(ESTIMAND_KINDS)}")
    clusters = body.get("clusters")
    if kind == "sample" and (not isinstance(clusters, str) or ":" not in clusters):
        raise ConfigError(f"{where}: a sample needs `clusters = \"module:function\"` (the units a bootstrap over "
                          f"models resamples), got {clusters!r:.80}")
    if kind == "census" and clusters is not None:
        raise ConfigError(f"{where}: a census has no clusters (no interval over models is formed); drop `clusters`")
    return Estimand(kind, _text(body, "population", where), body["reason"], _text(body, "unit", where, "model"),
                    clusters)


def _equivalence(body: Any, where: str) -> Equivalence:
    body = _reasoned(body, where, {"margin", "alpha"})
    margin, alpha = body.get("margin"), body.get("alpha", 0.05)
    for key, value in (("margin", margin), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise ConfigError(f"{where}: {key} = {value!r:.80}, expected a number strictly between 0 and 1")
    if alpha >= 0.5:
        raise ConfigError(f"{where}: alpha = {alpha}, expected below 0.5 (the test uses a 1 - 2 alpha interval)")
    return Equivalence(float(margin), body["reason"], float(alpha))  # type: ignore[arg-type]


def _turning_point(body: Any, where: str) -> TurningPoint:
    body = _reasoned(body, where, {"decides"})
    decides = body.get("decides")
    if decides not in TURNING_POINT_TESTS:
        raise ConfigError(f"{where}: decides = {decides!r:.80}, expected one of {', '.join(TURNING_POINT_TESTS)}")
    return TurningPoint(decides, body["reason"])


def parse_claim(raw: dict[str, Any], path: Path, index: int) -> Claim:
    where = f"{path}: claim #{index + 1}" + (f" ({raw['id']!r})" if "id" in raw else "")
    missing = [f for f in REQUIRED if f not in raw]
    if missing:
        raise ConfigError(f"{where}: missing field(s) {', '.join(missing)}")
    if ":" not in str(raw["statistic"]):
        raise ConfigError(f"{where}: statistic {raw['statistic']!r} must be 'module:function'")
    expected = raw.get("expected", "reproduced")
    if expected not in ("reproduced", "not_reproduced"):
        raise ConfigError(f"{where}: expected must be 'reproduced' or 'not_reproduced', got {expected!r}")
    published = raw.get("published")
    if published is not None and not isinstance(published, (int, float)):
        raise ConfigError(f"{where}: published must be a number (or omitted for a qualitative claim)")
    return Claim(
        id=str(raw["id"]), study=str(raw["study"]), statement=str(raw["statement"]), source=str(raw["source"]),
        statistic=str(raw["statistic"]), params=dict(raw.get("params", {})),
        published=None if published is None else float(published),
        tolerance=_tolerance(raw["tolerance"], f"{where}: tolerance"), version=int(raw["version"]),
        expected=expected,
        measured_tolerance=(_tolerance(raw["measured_tolerance"], f"{where}: measured_tolerance")
                            if "measured_tolerance" in raw else None),
        qualitative=_tolerance(raw["qualitative"], f"{where}: qualitative") if "qualitative" in raw else None,
        origin=str(path),
        measure=str(raw.get("measure", "")),
        estimand=_estimand(raw["estimand"], f"{where}: estimand") if "estimand" in raw else None,
        derived=Derived(_reasoned(raw["derived"], f"{where}: derived", set())["reason"]) if "derived" in raw else None,
        equivalence=_equivalence(raw["equivalence"], f"{where}: equivalence") if "equivalence" in raw else None,
        turning_point=(_turning_point(raw["turning_point"], f"{where}: turning_point")
                       if "turning_point" in raw else None),
    )


def read_claim_file(path: str | os.PathLike[str]) -> list[Claim]:
    path = Path(path)
    from repro.base.textfile import read_toml

    raw = read_toml(path, "a claims file of [[claim]] tables")
    entries = raw.get("claim")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: no [[claim]] tables")
    return [parse_claim(e, path, i) for i, e in enumerate(entries)]


def study_claims(study: Study) -> list[Claim]:
    """The claims of one study's claim file, each checked to name that study."""
    claims = read_claim_file(study.claims)
    seen: set[str] = set()
    for c in claims:
        if c.id in seen:
            raise ConfigError(f"{study.claims}: claim id {c.id!r} appears twice")
        seen.add(c.id)
        if c.study != study.name:
            raise ConfigError(f"{study.claims}: claim {c.id!r} says study = {c.study!r}, but the file is "
                              f"study {study.name!r}'s (its study.toml: {study.origin})")
    return claims


def load_claims(studies: Sequence[str | Study] | None = None) -> Registry[Claim]:
    """The claims of the given studies (default: every discovered study, in discovery order) as
    a registry (duplicate ids rejected across studies)."""
    chosen = select([s.name if isinstance(s, Study) else s for s in studies] if studies else None)
    reg: Registry[Claim] = Registry("claim")
    for study in chosen:
        for claim in study_claims(study):
            if claim.id in reg:
                raise ConfigError(f"{study.claims}: claim id {claim.id!r} is already defined in "
                                  f"{reg.get(claim.id).origin}")
            reg.register(claim.id, claim)
    return reg
