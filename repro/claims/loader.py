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
from repro.base.schema import check
from repro.base.study import Study, select
from repro.base.textfile import read_toml
from repro.claims.spec import Claim, ClaimFile
from repro.claims.tolerance import POLICIES


def claim_context() -> dict[str, Any]:
    """What a claim file's schema checks against.

    The tolerance policies (``repro.claims.tolerance``)."""
    return {"known_policies": set(POLICIES), "policies": ", ".join(POLICIES)}


def read_claim_file(path: str | os.PathLike[str]) -> list[Claim]:
    path = Path(path)

    raw = read_toml(path, "a claims file of [[claim]] tables")
    return list(check(ClaimFile, raw, str(path), context=claim_context()).claim)


def study_claims(study: Study) -> list[Claim]:
    """The claims of one study's claim file, each checked to name that study."""
    claims = read_claim_file(study.claims)
    seen: set[str] = set()
    for c in claims:
        if c.id in seen:
            raise ConfigError(f"{study.claims}: claim id {c.id!r} appears twice")
        seen.add(c.id)
        if c.study != study.name:
            raise ConfigError(
                f"{study.claims}: claim {c.id!r} says study = {c.study!r}, but the file is "
                f"study {study.name!r}'s (its study.toml: {study.origin})"
            )
    return claims


def load_claims(studies: Sequence[str | Study] | None = None) -> Registry[Claim]:
    """The claims of the given studies as a registry (duplicate ids rejected across studies).

    Default: every discovered study, in discovery order."""
    chosen = select([s.name if isinstance(s, Study) else s for s in studies] if studies else None)
    reg: Registry[Claim] = Registry("claim")
    for study in chosen:
        for claim in study_claims(study):
            if claim.id in reg:
                raise ConfigError(
                    f"{study.claims}: claim id {claim.id!r} is already defined in "
                    f"{reg.get(claim.id).origin}"
                )
            reg.register(claim.id, claim)
    return reg
