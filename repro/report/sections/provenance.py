"""Report section: provenance (data checksums, package and library versions, claim versions)."""

from __future__ import annotations

import platform

from repro import __version__
from repro.base.environment import LOCK_NAME, library_rows
from repro.published.fetch import manifest, sha256_of


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
