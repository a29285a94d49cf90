"""The pytest plugin the package installs (entry point ``pytest11``, ``repro.pytest_plugin``).

It provides the claim gate's options, its guard, and fixtures that gate a user's own project on a
model's measured values (docs/ci-gate.md, "Gate your own project").

Options (group ``repro``): ``--store``, ``--source``, ``--device``, ``--data-dir``,
``--allow-missing-data``, ``--require-claims``.

The guard fails closed:

- a skipped ``claims``-marked test fails the run (exit status 1, listed in the summary), except
  one skipped under an explicit ``--allow-missing-data`` (then the summary says the gate did not
  run); an xfail is not a skip;
- ``--require-claims`` also fails the run when no ``claims``-marked test passed, so a CI run that
  silently selected or collected no gate test cannot go green.

Fixtures:

- ``data_dir``: the published data directory (``--data-dir``, else the settings'); absent, it
  fails the test with the one-line data message (skips under ``--allow-missing-data``);
- ``repro_store``: the measurement store: ``--store``, else a fresh temporary directory, so a
  gate that measures measures on every run (a store kept between runs is never re-measured);
- ``repro_place``: ``repro_place(model, measure=("shape_bias",))`` runs ``python -m repro
  measure`` for what ``measure`` names (none by default) into ``repro_store``, then ``python -m
  repro place --json``; returns a :class:`Placement` of the validated document
  (``repro.base.output_schemas``). A command that fails fails the test with its output.

``Placement.value(column)`` is the model's placed value; :func:`assert_within` checks it against
an expected value within the study's stated margin for the column (its ``agreement`` file), or
a margin given, and fails when the value is missing or rests on decisions at chance.

The module imports neither NumPy nor torch. No CPU kernels are pinned: the claim snapshots are
compared at the precision each number has (docs/testing.md, "Kernels and CPUs").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ALLOWED_SKIP = "[--allow-missing-data]"  # marks the skips the user asked for


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
        "--store",
        default=None,
        help="measurement store directory (default: settings.store_dir() for the claim tests; "
        "a fresh temporary store for the repro_store fixture)",
    )
    group.addoption(
        "--device",
        default=None,
        help="device for --source measure and repro_place(measure=...) (cuda, cpu; default: "
        "cuda if available)",
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "claims: a gate test: a skip fails the run (repro's claim gate)"
    )
    if not hasattr(config, "workerinput"):  # the xdist controller, or a plain session
        config.pluginmanager.register(ClaimGateGuard(config), "repro-claim-gate-guard")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Mark each report with whether its test carries the ``claims`` marker.

    The attribute ``claims_marked`` reaches the xdist controller with the report. The claim gate
    reads it, not the report's keywords: those hold every parameter id too, so a benchmark
    parametrized with the id ``claims`` would count as a claim test (its skip would fail the gate,
    and its pass would satisfy ``--require-claims``)."""
    outcome = yield
    outcome.get_result().claims_marked = item.get_closest_marker("claims") is not None


class ClaimGateGuard:
    """The claim gate's guard: counts passed and skipped ``claims``-marked tests, fails closed.

    It fails the session when one was skipped (except under an explicit --allow-missing-data) or,
    with ``--require-claims``, when none passed. Runs on the xdist controller (or a plain
    session)."""

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


@pytest.fixture(scope="session")
def data_dir(pytestconfig: pytest.Config):
    """The published data directory.

    Absent data FAILS the test with the loader's one-line message (the gate fails closed); with
    ``--allow-missing-data`` it skips instead."""
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


