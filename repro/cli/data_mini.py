"""The commands ``data make-mini`` (generate mini datasets) and ``data check`` (check roots).

``python -m repro data make-mini DIR [--per-class K]``: generate a miniature copy of every
dataset in its real layout and naming (for tests and for trying the suite without ImageNet).
``python -m repro data check [NAME ...] [--root DIR] [--build-cache]``: validate the configured
dataset roots (layout and counts) and optionally decode them into the crop cache."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from repro.base.errors import ReproError
from repro.cli.common import add_input_options, add_seed_option
from repro.cli.paths import input_dir, output_dir


def _make_mini(args: argparse.Namespace) -> int:
    from repro.datasets.mini import make_mini
    from repro.datasets.specs import SPECS

    output_dir(args.dir, "make-mini DIR")
    start = time.perf_counter()
    roots = make_mini(
        args.dir, per_class=args.per_class, seed=args.seed, datasets=args.datasets or None
    )

    print(f"{'dataset':16s} {'images':>6s}  {'layout':42s} root")
    total = 0
    for name, root in roots.items():
        marker = json.loads((root / ".repro-mini.json").read_text())
        spec = SPECS[name]
        conds = (
            f"{len(spec.corruptions)}x{len(spec.severities)} conditions x "
            if spec.conditions != [""]
            else ""
        )
        layout = f"{conds}{len(marker['classes'])} classes x {marker['per_class']}"
        print(f"{name:16s} {marker['images']:6d}  {layout:42s} {root}")
        total += marker["images"]
    toml = Path(args.dir) / "repro.toml"
    print(
        f"{total} images in {time.perf_counter() - start:.1f} s (seed {args.seed}); MINI data: "
        "numbers measured on it are not evidence"
    )
    print(f"use it: REPRO_CONFIG={toml} (or copy its [datasets] table into your repro.toml)")
    return 0


def _check(args: argparse.Namespace) -> int:
    from repro.base.settings import data_dir
    from repro.datasets.open import open_dataset, open_files
    from repro.datasets.roots import dataset_root
    from repro.datasets.specs import SPECS, get_spec

    bad = 0
    if args.root is not None:
        input_dir(args.root, "--root", must_exist=True)
    data = data_dir(args.data_dir)
    if args.data_dir is not None:
        input_dir(data, "--data-dir", must_exist=True)
    for name in args.names or list(SPECS):
        spec = get_spec(name)
        root = args.root or dataset_root(spec.name, data)
        if root is None:
            status = (
                "missing" if args.names else "-"
            )  # a dataset asked for by name and not found fails the check
            bad += bool(args.names)
            print(
                f"{spec.name:16s} {status:8s} not configured (REPRO_{spec.name.upper()}_ROOT or "
                f"[datasets] in repro.toml, or in the data directory {data})"
            )
            continue
        try:
            start = time.perf_counter()
            src = open_dataset(spec.name, root) if args.build_cache else open_files(spec.name, root)
            if args.build_cache:
                parts = getattr(src, "parts", {"": src})
                for part in parts.values():
                    part.build()
            kind = "mini" if getattr(src, "mini", False) else "ok"
            took = f" ({time.perf_counter() - start:.1f} s)" if args.build_cache else ""
            print(
                f"{spec.name:16s} {kind:8s} {len(src):9d} images  "
                f"{getattr(src, 'root', root)}{took}"
            )
        except ReproError as exc:
            bad += 1
            print(f"{spec.name:16s} {'ERROR':8s} {exc}")
    return 1 if bad else 0


def register(sub) -> None:
    p = sub.add_parser(
        "make-mini", help="generate a miniature copy of every dataset (real layout and naming)"
    )
    p.add_argument(
        "dir", help="output folder (one sub-folder per dataset, a manifest and a repro.toml)"
    )
    p.add_argument(
        "--per-class",
        type=int,
        default=2,
        metavar="K",
        help="images per class (per condition) and dataset, times the dataset's factor (default 2)",
    )
    add_seed_option(p, "seed of the generated images")
    p.add_argument(
        "--datasets", nargs="*", metavar="NAME", help="only these datasets (default: all)"
    )
    p.set_defaults(handler=_make_mini)
    c = sub.add_parser(
        "check", help="validate the configured dataset roots (layout and image counts)"
    )
    c.add_argument("names", nargs="*", metavar="NAME", help="datasets to check (default: all)")
    c.add_argument("--root", help="read every named dataset from DIR (e.g. a make-mini folder)")
    add_input_options(
        c,
        data_dir="data directory, where GraySplit/CBMSplit lie unless configured "
        "(default: see README, Data directory)",
    )
    c.add_argument(
        "--build-cache",
        action="store_true",
        help="also decode each dataset once into the crop cache (<user cache>/crops)",
    )
    c.set_defaults(handler=_check)
