"""``python -m repro data fetch|verify``: download the pinned published files, check sha256."""

from __future__ import annotations

import argparse

from repro.cli.common import add_input_options
from repro.cli.paths import input_dir, output_dir


def _fetch(args: argparse.Namespace) -> int:
    from repro.base.settings import data_dir
    from repro.published.fetch import fetch

    output_dir(data_dir(args.data_dir), "--data-dir")
    paths = fetch(args.files or None, data_dir=args.data_dir)
    print(f"{len(paths)} file(s) verified in {data_dir(args.data_dir)}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from repro.base.settings import data_dir
    from repro.published.fetch import manifest, sha256_of

    root = input_dir(
        data_dir(args.data_dir), "--data-dir", must_exist=True
    )  # else every file is "missing"
    bad = 0
    for rel, pinned in manifest().items():
        path = root / rel
        if not path.is_file():
            status = "missing"
            bad += 1
        elif sha256_of(path) != pinned.sha256:
            status = "CHECKSUM MISMATCH"
            bad += 1
        else:
            status = "ok"
        if status != "ok" or args.verbose:
            print(f"{status:18s} {rel}")
    print(f"{len(manifest()) - bad} of {len(manifest())} pinned files verified in {root}")
    return 1 if bad else 0


def register(sub) -> None:
    p = sub.add_parser("fetch", help="download the pinned published data files and verify sha256")
    p.add_argument("files", nargs="*", help="paths inside the data directory (default: all)")
    add_input_options(p, data_dir="target directory (default: see README, Data directory)")
    p.set_defaults(handler=_fetch)
    v = sub.add_parser("verify", help="check the sha256 of every pinned file in the data directory")
    v.add_argument("--data-dir")
    v.add_argument("-v", "--verbose", action="store_true")
    v.set_defaults(handler=_verify)
