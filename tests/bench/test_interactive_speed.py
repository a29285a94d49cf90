"""Speed of the interactive commands as a user runs them: ``python -m repro claims``, ``compare``,
``place`` and ``plan``, each in a fresh interpreter, against ``python -m repro --help`` (the
interpreter and the command line's own start) and ``python -c "import torch"`` (what one torch
import would add), measured in the same run; the seconds and the ratios are printed at the end.
``compare`` and ``place`` read the small store of ``tests/small_store.py``. Fastest of 3 rounds;
the first call of each is a warm-up (the published-data caches under REPRO_CACHE_DIR are built by
it, as a user's first call builds them: for ``claims`` its command cache, repro.base.command_cache,
so the timed rounds are answered from it); ``claims`` once more with ``REPRO_RESULT_CACHE=off``,
every claim and replication computed on every call (what a change of input or code costs once).
The issue's target: ``claims`` warm at most 4x ``--help``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.small_store import write_small_store

pytestmark = pytest.mark.bench

_TIMES: dict[str, float] = {}
COMMANDS = {
    "--help": ["--help"],
    "claims": ["claims"],
    "claims, no result cache": ["claims"],
    "compare": ["compare"],
    "place": ["place", "--model", "tv_resnet50"],
    "plan": ["plan"],
}


@pytest.fixture(scope="module")
def setting(tmp_path_factory, data_dir, request):
    root = tmp_path_factory.mktemp("interactive")
    store = write_small_store(root / "store")
    env = {
        **os.environ,
        "PYTHONPATH": str(request.config.rootpath) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "REPRO_CACHE_DIR": str(root / "cache"),
        "MPLBACKEND": "Agg",
    }
    yield store, env
    capture = request.config.pluginmanager.getplugin("capturemanager")
    base = _TIMES.get("--help")
    lines = []
    for name, t in _TIMES.items():
        ratio = f" ({t / base:.1f}x `--help`)" if base and name != "--help" else ""
        lines.append(f"  {name:<24} {t:6.2f} s{ratio}")
    with capture.global_and_fixture_disabled():
        print(
            "\ninteractive commands, fresh interpreter each, fastest of 3 rounds:\n"
            + "\n".join(lines)
        )


def _args(name: str, store, data_dir) -> list[str]:
    args = list(COMMANDS[name])
    if name in ("claims", "claims, no result cache", "compare", "place"):
        args += ["--data-dir", str(data_dir)]
    if name in ("compare", "place"):
        args += ["--store", str(store)]
    return args


def _run(argv: list[str], env: dict[str, str]) -> None:
    res = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-2000:]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_interactive_command(benchmark, setting, data_dir, name):
    store, env = setting
    argv = [sys.executable, "-m", "repro", *_args(name, store, data_dir)]
    if name == "claims, no result cache":
        env = {**env, "REPRO_RESULT_CACHE": "off"}
    _run(argv, env)  # warm-up: builds the published-data caches once
    benchmark.pedantic(_run, args=(argv, env), rounds=3, iterations=1)
    _TIMES[name] = benchmark.stats.stats.min


def test_one_torch_import(benchmark, setting):
    _, env = setting
    argv = [sys.executable, "-c", "import torch"]
    benchmark.pedantic(_run, args=(argv, env), rounds=3, iterations=1)
    _TIMES["import torch"] = benchmark.stats.stats.min
