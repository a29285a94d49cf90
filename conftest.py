"""Root pytest configuration: command-line options shared by all test tiers, torch thread
limits per xdist worker, and the published-data fixture."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("repro")
    group.addoption(
        "--source",
        choices=["published", "store", "measure"],
        default="published",
        help="where claim tests take per-model quantities from: published (benchmark.csv, default), "
        "store (our stored measurements, falling back to published), measure (run missing jobs first)",
    )
    group.addoption("--store", default=None, help="measurement store directory (default: settings.store_dir())")
    group.addoption("--device", default=None, help="device for --source measure (cuda, cpu; default: cuda if available)")
    group.addoption("--data-dir", default=None, help="published data directory (default: settings.data_dir())")


def _limit_threads(config: pytest.Config) -> None:
    """Give each xdist worker cores // workers threads, so ``-n 4`` is not slower than serial."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    threads = max(1, (os.cpu_count() or 1) // max(workers, 1))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    config._repro_threads = threads  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    _limit_threads(config)


TIERS = ("unit", "claims", "integration", "gpu", "full", "bench", "real")  # tests/<tier>/ holds tests marked <tier>


def tier_mismatches(items) -> list[str]:
    """The collected tests under ``tests/<tier>/`` that are not marked ``<tier>``."""
    out = []
    for item in items:
        parts = item.path.relative_to(item.config.rootpath).parts
        if len(parts) > 2 and parts[0] == "tests" and parts[1] in TIERS and item.get_closest_marker(parts[1]) is None:
            out.append(f"{item.nodeid} (in tests/{parts[1]}/, marked {sorted(m.name for m in item.iter_markers())})")
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test's folder names its tier: one under tests/<tier>/ without the <tier> mark stops the run
    (so ``-m unit`` and ``tests/unit`` select the same tests)."""
    bad = tier_mismatches(items)
    if bad:
        raise pytest.UsageError("tests whose folder does not match their marker:\n  " + "\n  ".join(bad))


@pytest.fixture(scope="session")
def torch_threads(pytestconfig: pytest.Config) -> int:
    """Import torch with this worker's thread budget applied."""
    import torch

    torch.set_num_threads(pytestconfig._repro_threads)  # type: ignore[attr-defined]
    return pytestconfig._repro_threads  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def data_dir(pytestconfig: pytest.Config):
    """The published data directory; skips (with the loader's message) only when truly absent."""
    from repro.base.errors import DataError
    from repro.base.settings import data_dir as resolve
    from repro.published.fetch import require_file

    root = resolve(pytestconfig.getoption("--data-dir"))
    try:
        require_file("gavrikov2024/benchmark.csv", root)
    except DataError as exc:
        pytest.skip(str(exc))
    return root


@pytest.fixture(scope="session")
def run_cli():
    """Run ``python -m repro ARGS`` in a subprocess against THIS checkout's package.

    Returns ``subprocess.CompletedProcess`` (text mode). Pass ``cwd=`` to run elsewhere;
    PYTHONPATH always points at this checkout, so a worktree tests its own code.
    """
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parent)

    def run(*args: str, cwd: str | None = None, env: dict[str, str] | None = None, timeout: float = 600):
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = root + os.pathsep + full_env.get("PYTHONPATH", "")
        full_env.setdefault("MPLBACKEND", "Agg")
        if env:
            full_env.update(env)
        return subprocess.run([sys.executable, "-m", "repro", *map(str, args)], capture_output=True, text=True,
                              cwd=cwd or root, env=full_env, timeout=timeout)

    return run
