"""Runner, execution orders in the cost model: the study's wall hours on one device box.

The second table of ``python -m repro plan``: model-major and data-major side by side, with decoding
and the crop cache counted. Pure arithmetic over ``repro.planner.cost``'s work and rates.

The box (``Box``): its CPU cores decode, its disk holds the crop cache. Defaults: the lent H200
box (16 cores, 64 GB disk). Decoding: ``per_core_per_s`` images per second and core for each
preprocessing (``repro.planner.decode_rate``: measured on this machine and cached by the
throughput harness, or read from a ``--throughput`` JSON measured on the box; else the stated
``cost.DECODE_PER_S``), on every core of the box, overlapped with the device.

Crop cache (``repro.datasets.cache``): a dataset's crops take ``images x 3 x 224 x 224`` bytes. The
cache may take ``CACHE_FRACTION`` of the disk (the rest: the datasets' own files, the
environment, the store); datasets are cached while they fit, the ones most measurements read
first, then the smallest. A cached dataset is decoded once, when its cache is built; reading the
cache is assumed to cost nothing next to the device. ImageNet-C and -C-bar (7.25M images, about
1.1 TB of crops) never fit on such a disk, so they are decoded on every pass.

Per measurement, with ``device_s`` one model's device seconds (``cost.plan``'s) and ``decode_s``
one decoding pass over the measurement's images on all cores:

* model-major: each model streams the measurement's inputs itself: ``models x max(device_s,
  decode_s)`` (``decode_s`` 0 when cached);
* data-major (``repro.runner.data_major``): each batch decoded once for all models:
  ``max(models x device_s, decode_s)``; PGD stays model-major (its inputs are each model's own
  attack);

plus, for a cached dataset, its one build (``decode_s`` once, at its first measurement). PGD runs
in float32 in every column (bfloat16 changes the attack's strength: it would not be the paper's
PGD-40). A ``--throughput`` JSON with a ``data_major`` run (tests/gpu/device_check.sh) replaces,
for the classify stage of a dataset decoded on every pass, ``max(models x device_s, decode_s)`` by
the measured data-major rate (decode included); a cached dataset pays no decode per pass, so its
measurements keep ``models x device_s``. Wall hours = the sum over measurements / ``gpus``.

The goal (``GOAL_HOURS``): the 48-model study in at most 4 wall hours on one H200. Where a
projection exceeds it, ``over_goal`` names the measurements (and whether the device or decoding
bounds each) that, dropped largest first, would bring it within the goal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError
from repro.planner.cost import DECODE_PER_S

GOAL_HOURS = 4.0
GOAL_MODELS = 48
#: the share of the disk the crop cache may take
CACHE_FRACTION = 0.5
#: the lent device box (one H200): CPU cores and disk
BOX_CORES = 16
BOX_DISK_GB = 64.0


@dataclass(frozen=True)
class Decode:
    """Decodes per second per core, by preprocessing id, and where the numbers come from."""

    per_core_per_s: Mapping[str, float]
    source: str
    cores: int | None = None  # the cores of the machine that measured them (None: stated)

    def rate(self, preprocessing: str) -> float:
        from repro.datasets.specs import AS_IS_224, RESIZE_CROP

        key = (
            preprocessing
            if preprocessing in self.per_core_per_s
            else (AS_IS_224 if preprocessing == AS_IS_224 else RESIZE_CROP)
        )
        return float(self.per_core_per_s.get(key, next(iter(self.per_core_per_s.values()))))


def stated_decode() -> Decode:
    from repro.datasets.specs import AS_IS_224, RESIZE_CROP

    return Decode(
        {RESIZE_CROP: DECODE_PER_S, AS_IS_224: DECODE_PER_S},
        f"ASSUMED {DECODE_PER_S:g}/s per core (no measurement: python -m repro throughput measures "
        "it)",
    )


def _from_doc(doc: Mapping[str, Any], where: str) -> Decode:
    rates = {str(k): float(v) for k, v in doc["per_core_per_s"].items()}
    if not rates or any(not v > 0 for v in rates.values()):
        raise ValueError("per_core_per_s: expected positive rates")
    short = ", ".join(
        f"{v:,.0f}/s {'224 px as is' if 'as-is' in k else 'resize-crop'}" for k, v in rates.items()
    )
    return Decode(
        rates,
        f"measured {short} per core on {doc.get('host', '?')} ({doc.get('cores', '?')} cores; "
        f"{where})",
        int(doc["cores"]) if doc.get("cores") else None,
    )


def decode_rates(throughput: str | Path | None = None) -> Decode:
    """The decode rates of a ``--throughput`` JSON, else this machine's cached ones, else stated.

    A ``--throughput`` JSON's ``decode`` was measured on the box; else this machine's cached
    measurement (``repro.planner.decode_rate``), else the stated rate. Never measures (``plan``
    stays interactive)."""
    if throughput is not None:
        doc = json.loads(Path(throughput).read_text())
        if isinstance(doc.get("decode"), Mapping):
            try:
                return _from_doc(doc["decode"], str(throughput))
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigError(
                    f"{throughput}: field decode: {exc}; expected the decode rates python -m repro "
                    "throughput writes"
                ) from None
    from repro.planner.decode_rate import cache_path

    path = cache_path()
    try:
        return _from_doc(json.loads(path.read_text()), f"cached in {path}")
    except (OSError, KeyError, TypeError, ValueError):
        return stated_decode()


def data_major_rates(throughput: str | Path | None, precision: str) -> tuple[float, int] | None:
    """The ``data_major`` run's rate in a ``--throughput`` JSON at ``precision``, if it has one.

    As (model passes per second through the resident models, decode included; models)."""
    if throughput is None:
        return None
    doc = json.loads(Path(throughput).read_text())
    for run in doc.get("data_major") or ():
        if run.get("precision") == precision and float(run.get("passes_per_s", 0)) > 0:
            return float(run["passes_per_s"]), int(run.get("models", 0))
    return None


@dataclass(frozen=True)
class Box:
    cores: int = BOX_CORES
    disk_bytes: float = BOX_DISK_GB * 1e9
    gpus: int = 1


@dataclass(frozen=True)
class DatasetIO:
    dataset: str
    images: int
    crop_bytes: float
    cached: bool
    decode_s: float  # one pass over every image on every core of the box
    readers: int  # measurements reading it


def dataset_io(work: Sequence[Any], decode: Decode, box: Box) -> dict[str, DatasetIO]:
    """Crop bytes, cache decision and one decoding pass of each dataset of ``work``.

    See the module docstring."""
    from repro.datasets.decode import crop_size
    from repro.datasets.specs import get_spec

    readers: dict[str, int] = {}
    images: dict[str, int] = {}
    for w in work:
        readers[w.dataset] = readers.get(w.dataset, 0) + 1
        images[w.dataset] = max(images.get(w.dataset, 0), w.images)
    info = {}
    for name in readers:
        pre = get_spec(name).preprocessing
        side = crop_size(pre)
        info[name] = (images[name] * 3 * side * side, images[name] / (decode.rate(pre) * box.cores))
    budget, used, cached = CACHE_FRACTION * box.disk_bytes, 0.0, set()
    for name in sorted(readers, key=lambda d: (-readers[d], info[d][0])):
        if used + info[name][0] <= budget:
            used += info[name][0]
            cached.add(name)
    return {
        n: DatasetIO(n, images[n], info[n][0], n in cached, info[n][1], readers[n]) for n in readers
    }


@dataclass(frozen=True)
class OrderRow:
    measurement: str
    dataset: str
    device_h: float  # all models, the device alone
    decode_h: dict[str, float]  # per order: decoding hours (all models)
    wall_h: dict[str, float]  # per order: wall hours (all models)
    bound: dict[str, str] = field(default_factory=dict)  # per order: "device" or "decode"


ORDERS = ("model-major", "data-major")


def orders(
    work: Sequence[Any],
    device_s: Mapping[str, float],
    io: Mapping[str, DatasetIO],
    *,
    models: int,
    data_major_rate: float | None = None,
) -> list[OrderRow]:
    """Wall hours per measurement in each order (see the module docstring).

    ``device_s``: one model's device seconds per measurement; ``data_major_rate``: measured model
    passes per second of the classify stage in data-major order, decode included (None: from the
    device and decode)."""
    rows, built = [], set()
    for w in work:
        d = io[w.dataset]
        dev = models * device_s[w.measurement]
        build = d.decode_s if d.cached and w.dataset not in built else 0.0
        built.add(w.dataset) if d.cached else None
        per_pass = 0.0 if d.cached else d.decode_s
        mm_decode = models * per_pass
        mm_wall = models * max(device_s[w.measurement], per_pass) + build
        attack = w.backward > 0
        if attack:
            dm_decode, dm_wall = mm_decode, mm_wall
        elif data_major_rate is not None and w.stage == "classify" and not d.cached:
            dm_decode, dm_wall = per_pass, models * w.forward / data_major_rate + build
        else:
            dm_decode, dm_wall = per_pass, max(dev, per_pass) + build
        bound = {
            "model-major": "device" if device_s[w.measurement] >= per_pass else "decode",
            "data-major": "device" if attack or dev >= per_pass else "decode",
        }
        rows.append(
            OrderRow(
                w.measurement,
                w.dataset,
                dev / 3600,
                {
                    "model-major": (mm_decode + build) / 3600,
                    "data-major": (dm_decode + build) / 3600,
                },
                {"model-major": mm_wall / 3600, "data-major": dm_wall / 3600},
                bound,
            )
        )
    return rows


def over_goal(
    rows: Sequence[OrderRow], order: str, gpus: int, goal: float = GOAL_HOURS
) -> list[tuple[str, float, str]]:
    """The measurements (name, wall hours, bound) that bring the total within ``goal``.

    Dropped largest first; empty when the total is within it already."""
    total = sum(r.wall_h[order] for r in rows) / gpus
    out = []
    for r in sorted(rows, key=lambda r: -r.wall_h[order]):
        if total <= goal:
            break
        out.append((r.measurement, r.wall_h[order] / gpus, r.bound[order]))
        total -= r.wall_h[order] / gpus
    return out


def _bytes(n: float) -> str:
    return (
        f"{n / 1e12:.2f} TB"
        if n >= 1e12
        else f"{n / 1e9:.1f} GB"
        if n >= 1e9
        else f"{n / 1e6:.0f} MB"
    )


def format_io(io: Mapping[str, DatasetIO], decode: Decode, box: Box) -> str:
    lines = [
        f"decoding and the crop cache on the device box ({box.cores} cores, "
        f"{box.disk_bytes / 1e9:g} GB disk; the cache may take {CACHE_FRACTION:.0%}: "
        f"{_bytes(CACHE_FRACTION * box.disk_bytes)})",
        f"  decode: {decode.source}",
        "",
    ]
    head = f"{'dataset':<16} {'images':>10} {'crops':>9} {'cache':<26} {'decode h/pass':>13}"
    lines += [head, "-" * len(head)]
    for d in io.values():
        where = "cached (decoded once)" if d.cached else "no: decoded on every pass"
        lines.append(
            f"{d.dataset:<16} {d.images:>10,} {_bytes(d.crop_bytes):>9} {where:<26} "
            f"{d.decode_s / 3600:>13.2f}"
        )
    total = sum(d.crop_bytes for d in io.values())
    lines += [
        "-" * len(head),
        f"{'all':<16} {sum(d.images for d in io.values()):>10,} {_bytes(total):>9} "
        f"({_bytes(sum(d.crop_bytes for d in io.values() if d.cached))} cached)",
    ]
    return "\n".join(line.rstrip() for line in lines)


def order_totals(
    columns: Mapping[str, Sequence[OrderRow]], gpus: int
) -> dict[tuple[str, str], float]:
    """(column title, order) -> the wall hours of the whole run on ``gpus`` devices."""
    return {
        (t, o): sum(r.wall_h[o] for r in rows) / gpus for t, rows in columns.items() for o in ORDERS
    }


def format_orders(
    columns: Mapping[str, Sequence[OrderRow]],
    *,
    models: int,
    gpus: int,
    device: str,
    notes: Sequence[str] = (),
) -> str:
    """Wall hours per measurement for each (title: rows) column, model-major and data-major.

    Side by side, with the total and the goal line."""
    titles = list(columns)
    cells = [(t, o) for t in titles for o in ORDERS]
    labels = [f"{o.split('-')[0]} {t}" for t, o in cells]
    width = max(12, *(len(x) for x in labels))
    head = f"{'measurement':<16} " + " ".join(f"{x:>{width}}" for x in labels)
    first = columns[titles[0]]
    lines = [
        f"wall hours of {models} models on {gpus} device(s), {device}, by execution order (model = "
        "model-major, data = data-major; PGD in float32 everywhere)",
        *[f"  {n}" for n in notes],
        "",
        head,
        "-" * len(head),
    ]
    for i, r in enumerate(first):
        vals = []
        for t, o in cells:
            row = columns[t][i]
            vals.append(f"{row.wall_h[o] / gpus:>{width - 2}.2f} {row.bound[o][:2]}")
        lines.append(f"{r.measurement:<16} " + " ".join(vals))
    totals = order_totals(columns, gpus)
    lines += [
        "-" * len(head),
        f"{'total':<16} " + " ".join(f"{totals[c]:>{width - 2}.2f}   " for c in cells),
        "(de: the device bounds it, dc: decoding does)",
        "",
    ]
    lines.append(
        f"goal: the {GOAL_MODELS}-model study in at most {GOAL_HOURS:g} wall hours on one H200 "
        "(this suite's target for re-running the study on one lent GPU, not the paper's; a "
        "projection over it names what takes the time, it is not an error)"
    )
    for t, o in cells:
        over = over_goal(columns[t], o, gpus)
        label = f"{o} {t}"
        if not over:
            lines.append(f"  {label}: {totals[(t, o)]:.2f} h: within the goal")
        else:
            named = ", ".join(f"{m} {h:.2f} h ({b})" for m, h, b in over)
            lines.append(
                f"  {label}: {totals[(t, o)]:.2f} h: exceeds it by "
                f"{totals[(t, o)] - GOAL_HOURS:.2f} h; over it: {named}"
            )
    return "\n".join(line.rstrip() for line in lines)
