"""``python -m repro config``: the repro.toml in use and the settings resolved from it.

Says which repro.toml is in use (or that none is); the settings are resolved from it, the
environment and the defaults: data dir, weights dir, store, dataset roots."""

from __future__ import annotations

import argparse
import json

from repro.cli.common import command


def _handler(args: argparse.Namespace) -> int:
    from repro.datasets.roots import resolved_settings

    info = resolved_settings()
    if args.json:
        print(json.dumps(info, indent=1))
        return 0
    print(
        f"config: {info['config']} ({info['config_found']})"
        if info["config"]
        else f"config: none ({info['config_found']})"
    )
    for key in ("data_dir", "weights_dir", "store"):
        item = info[key]
        print(f"{key.replace('_', ' '):12s} {item['path']}  ({item['from']})")  # type: ignore[index]
    print("datasets:")
    for name, item in info["datasets"].items():  # type: ignore[attr-defined]
        print(f"  {name:16s} {item['root'] or '-'}  ({item['from']})")
    return 0


def register(sub) -> None:
    p = command(sub, "config", "show the repro.toml in use and the resolved settings", __doc__)
    p.add_argument("--json", action="store_true", help="print the same as JSON")
    p.set_defaults(handler=_handler)
