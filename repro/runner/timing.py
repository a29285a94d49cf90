"""Runner, time per part: the wall time of stored jobs as their records state it.

The time is provenance ``duration_s``, start to finish (reading, decoding, synthesis, forward
passes, scoring), with the images and forward passes per second it implies. It depends on the
machine and its load, so it is printed by the commands that measure (``reproduce``, ``measure
--session``), never written into REPORT.md (which must be the same on every machine).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from repro.base.errors import DataError
from repro.planner.cost import forward_per_image
from repro.store.files import Store


def time_rows(
    store_dir: str | os.PathLike[str], models: Sequence[str], measurements: Sequence[str]
) -> list[list[str]]:
    """One row per stored job of ``models`` x ``measurements`` that states its duration."""
    store = Store(store_dir)
    rows = []
    for model in models:
        for measurement in measurements:
            try:
                rec = store.read(model, measurement)
            except DataError:
                continue
            prov = rec.provenance if rec is not None and rec.ok else {}
            seconds, items = prov.get("duration_s"), prov.get("dataset_items")
            if not seconds or not items:
                continue
            passes = forward_per_image(measurement) * int(items)
            rows.append(
                [
                    model,
                    measurement,
                    f"{int(items):,}",
                    f"{passes:,}",
                    f"{float(seconds):,.0f}",
                    f"{int(items) / float(seconds):.2f}",
                    f"{passes / float(seconds):.1f}",
                    f"{prov.get('device', '?')}, batch {prov.get('batch_size', '?')}",
                ]
            )
    return rows


def time_table(
    store_dir: str | os.PathLike[str], models: Sequence[str], measurements: Sequence[str]
) -> str:
    """The rows as an aligned text table, or "" when no job states its duration."""
    rows = time_rows(store_dir, models, measurements)
    if not rows:
        return ""
    head = [
        "model",
        "measurement",
        "images",
        "forward passes",
        "wall s",
        "images/s",
        "passes/s",
        "run",
    ]
    table = [head, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    lines = [
        "  ".join(
            c.rjust(w) if 2 <= i <= 6 else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in table
    ]
    return "time per part (each job's record; on the machine that measured it):\n" + "\n".join(
        lines
    )
