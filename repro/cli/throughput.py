"""``python -m repro throughput``: images per second of each probe and benchmark for one model.

On one device in float32 and bfloat16 autocast (channels_last), with the precisions' agreement.
The agreement is measured on real stimuli (``repro.planner.throughput``); the measurement is
written as JSON for ``python -m repro plan``. torch is imported inside the handler."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError
from repro.cli.common import (
    MAX_BATCH,
    MAX_IMAGES,
    add_device_option,
    add_input_options,
    add_model_file_options,
    add_seed_option,
    int_range,
)
from repro.cli.paths import output_file

# The planner's harnesses are imported inside the handler: they import torch, which `python -m
# repro --help`, `models` and `claims` (they load this module) must not.

#: the harness's stages (``repro.planner.throughput.STAGES``, which imports NumPy: building the
#: parser must not; a test checks that the two agree)
STAGES = ("shape_bias", "spectral", "critical_band", "classify", "pgd")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "throughput",
        help="images/s per probe and benchmark in float32 and bfloat16, with their agreement",
        description=__doc__.splitlines()[0].strip("`") + " " + " ".join(__doc__.splitlines()[1:3]),
    )
    add_model_file_options(p)
    add_device_option(p, "cpu, cuda, cuda:1, ... (default: cuda if available)", default="auto")
    p.add_argument(
        "--limit",
        type=int_range(1, MAX_IMAGES),
        default=None,
        metavar="N",
        help="use the first N images of each data set",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="images per batch (default: the autotuned choice for this model and device, cached)",
    )
    p.add_argument(
        "--stages", default=",".join(STAGES), help=f"comma-separated subset of {', '.join(STAGES)}"
    )
    add_seed_option(p, "noise and random-start seed")
    add_input_options(p, data_dir="published data directory (cue-conflict and GraySplit images)")
    p.add_argument(
        "--data-major",
        type=int_range(1, 64),
        default=None,
        metavar="N",
        help="also the data-major throughput: N resident copies of the model on one generated "
        "ImageNet-C-like JPEG set (--limit images, default 1024), decode included, beside the "
        "model-major baseline",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="JSON",
        help="where to write the measurement (default: <cache>/throughput/<model>-<device>.json)",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    bad = [s for s in stages if s not in STAGES]
    if bad or not stages:
        raise ConfigError(
            f"--stages: unknown {bad or 'empty list'}; expected a comma-separated subset of "
            f"{', '.join(STAGES)}"
        )
    if args.limit is not None and args.limit <= 0:
        raise ConfigError(f"--limit must be positive, got {args.limit}")
    if args.batch_size is not None and not 0 < args.batch_size <= MAX_BATCH:
        raise ConfigError(
            f"--batch-size must be positive (at most {MAX_BATCH}), got {args.batch_size}"
        )
    if args.out:
        output_file(args.out, "--out")
    from repro.base.settings import data_dir

    root = data_dir(args.data_dir)
    from repro.base.device import resolve_device
    from repro.planner.autotune import model_key
    from repro.planner.throughput import default_out, format_report, measure, write_json
    from repro.zoo import load_model_file

    device = resolve_device(args.device)
    model = load_model_file(
        args.model,
        device=device,
        weights_dir=args.weights_dir,
        allow_torchscript=args.allow_torchscript,
    )
    name = model_key(args.model)
    out = Path(args.out) if args.out else default_out(name, device)
    report = measure(
        model,
        name,
        device,
        root,
        stages=stages,
        limit=args.limit,
        batch_size=args.batch_size,
        seed=args.seed,
        progress=lambda msg: print(msg, file=sys.stderr, flush=True),
        partial=lambda r: write_json(r, out),
    )  # after every stage: a crash keeps what was measured
    from repro.planner import decode_rate

    report.decode = decode_rate.cached(
        refresh=True
    )  # this machine's per-core rate, for python -m repro plan
    if args.data_major:
        from repro.planner import throughput_data_major as tdm

        report.data_major = tdm.measure(
            model,
            args.data_major,
            device,
            images=args.limit or tdm.DEFAULT_IMAGES,
            batch_size=report.batch_size,
        )
    print(format_report(report))
    if report.data_major:
        from repro.planner.throughput_data_major import format_runs

        print(format_runs(report.data_major))
    write_json(report, out)
    print(f"wrote {out}")
    return 0
