"""Root pytest configuration: torch thread limits per xdist worker, the tiers' folders, a local
HTTP server. The command-line options, the published-data fixture and the guard of the claim gate
are the package's pytest plugin (``repro.pytest_plugin``), loaded here as well as by the entry
point a user's project gets.

The claim gate fails closed (the plugin's docstring says how); CI (``.ci/run``) passes
``--require-claims``.
"""

from __future__ import annotations

import os
import sys

import pytest

# repro.pytest_plugin: the gate's options (--source, --store, --require-claims, ...), its guard
# and the data_dir fixture; the package installs it (entry point pytest11, under the same name,
# so it is registered once either way)
pytest_plugins = ["repro.pytest_plugin", "tests.critical_band_vectors", "tests.tier_guard"]


@pytest.fixture(autouse=True)
def _restore_repro_environment():
    """Put every ``REPRO_*`` variable back as it was after each test. Some code sets them for
    its own process on purpose (the mini run points ``REPRO_<DATASET>_ROOT`` at the generated
    data, a cluster job at its dataset roots); run in-process by a test, that would configure
    datasets for every later test of the same xdist worker, and which tests share a worker
    changes with the collection (a claim test then counted ImageNet as configured and its
    published accuracy as missing from the store)."""
    before = {k: v for k, v in os.environ.items() if k.startswith("REPRO_")}
    yield
    for key in [k for k in os.environ if k.startswith("REPRO_") and k not in before]:
        del os.environ[key]
    os.environ.update(before)


def _limit_threads(config: pytest.Config) -> None:
    """Give each xdist worker cores // workers threads, so ``-n 4`` is not slower than serial."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    threads = max(1, (os.cpu_count() or 1) // max(workers, 1))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    config._repro_threads = threads  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    _limit_threads(config)


TIERS = (
    "unit",
    "data",
    "cli",
    "claims",
    "integration",
    "gpu",
    "full",
    "bench",
    "real",
    "cluster",
)  # tests/<tier>/ holds tests marked <tier>


def tier_mismatches(items) -> list[str]:
    """The collected tests under ``tests/<tier>/`` that are not marked ``<tier>``."""
    out = []
    for item in items:
        parts = item.path.relative_to(item.config.rootpath).parts
        if (
            len(parts) > 2
            and parts[0] == "tests"
            and parts[1] in TIERS
            and item.get_closest_marker(parts[1]) is None
        ):
            out.append(
                f"{item.nodeid} (in tests/{parts[1]}/, marked "
                f"{sorted(m.name for m in item.iter_markers())})"
            )
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test's folder names its tier: one under tests/<tier>/ without the <tier> mark stops the run
    (so ``-m unit`` and ``tests/unit`` select the same tests)."""
    bad = tier_mismatches(items)
    if bad:
        raise pytest.UsageError(
            "tests whose folder does not match their marker:\n  " + "\n  ".join(bad)
        )
    if not cluster_selected(config):
        kept = [item for item in items if item.get_closest_marker("cluster") is None]
        if len(kept) < len(items):
            config.hook.pytest_deselected(
                items=[item for item in items if item.get_closest_marker("cluster")]
            )
            items[:] = kept
    if os.environ.get("MUTANT_UNDER_TEST"):
        # a mutation run (``nox -s mutants``) stops at the first failing test: the unit tests
        # first, so that a mutant they kill costs them only, not the slower claims tests too
        items.sort(key=lambda item: not item.nodeid.startswith("tests/unit/"))


def cluster_selected(config: pytest.Config) -> bool:
    """The cluster tier (tests/cluster: a real SLURM) runs only when asked for: ``-m`` naming it,
    or a path under tests/cluster on the command line; the README's plain run deselects it."""
    if "cluster" in (config.getoption("markexpr", "") or ""):
        return True
    root = config.rootpath / "tests" / "cluster"
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == root or root in path.parents:
            return True
    return False


@pytest.fixture(scope="session")
def torch_threads(pytestconfig: pytest.Config) -> int:
    """Import torch with this worker's thread budget applied."""
    import torch

    torch.set_num_threads(pytestconfig._repro_threads)  # type: ignore[attr-defined]
    return pytestconfig._repro_threads  # type: ignore[attr-defined]


@pytest.fixture
def local_http(monkeypatch):
    """A local HTTP server (``tests/local_http.py``); requests to it bypass any configured proxy."""
    from tests.local_http import LocalServer

    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    server = LocalServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def run_cli():
    """Run ``python -m repro ARGS`` in a subprocess against THIS checkout's package.

    Returns ``subprocess.CompletedProcess`` (text mode). Pass ``cwd=`` to run elsewhere;
    PYTHONPATH always points at this checkout, so a worktree tests its own code.
    """
    import subprocess
    from pathlib import Path

    from tests.waiting import HANG_GUARD_S  # a hang guard, not a budget (tests/waiting.py)

    root = str(Path(__file__).resolve().parent)

    def run(
        *args: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ):
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = root + os.pathsep + full_env.get("PYTHONPATH", "")
        full_env.setdefault("MPLBACKEND", "Agg")
        if env:
            full_env.update(env)
        return subprocess.run(
            [sys.executable, "-m", "repro", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd or root,
            env=full_env,
            timeout=HANG_GUARD_S if timeout is None else timeout,
        )

    return run
