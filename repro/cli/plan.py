"""``python -m repro plan``: the projected device hours of the studies' measurements.

The measurements of study.toml `measurements` (default every discovered study; 48 models), projected
from measured or stated throughput, per measurement and in total, for this suite's pipeline
(decode-once cache, batched synthesis on the device; float32 and bfloat16) and for the study's
pipeline as published (float32, per-image CPU noise synthesis, decoding per model and condition).
The model and its assumptions: ``repro.planner.cost`` (printed with --assumptions).

Then decoding and the crop cache per dataset on the device box, and the wall hours model-major and
data-major side by side against the goal (``repro.planner.execution_plan``). ``--confidence P`` adds
the subset plan (``repro.cli.plan_subsets``), and its hours by order."""

from __future__ import annotations

import argparse
from typing import Any

from repro.base.errors import ConfigError
from repro.cli import plan_subsets
from repro.cli.common import MAX_COUNT, add_input_options, int_range, split_names
from repro.planner import cost
from repro.planner import execution_plan as ep
from repro.planner.plan_guide import which_total


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "plan",
        help="projected GPU-hours of the study (48 models) from measured or stated throughput",
        # the summary line and the first paragraph after it
        description=__doc__.splitlines()[0].strip("`") + " " + __doc__.split("\n\n")[1],
        epilog="ASSUMPTIONS: "
        + " ".join(
            f"{p.name}: fp32 {p.forward_fp32:g}/s ({p.source_fp32}), bf16 "
            f"{p.forward_bf16:g}/s ({p.source_bf16})."
            for p in cost.PROFILES.values()
        )
        + f" A backward pass costs {cost.BACKWARD_COST:g} forward passes; decoding "
        f"{cost.DECODE_PER_S:g} images/s per core; {cost.CPU_WORKERS} CPU workers per device; the "
        f"study's per-image critical-band synthesis {cost.CPU_STIMULUS_S * 1e3:g} ms per stimulus "
        "per core; devices scale perfectly (independent jobs).",
    )
    p.add_argument(
        "--device",
        default="h200",
        help=f"stated device profile: {', '.join(cost.PROFILES)} (default h200)",
    )
    p.add_argument(
        "--throughput",
        default=None,
        metavar="JSON",
        help="measured per-stage rates from python -m repro throughput --out (instead of the "
        "stated profile)",
    )
    p.add_argument(
        "--gpus",
        type=int_range(1, MAX_COUNT),
        default=1,
        help="devices running (model, measurement) jobs in parallel (default 1)",
    )
    p.add_argument(
        "--models",
        type=int_range(1, MAX_COUNT),
        default=48,
        help="number of models (default 48: the study's population)",
    )
    p.add_argument(
        "--measurements",
        default=None,
        help="comma-separated registered measurements (default: those the selected studies need)",
    )
    add_input_options(p, study=True)
    p.add_argument(
        "--cpu-workers",
        type=int_range(1, MAX_COUNT),
        default=cost.CPU_WORKERS,
        help=f"CPU workers per device (default {cost.CPU_WORKERS})",
    )

    p.add_argument(
        "--cores",
        type=int_range(1, MAX_COUNT),
        default=None,
        help="CPU cores of the device box that decode (default: the --throughput file's, else "
        f"{ep.BOX_CORES}: the lent H200 box)",
    )
    p.add_argument(
        "--disk-gb",
        type=int_range(1, 10**6),
        default=int(ep.BOX_DISK_GB),
        help=f"disk of the device box in GB, for the crop cache (default {ep.BOX_DISK_GB:g}: the "
        "lent H200 box)",
    )
    p.add_argument(
        "--assumptions",
        action="store_true",
        help="print the cost model's documentation and assumptions",
    )

    plan_subsets.add_options(p)  # --confidence: the subset plan (repro.planner.subset_plan)
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    if args.assumptions:
        print(cost.__doc__)
        return 0
    for flag in ("gpus", "models", "cpu_workers"):
        if getattr(args, flag) <= 0:
            raise ConfigError(
                f"--{flag.replace('_', '-')} must be positive, got {getattr(args, flag)}"
            )
    if args.measurements is not None:
        names = split_names([args.measurements])  # '' or ',,' is an error, not the default
    else:
        # the measurements the selected studies need (study.toml `measurements`), in registry order
        from repro.base.study import select

        names = list(
            dict.fromkeys(
                m for study in select(split_names(args.study)) for m in study.measurements
            )
        )
        if not names:
            raise ConfigError(
                "the selected studies name no measurements (study.toml `measurements`)"
            )
    work = cost.workload(names)

    def rates(precision: str) -> cost.Rates:
        if args.throughput:
            return cost.measured_rates(args.throughput, precision)
        return cost.stated_rates(args.device, precision)

    columns = {}
    for title, precision, pipeline in (
        ("ours float32", "float32", "ours"),
        ("ours bfloat16", "bfloat16", "ours"),
        ("published", "float32", "published"),
    ):
        r = rates(precision)
        rows = cost.plan(
            work, r, models=args.models, pipeline=pipeline, cpu_workers=args.cpu_workers
        )
        columns[title] = (rows, r.source)
    print(cost.format_plan(columns, models=args.models, gpus=args.gpus))
    early = cost.early_stop_work(work)
    if any(w.backward for w in work):  # PGD's passes and hours under both rules
        f32 = rates("float32")
        device_s = {r.measurement: r.device_s for r in cost.plan(work, f32, models=1)}
        early_s = {r.measurement: r.device_s for r in cost.plan(early, f32, models=1)}
        print("\n" + cost.format_pgd_rules(work, early, device_s, early_s, models=args.models))
    device_totals = {t: sum(r.hours_all for r in rows) for t, (rows, _) in columns.items()}
    fractions = None
    if args.confidence is not None:
        fractions = plan_subsets.run(args, names, rates)
    elif args.json:
        raise ConfigError("--json: writes the subset plan, which --confidence asks for")
    text, totals, subset = _orders(args, work, rates, fractions)
    print("\n" + text)
    print(
        "\n" + which_total(device_totals, totals, models=args.models, gpus=args.gpus, subset=subset)
    )
    return 0


