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
from repro.claims.spec import Claim, Tolerance
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
