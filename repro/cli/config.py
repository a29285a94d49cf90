"""``python -m repro config``: which repro.toml is in use (or that none is) and the settings
resolved from it, the environment and the defaults: data dir, weights dir, store, dataset roots."""

from __future__ import annotations

import argparse
import json
import os


def _origin(env: str, table: str, key: str, config: dict) -> str:
    if os.environ.get(env):
        return f"${env}"
    if config.get(table, {}).get(key):
        return "repro.toml"
    return "default"


def resolved() -> dict[str, object]:
    """The config path and every resolved setting with where it came from."""
    from repro.config_check import find_config
    from repro.datasets.specs import SPECS
    from repro.settings import data_dir, dataset_root, load_config, store_dir, weights_dir

    path, how = find_config()
    config = load_config()
    datasets = {}
    for name in SPECS:
        env = f"REPRO_{name.upper()}_ROOT"
        root = dataset_root(name)
        datasets[name] = {"root": str(root) if root else None,
                          "from": _origin(env, "datasets", name, config) if root else "not configured"}
    return {
        "config": str(path) if path else None, "config_found": how,
        "data_dir": {"path": str(data_dir()), "from": _origin("REPRO_DATA_DIR", "paths", "data", config)},
        "weights_dir": {"path": str(weights_dir()), "from": _origin("REPRO_WEIGHTS_DIR", "paths", "weights", config)},
        "store": {"path": str(store_dir()), "from": _origin("REPRO_STORE_DIR", "paths", "store", config)},
        "datasets": datasets,
    }


def _handler(args: argparse.Namespace) -> int:
    info = resolved()
    if args.json:
        print(json.dumps(info, indent=1))
        return 0
    print(f"config: {info['config']} ({info['config_found']})" if info["config"] else
          f"config: none ({info['config_found']})")
    for key in ("data_dir", "weights_dir", "store"):
        item = info[key]
        print(f"{key.replace('_', ' '):12s} {item['path']}  ({item['from']})")  # type: ignore[index]
    print("datasets:")
    for name, item in info["datasets"].items():  # type: ignore[attr-defined]
        print(f"  {name:16s} {item['root'] or '-'}  ({item['from']})")
    return 0


def register(sub) -> None:
    p = sub.add_parser("config", help="show the repro.toml in use and the resolved settings", description=__doc__)
    p.add_argument("--json", action="store_true", help="print the same as JSON")
    p.set_defaults(handler=_handler)