def _orders(
    args: argparse.Namespace, work: list[Any], rates: Any, fractions: dict[str, float] | None
) -> tuple[str, dict[tuple[str, str], float], str | None]:
    """The execution tables as text, their totals, and the title of the subset column (if any).

    The tables are the decoding/cache table and the model-major / data-major table
    (``repro.planner.execution_plan``)."""
    decode = ep.decode_rates(args.throughput)
    cores = args.cores or (decode.cores if args.throughput and decode.cores else ep.BOX_CORES)
    box = ep.Box(cores=cores, disk_bytes=args.disk_gb * 1e9, gpus=args.gpus)
    variants = [("float32", "float32", work), ("bfloat16", "bfloat16", work)]
    early = cost.early_stop_work(work)
    attack = any(w.backward for w in work)
    if attack:  # PGD under the early-stop rule (a protocol variant)
        variants.append(("bf16 PGD-ES", "bfloat16", early))
    if fractions:
        from repro.planner.subset_plan import scaled_work

        variants.append(("bf16 subset", "bfloat16", scaled_work(work, fractions)))
        if attack:
            variants.append(("bf16 subset PGD-ES", "bfloat16", scaled_work(early, fractions)))
    io = ep.dataset_io(work, decode, box)
    columns = {}
    for title, precision, w in variants:
        f32 = {r.measurement: r.device_s for r in cost.plan(w, rates("float32"), models=1)}
        dev = {r.measurement: r.device_s for r in cost.plan(w, rates(precision), models=1)}
        dev.update(
            {x.measurement: f32[x.measurement] for x in w if x.backward}
        )  # PGD: float32 always
        dm = ep.data_major_rates(args.throughput, precision)
        columns[title] = ep.orders(
            w,
            dev,
            ep.dataset_io(w, decode, box),
            models=args.models,
            data_major_rate=dm[0] if dm else None,
        )
    device = f"{args.device} rates stated" if not args.throughput else "rates measured"
    notes = [f"device rates: {rates(p).source}" for p in ("float32", "bfloat16")]
    if attack:
        notes.append(
            "PGD-ES: PGD under the early-stop rule (pgd_low_early_stop, a protocol variant whose "
            "values are not the study's PGD-40 column; passes per model family above)"
        )
    if fractions:
        notes.append(
            "bf16 subset: bfloat16 on the jointly planned subsets of the subset plan above"
        )
    text = (
        ep.format_io(io, decode, box)
        + "\n\n"
        + ep.format_orders(columns, models=args.models, gpus=args.gpus, device=device, notes=notes)
    )
    return text, ep.order_totals(columns, args.gpus), "bf16 subset" if fractions else None
