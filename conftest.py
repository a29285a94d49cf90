"""Root pytest configuration: command-line options shared by all test tiers, torch thread
limits per xdist worker, the published-data fixture, a local HTTP server, and the guard of the
claim gate.

The claim gate fails closed:

- missing published data FAILS every test that needs it (the ``data_dir`` fixture) with the
  one-line data message, unless the user opts out with ``--allow-missing-data`` (then those
  tests skip, and the summary says the gate did not run); CI never opts out;
- a skipped ``claims``-marked test fails the run (exit status 1, listed in the summary):
  the claims tier has no legitimate skips (the only exception: tests skipped under an
  explicit ``--allow-missing-data``);
- ``--require-claims`` (CI, ``.ci/run``) also fails the run when no ``claims``-marked test
  passed, so a CI run that silently selected or collected no claim test cannot go green.
"""

from __future__ import annotations

import os
import sys

import pytest

pytest_plugins = ["tests.critical_band_vectors", "tests.tier_guard"]


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


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("repro")
    group.addoption(
        "--source",
        choices=["published", "store", "measure"],
        default="published",
        help=(
            "where claim tests take per-model quantities from: published (benchmark.csv, default), "
            "store (our stored measurements, falling back to published), "
            "measure (run missing jobs first)"
        ),
    )
    group.addoption(
        "--store", default=None, help="measurement store directory (default: settings.store_dir())"
    )
    group.addoption(
        "--device",
        default=None,
        help="device for --source measure (cuda, cpu; default: cuda if available)",
    )
    group.addoption(
        "--data-dir", default=None, help="published data directory (default: settings.data_dir())"
    )
    group.addoption(
        "--allow-missing-data",
        action="store_true",
        default=False,
        help="skip, instead of fail, the tests that need the published data when it is absent "
        "(the claim gate then does NOT run; never in CI)",
    )
    group.addoption(
        "--require-claims",
        action="store_true",
        default=False,
        help="fail the run unless claims-marked tests passed (CI: the claim gate must have run)",
    )


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
    if not hasattr(config, "workerinput"):  # the xdist controller, or a plain session
        config.pluginmanager.register(ClaimGateGuard(config), "repro-claim-gate-guard")


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


ALLOWED_SKIP = "[--allow-missing-data]"  # marks the skips the user asked for


@pytest.fixture(scope="session")
def data_dir(pytestconfig: pytest.Config):
    """The published data directory. Absent data FAILS the test with the loader's one-line
    message (the gate fails closed); with ``--allow-missing-data`` it skips instead."""
    from repro.base.errors import DataError
    from repro.base.settings import data_dir as resolve
    from repro.published.fetch import require_file

    root = resolve(pytestconfig.getoption("--data-dir"))
    try:
        require_file("gavrikov2024/benchmark.csv", root)
        return root
    except DataError as exc:
        message = str(exc)
    if pytestconfig.getoption("--allow-missing-data"):
        pytest.skip(f"{message} {ALLOWED_SKIP}")
    pytest.fail(
        f"{message}; or pass --allow-missing-data to skip the tests that need it", pytrace=False
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Each report says whether its test carries the ``claims`` marker (``claims_marked``, an
    attribute that reaches the xdist controller with the report). The claim gate reads it, not the
    report's keywords: those hold every parameter id too, so a benchmark parametrized with the id
    ``claims`` counted as a claim test (its skip failed the gate, and its pass would have
    satisfied ``--require-claims``)."""
    outcome = yield
    outcome.get_result().claims_marked = item.get_closest_marker("claims") is not None


class ClaimGateGuard:
    """Counts the ``claims``-marked tests that passed and those skipped; fails the session
    when one was skipped (except under an explicit --allow-missing-data) or, with
    ``--require-claims``, when none passed. Runs on the xdist controller (or a plain session)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.passed = 0
        self.skipped: list[tuple[str, str]] = []  # (node id, reason)
        self.allowed: list[str] = []

    @staticmethod
    def _reason(report: pytest.TestReport) -> str:
        longrepr = report.longrepr
        if isinstance(longrepr, tuple) and len(longrepr) == 3:
            return str(longrepr[2]).removeprefix("Skipped: ")
        return str(longrepr)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not getattr(report, "claims_marked", False) or hasattr(report, "wasxfail"):
            return
        if report.skipped:
            reason = self._reason(report)
            if ALLOWED_SKIP in reason and self.config.getoption("--allow-missing-data"):
                self.allowed.append(report.nodeid)
            else:
                self.skipped.append((report.nodeid, reason))
        elif report.when == "call" and report.passed:
            self.passed += 1

    def failures(self) -> list[str]:
        out = [f"claims-marked test skipped: {nodeid}: {reason}" for nodeid, reason in self.skipped]
        if self.config.getoption("--require-claims") and self.passed == 0:
            out.append(
                "--require-claims: no claims-marked test passed (the claim gate did not run)"
            )
        return out

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.failures() and session.exitstatus in (
            pytest.ExitCode.OK,
            pytest.ExitCode.NO_TESTS_COLLECTED,
        ):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        failures = self.failures()
        if failures:
            terminalreporter.section(
                "claim gate: FAILED (a claim test that does not run is not a pass)", red=True
            )
            for line in failures:
                terminalreporter.write_line(line)
        if self.allowed:
            terminalreporter.section("claim gate: NOT RUN", yellow=True)
            terminalreporter.write_line(
                f"{len(self.allowed)} claims-marked test(s) skipped because the published "
                "data is missing and --allow-missing-data was given: nothing was checked"
            )


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
