"""Report section: provenance (data checksums, package and library versions, claim versions)."""

from __future__ import annotations

import platform

from repro import __version__
from repro.base.environment import LOCK_NAME, library_rows
from repro.published.fetch import manifest, sha256_of


def pinned_rows(ctx) -> list[str]:
    """Per study and pinned source: how many pinned published files are present and match.

    Counted: the pinned published files that are in the data directory and match their pinned
    sha256 (each is verified again when a loader reads it)."""
    lines = ["| study | pinned files | source |", "|---|---|---|"]
    for c, _ in ctx.studies:
        by_source: dict[str, list] = {}
        for pinned in c.study.published:
            key = f"{pinned.repository}@{pinned.commit[:7]}"
            by_source.setdefault(key, []).append(pinned)
        for src, files in by_source.items():
            states = [_state(c.data_dir / f.path, f.sha256) for f in files]
            text = f"{states.count('match')} of {len(files)} match their pinned sha256"
            text += "".join(
                f"; {states.count(k)} {k}" for k in ("missing", "DO NOT MATCH") if k in states
            )
            lines.append(f"| `{c.study.name}` | {text} | {src} |")
    return lines


def _state(path, sha256: str) -> str:
    if not path.is_file():
        return "missing"
    return "match" if sha256_of(path) == sha256 else "DO NOT MATCH"


def render(ctx) -> str:
    lines = ["## Provenance", "", "| input | sha256 | pinned source |", "|---|---|---|"]
    pins = manifest()
    for c, rel in [(sc, rel) for sc, _ in ctx.studies for rel in sc.study.inputs]:
        path = c.data_dir / rel
        pinned = pins.get(rel)
        digest = sha256_of(path) if path.is_file() else "missing"
        src = f"{pinned.repository}@{pinned.commit[:7]}:{pinned.source_path}" if pinned else "-"
        match = (
            "" if not pinned or digest == pinned.sha256 else " (DOES NOT MATCH the pinned checksum)"
        )
        lines.append(f"| `{rel}` | `{digest}`{match} | {src} |")
    lines += ["", *pinned_rows(ctx)]
    measured = sorted(
        {
            col
            for c, _ in ctx.studies
            for col, label in c.table.sources.items()
            if label != "published"
        }
    )
    if measured:
        lines += [
            "",
            f"Columns from our own measurements ({len(measured)}): "
            + ", ".join(f"`{m}`" for m in measured),
        ]
    lines += [
        "",
        "| software | version |",
        "|---|---|",
        f"| repro | {__version__} |",
        f"| python | {'.'.join(platform.python_version_tuple()[:2])} |",
    ]
    lines += [f"| {lib} | {version} |" for lib, version in library_rows()]
    lines += [
        "",
        f"The libraries that compute and draw the numbers; the environment is `{LOCK_NAME}`.",
    ]
    versions = [
        f"`{o.claim.id}` v{o.claim.version}" for _, outcomes in ctx.studies for o in outcomes
    ]
    lines += ["", "Claim versions: " + ", ".join(versions) + "."]
    return "\n".join(lines) + "\n"
