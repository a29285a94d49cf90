"""The ``unit`` tier's promise, checked (a plugin the root ``conftest.py`` loads): a test marked
``unit`` reads no file of the published data directory and starts no process.

While a unit test runs, opening a file or listing a folder under the data directory (the one the
run resolves, ``--data-dir`` or the settings, and the shared one beside the checkout), asking for
the ``data_dir`` fixture, or starting a process (``subprocess``, ``os.system``, ``os.fork``, the
``os.spawn*``/``exec*`` family, ``multiprocessing``) fails the test with a line that says what it
did and where such a test belongs: ``tests/data/`` (the published files) or ``tests/cli/``
(``python -m repro`` or another process, the negative-input corpus). The refused call raises
pytest's own failure, which ``except Exception`` in the code under test cannot swallow, and a
test whose code swallowed it anyway is reported failed. A process started while a module is being
imported (a library probing its platform on first import: torch's CUDA loader runs ``ldconfig
-p``) is let through, since which unit test first imports torch in a worker depends on the
collection, not on the test. The checkout's git description (store provenance, cached per
process) is looked up before the first test, so no unit test is the one that happens to start
``git``.
"""

from __future__ import annotations

import builtins
import io
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

_WHERE = (
    "a unit test reads no published data and starts no process; move it to tests/data/ "
    "(published files) or tests/cli/ (subprocesses)"
)


def _roots(config: pytest.Config) -> tuple[str, ...]:
    from repro.base.settings import data_dir, shared_data_dir

    out = []
    for root in (data_dir(config.getoption("--data-dir")), shared_data_dir()):
        real = os.path.realpath(root)
        if os.path.isdir(real):
            out.append(real.rstrip(os.sep) + os.sep)
    return tuple(dict.fromkeys(out))


def pytest_sessionstart(session: pytest.Session) -> None:
    from repro.store.record import git_describe

    git_describe()  # cached: the store's provenance never starts git inside a unit test
    session.config._repro_data_roots = _roots(session.config)  # type: ignore[attr-defined]


def _importing() -> bool:
    """Whether a module is being imported (an import frame is on the stack): a library probing
    its platform when first imported (torch's CUDA loader runs ``ldconfig -p``) starts that
    process, not the test that happens to import it first in its worker."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


class _Guard:
    def __init__(self, nodeid: str, roots: tuple[str, ...]):
        self.nodeid, self.roots = nodeid, roots
        self.violations: list[str] = []
        self.saved: list[tuple[Any, str, Any]] = []

    def refuse(self, what: str) -> None:
        self.violations.append(what)
        pytest.fail(f"{self.nodeid}: {what}: {_WHERE}", pytrace=False)

    def in_data(self, path: Any) -> bool:
        if isinstance(path, int) or path is None:
            return False
        try:
            real = os.path.realpath(os.fspath(path))
        except (TypeError, ValueError):
            return False
        real = real.decode() if isinstance(real, bytes) else real
        return any((real + os.sep).startswith(root) for root in self.roots)

    def patch(
        self, owner: Any, name: str, wrapper: Callable[[Callable[..., Any]], Callable[..., Any]]
    ) -> None:
        if not hasattr(owner, name):
            return
        original = getattr(owner, name)
        self.saved.append((owner, name, original))
        setattr(owner, name, wrapper(original))

    def reading(
        self, what: str, default: Any = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
            def guarded(*args: Any, **kwargs: Any) -> Any:
                path = args[0] if args else kwargs.get("file", kwargs.get("path", default))
                if self.in_data(path):
                    self.refuse(f"{what} {os.fspath(path)!r} (the published data directory)")
                return original(*args, **kwargs)

            return guarded

        return wrap

    def starting(self, what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
            def guarded(*args: Any, **kwargs: Any) -> Any:
                if _importing():
                    return original(*args, **kwargs)
                self.refuse(f"started a process ({what})")

            return guarded

        return wrap

    def install(self) -> None:
        self.patch(builtins, "open", self.reading("opened"))
        self.patch(io, "open", self.reading("opened"))
        self.patch(os, "open", self.reading("opened"))
        self.patch(os, "scandir", self.reading("listed", "."))
        self.patch(os, "listdir", self.reading("listed", "."))
        self.patch(subprocess.Popen, "__init__", self.starting("subprocess"))
        for name in (
            "system",
            "popen",
            "fork",
            "forkpty",
            "posix_spawn",
            "posix_spawnp",
            "execv",
            "execve",
            "execvp",
            "execvpe",
            "spawnv",
            "spawnve",
            "spawnvp",
            "spawnvpe",
        ):
            self.patch(os, name, self.starting(f"os.{name}"))
        import multiprocessing.process

        self.patch(multiprocessing.process.BaseProcess, "start", self.starting("multiprocessing"))

    def remove(self) -> None:
        for owner, name, original in reversed(self.saved):
            setattr(owner, name, original)


@pytest.fixture(autouse=True)
def _unit_tests_read_no_data_and_start_no_process(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    if "data_dir" in request.fixturenames:
        pytest.fail(
            f"{request.node.nodeid}: asks for the data_dir fixture: {_WHERE}", pytrace=False
        )
    guard = _Guard(request.node.nodeid, getattr(request.config, "_repro_data_roots", ()))
    request.node._repro_guard = guard  # type: ignore[attr-defined]
    guard.install()
    try:
        yield
    finally:
        guard.remove()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A unit test that passed although it was refused (the code under test swallowed the
    failure) is reported failed."""
    outcome = yield
    report = outcome.get_result()
    guard = getattr(item, "_repro_guard", None)
    if report.when == "call" and report.passed and guard is not None and guard.violations:
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid}: {guard.violations[0]}: {_WHERE}"
