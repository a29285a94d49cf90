"""A measurement store's files as data, for comparing two runs that should write the same
records: every file but locks, by its path inside the store; a JSON record parsed, with the
provenance fields that differ between any two runs (times, durations, the process) left out."""

from __future__ import annotations

import json
from pathlib import Path

TIMING = {"started_utc", "finished_utc", "duration_s", "pid"}


def records_without_timing(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.endswith(".lock"):
            key = str(path.relative_to(root))
            if path.suffix == ".json":
                doc = json.loads(path.read_text())
                doc["provenance"] = {
                    k: v for k, v in doc.get("provenance", {}).items() if k not in TIMING
                }
                out[key] = doc
            else:
                out[key] = path.read_bytes()
    return out