@pytest.fixture(scope="session")
def repro_store(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The measurement store the gate reads: ``--store``, else a fresh temporary directory."""
    given = pytestconfig.getoption("--store")
    return Path(given) if given else tmp_path_factory.mktemp("repro-store")


@dataclass(frozen=True)
class Placement:
    """``place --json`` for one model, validated (``repro.base.output_schemas``).

    ``studies``: {study: its document}."""

    model: str
    studies: dict[str, Any]  # study name -> StudyPlacementDoc
    store: Path

    def value(self, column: str, study: str | None = None):
        """The placed row of ``column``; fails the test when the model has no value there.

        The row has ``.value``, ``.interval``, ``.k``, ``.n``, ``.rank``, ``.chance`` and
        ``.evidence``."""
        docs = [self.studies[study]] if study else list(self.studies.values())
        for doc in docs:
            for row in doc.placed:
                if row.column == column or row.placement_column == column:
                    return Placed(doc.study, row)
        placed = sorted({f"{d.study}:{r.column}" for d in docs for r in d.placed})
        pytest.fail(
            f"{self.model}: no placed value of {column!r}"
            + (f" in {study}" if study else "")
            + f" (store {self.store}; placed: {', '.join(placed) or 'none'}); measure it, e.g. "
            f"`python -m repro measure --models {self.model} --measurements shape_bias`",
            pytrace=False,
        )


@dataclass(frozen=True)
class Placed:
    study: str
    row: Any  # PlacedRow

    def __getattr__(self, name: str) -> Any:
        return getattr(self.row, name)

    @property
    def at_chance(self) -> bool:
        return bool(self.row.chance is not None and self.row.chance.at_chance)


def stated_margin(study: str, column: str) -> float | None:
    """The study's implementation margin for ``column`` (its ``agreement`` file), or None."""
    from repro.base.study import select
    from repro.claims.agreement import study_margins

    family = study_margins(select([study])[0]).family(column)
    return None if family is None else family.margin


def assert_within(placed: Placed, expected: float, margin: float | None = None) -> None:
    """Fail unless ``placed.value`` lies within ``margin`` of ``expected`` and not at chance.

    ``margin`` defaults to the study's stated margin for the column; a value that rests on decisions
    at chance fails too. The message gives the value, its 95% interval and count."""
    margin = stated_margin(placed.study, placed.column) if margin is None else margin
    if margin is None:
        pytest.fail(
            f"{placed.study} states no margin for {placed.column}: pass margin=", pytrace=False
        )
    from repro.base.numbers import fmt_interval

    if placed.value is None:
        pytest.fail(f"{placed.column} of {placed.study}: no value", pytrace=False)
    what = (
        f"{placed.column} of {placed.study} = {placed.value:.4g}"
        + (f" (95% interval {fmt_interval(tuple(placed.interval))})" if placed.interval else "")
        + (f" from {placed.k}/{placed.n}" if placed.n else "")
    )
    if placed.at_chance:
        pytest.fail(f"{what}: rests on decisions at chance", pytrace=False)
    if abs(placed.value - expected) > margin:
        pytest.fail(f"{what}: not within +-{margin:g} of the expected {expected:g}", pytrace=False)


def _run(args: Sequence[str], what: str) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(
        [sys.executable, "-m", "repro", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": os.environ.get("MPLBACKEND", "Agg")},
    )
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
        command = " ".join(map(str, args))
        pytest.fail(
            f"`python -m repro {command}` ({what}) exited {res.returncode}:\n{tail}",
            pytrace=False,
        )
    return res


@pytest.fixture
def repro_place(pytestconfig: pytest.Config, repro_store: Path, tmp_path: Path):
    """``repro_place(model, measure=(), study=None) -> Placement`` (see the module docstring)."""
    from repro.base.errors import ConfigError
    from repro.base.output_schemas import check

    def place(model: str, measure: Iterable[str] = (), study: str | None = None) -> Placement:
        data = pytestconfig.getoption("--data-dir")
        common = ["--store", repro_store] + (["--data-dir", data] if data else [])
        measure = list(measure)
        if measure:
            device = pytestconfig.getoption("--device")
            _run(
                ["measure", "--models", model, "--measurements", *measure, *common]
                + (["--device", device] if device else []),
                "measuring",
            )
        out = tmp_path / f"place-{model}.json"
        _run(
            ["place", "--model", model, "--json", out, *common]
            + (["--study", study] if study else []),
            "placing",
        )
        try:
            docs = check("place", json.loads(out.read_text()), str(out)).root
        except ConfigError as exc:
            pytest.fail(str(exc), pytrace=False)
        return Placement(model, {d.study: d for d in docs}, repro_store)

    return place
