"""Report section: provenance (data checksums, package and library versions, claim versions)."""

from __future__ import annotations

import platform
from importlib import metadata

LIBRARIES = ("numpy", "scipy", "matplotlib", "pandas", "syrupy")


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def render(ctx) -> str:
    from repro import __version__
    from repro.published.benchmark import BENCHMARK_FILE
    from repro.published.categories import CATEGORIES_FILE
    from repro.published.fetch import manifest, sha256_of

    c = ctx.claims
    lines = ["## Provenance", "", "| input | sha256 | pinned source |", "|---|---|---|"]
    for rel in (BENCHMARK_FILE, CATEGORIES_FILE):
        path = c.data_dir / rel
        pinned = manifest().get(rel)
        digest = sha256_of(path) if path.is_file() else "missing"
        src = f"{pinned.repository}@{pinned.commit[:7]}:{pinned.source_path}" if pinned else "-"
        match = "" if not pinned or digest == pinned.sha256 else " (DOES NOT MATCH the pinned checksum)"
        lines.append(f"| `{rel}` | `{digest}`{match} | {src} |")
    measured = sorted({col for col, label in c.table.sources.items() if label != "published"})
    if measured:
        lines += ["", f"Columns from our own measurements ({len(measured)}): " + ", ".join(f"`{m}`" for m in measured)]
    lines += ["", "| software | version |", "|---|---|", f"| repro | {__version__} |",
              f"| python | {platform.python_version()} |"]
    lines += [f"| {lib} | {_version(lib)} |" for lib in LIBRARIES]
    lines += ["", "Claim versions: " + ", ".join(f"`{o.claim.id}` v{o.claim.version}" for o in ctx.outcomes) + "."]
    return "\n".join(lines) + "\n"
