"""``python -m repro plan --confidence C``: the subset plan beside the projection.

From ``repro.planner.subset_plan``: per measurement the smallest seeded, class-stratified subset of
its images on which every claim reading it keeps its verdict with probability >= C (jointly over
those claims, the other measurements at their full protocol), the power of per-model agreement at
that subset, and its device hours beside the full protocol's, per measurement and in total; then the
probability that every verdict is kept with every measurement at its subset at once."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any

from repro.base.errors import ConfigError
from repro.base.numbers import fmt_num
from repro.cli.common import add_input_options, split_names
from repro.cli.paths import output_file, write_json
from repro.planner import cost


def confidence_value(text: str) -> float:
    """``--confidence``: a probability strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a probability like 0.99, got {text!r}"
        ) from None
    if not 0 < value < 1 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(
            f"expected a probability strictly between 0 and 1, got {text}"
        )
    return value


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--confidence",
        type=confidence_value,
        default=None,
        metavar="P",
        help="also the subset plan: per measurement the smallest seeded, class-stratified subset "
        "of images on which every claim reading it keeps its verdict with probability >= P (e.g. "
        "0.99), its agreement power and device hours (minutes of CPU the first time; cached)",
    )
    p.add_argument(
        "--json",
        default=None,
        metavar="PATH",
        help="with --confidence: also write the subset plan as JSON",
    )
    add_input_options(
        p,
        data_dir="with --confidence: the published data directory (default: see README, Data "
        "directory)",
    )


def _fmt_shift(r: Sequence[float] | None, everyone: float | None, unit: str) -> str:
    if r is None:
        return "-"
    lo, hi = fmt_num(r[0], 3, style="g"), fmt_num(r[1], 3, style="g")
    one = lo if math.isclose(r[0], r[1]) else f"{lo}-{hi}"
    if everyone is None:
        return one
    return f"{one} / {fmt_num(everyone, 3, style='g')}" + (f" {unit}" if unit else "")


def _items(p: dict[str, Any], key: str) -> str:
    return "full" if p[key] is None or p[key] >= p["full"] else f"{p[key]:,}"


def format_subset_plan(
    doc: dict[str, Any], hours: dict[str, dict[str, tuple[float, float]]], titles: Sequence[str]
) -> str:
    """The subset table: ``hours[measurement][title] = (subset hours, full hours)``."""
    plans = doc["measurements"]
    if not plans:
        return f"{doc['study']}: no subset plan ({doc.get('note', 'no measurements')})"
    head = [
        "measurement",
        "full",
        "alone",
        "P(kept) alone",
        "what sets it",
        "jointly",
        "agreement detects jointly: one / all",
        *(f"h {t}: jointly / full" for t in titles),
    ]
    rows = []
    for p in plans:
        p_kept = "-" if p["p_kept"] is None else f"{p['p_kept']:.3f} (>= {p['p_lower']:.3f})"
        sets = ", ".join(p["binding"]) or "-"
        rows.append(
            [
                p["measurement"],
                f"{p['full']:,}",
                _items(p, "items"),
                p_kept,
                sets,
                _items(p, "joint_items"),
                _fmt_shift(p["joint_agreement_one"], p["joint_agreement_all"], p["unit"]),
                *(
                    f"{hours[p['measurement']][t][0]:.2f} / {hours[p['measurement']][t][1]:.2f}"
                    for t in titles
                ),
            ]
        )
    rows.append(
        [
            "total",
            *[""] * 6,
            *(
                f"{sum(h[t][0] for h in hours.values()):.2f} / "
                f"{sum(h[t][1] for h in hours.values()):.2f}"
                for t in titles
            ),
        ]
    )
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(r: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()

    joint = doc["joint"]
    out = [
        f"subset plan of {doc['study']} at confidence {doc['confidence']:g} (images of each "
        "measurement): alone = the smallest seeded, class-stratified subset on which every claim "
        "reading the measurement keeps its verdict, the other measurements at their full "
        "protocol; jointly = every measurement at its subset at once, every verdict of every "
        f"claim kept; P(kept) from {doc['resamples']:,} draws (seed {doc['seed']}), its lower 95% "
        f"bound >= {doc['confidence']:g}; hypergeometric draws (finite-population correction), "
        "stratification not credited; hours for the jointly planned subsets",
        "",
        line(head),
        line(["-" * w for w in widths]),
        *map(line, rows),
    ]
    notes = [f"  {p['measurement']}: {p['note']}" for p in plans if p["note"]]
    if notes:
        out += ["", "not planned =", *notes]
    out += [
        "",
        f"jointly: P(every verdict kept) = {joint['p_kept']:.3f} (>= {joint['p_lower']:.3f}; "
        f"{doc['resamples']:,} draws, seed {joint['seed']})"
        + (
            f"; grown from their own subsets towards the full protocol (t = {joint['t']:.3f} on a "
            "geometric scale): " + ", ".join(joint["grown"])
            if joint["grown"]
            else "; every measurement at its own subset"
        ),
    ]
    out += [
        "agreement detects = the shift of one model's value (range over the models) / of every "
        "model's that per-model agreement finds with 80% power at alpha 0.05 on the subset (the "
        "full protocol's fixed stimuli: the margin)"
    ]
    return "\n".join(out)


def run(
    args: argparse.Namespace, names: list[str], rates: Callable[[str], Any]
) -> dict[str, float]:
    """Print (and with ``--json`` write) the subset plan of each selected study with a count model.

    Returns each measurement's jointly planned fraction of its images (the largest over the
    studies)."""
    from repro.base.study import select
    from repro.claims.check import evaluate_all
    from repro.claims.context import published_context
    from repro.planner.subset_plan import scaled_work, subset_plan

    if args.json:
        output_file(args.json, "--json")
    docs = []
    for study in select(split_names(args.study)):
        measurements = [m for m in names if m in study.measurements]
        if study.replication is None or not measurements:
            continue
        ctx = published_context(study, args.data_dir)
        doc = subset_plan(ctx, evaluate_all(ctx), measurements, args.confidence)
        work = cost.workload(measurements)
        fractions = {p["measurement"]: p["joint_fraction"] for p in doc["measurements"]}
        titles = ("float32", "bfloat16")
        hours: dict[str, dict[str, tuple[float, float]]] = {m: {} for m in measurements}
        for t in titles:
            r = rates(t)
            full = cost.plan(
                work, r, models=args.models, pipeline="ours", cpu_workers=args.cpu_workers
            )
            sub = cost.plan(
                scaled_work(work, fractions),
                r,
                models=args.models,
                pipeline="ours",
                cpu_workers=args.cpu_workers,
            )
            for a, b in zip(sub, full, strict=True):
                hours[a.measurement][t] = (a.hours_all, b.hours_all)
        print("\n" + format_subset_plan(doc, hours, titles))
        docs.append(
            doc
            | {
                "hours": {
                    m: {t: {"subset": h[0], "full": h[1]} for t, h in v.items()}
                    for m, v in hours.items()
                },
                "models": args.models,
            }
        )
    if not docs:
        raise ConfigError(
            "--confidence: no selected study has a count model (study.toml `replication`) and "
            "measurements to plan"
        )
    if args.json:
        print(f"wrote {write_json(args.json, {'subset_plans': docs})}")
    out: dict[str, float] = {}
    for doc in docs:
        for p in doc["measurements"]:
            out[p["measurement"]] = max(out.get(p["measurement"], 0.0), float(p["joint_fraction"]))
    return out
