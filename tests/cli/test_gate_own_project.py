"""docs/ci-gate.md's recipe for gating a project of one's own, run as written: the package is
installed (``pip install --no-deps --target``, from a copy of its sources) into a folder that is
the only thing on the project's ``PYTHONPATH``, so its pytest plugin is loaded by its entry point
alone, with no ``conftest.py``; the recipe's files are taken from the page; the store holds what
``python -m repro measure`` would have written for the model (a shape bias of 250 shape and 550
texture decisions of 1,200). The run passes; with the stored value moved to 300 of 800 it fails,
with the line the page shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.small_store import shape_record
from tests.waiting import HANG_GUARD_S

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "ci-gate.md"
FILE = re.compile(r"<!-- recipe-file: (?P<path>\S+) -->\n```\w*\n(?P<body>.*?)\n```", re.S)
OUTPUT = re.compile(r"<!-- recipe-output -->\n```text\n(?P<line>.*?)\n```", re.S)


def recipe() -> tuple[dict[str, str], str]:
    """{path: content} of the page's recipe files, and the failure line it shows."""
    text = PAGE.read_text()
    files = {m["path"]: m["body"] + "\n" for m in FILE.finditer(text)}
    shown = OUTPUT.search(text)
    assert files and shown, f"{PAGE}: no recipe-file blocks or no recipe-output block"
    return files, shown["line"]


def install_package(into: Path, work: Path) -> None:
    """The package alone (no dependencies: the interpreter's), built from a copy of its sources
    so that no build folder lands in the checkout."""
    src = work / "src"
    shutil.copytree(
        ROOT / "repro", src / "repro", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    res = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
        + ["--no-index", "--target", str(into), str(src)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def write_store(store: Path, shape: int, texture: int) -> None:
    """The record `python -m repro measure --models my_model --measurements shape_bias` writes."""
    from repro.store.files import Store

    Store(store).write(
        shape_record(
            "my_model",
            shape,
            texture,
            dataset_items=1280,
            dataset_mini=False,
            dataset_partial=False,
        )
    )


def test_the_recipe_passes_then_fails_when_the_stored_value_moves(tmp_path, data_dir):
    files, failure_line = recipe()
    site, project = tmp_path / "site", tmp_path / "my-project"
    install_package(site, tmp_path)
    for path, body in files.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(body)
    assert not list(project.rglob("conftest.py"))
    store = project / "ci-store"
    write_store(store, 250, 550)  # 0.3125, the recipe's value

    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTHONPATH" and not k.startswith(("PYTEST_", "REPRO_"))
    }
    env |= {"PYTHONPATH": str(site), "REPRO_DATA_DIR": str(data_dir), "MPLBACKEND": "Agg"}
    env["REPRO_CACHE_DIR"] = str(tmp_path / "cache")

    def pytest_run() -> tuple[int, str]:
        res = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
            + [f"--store={store}"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
            env=env,
        )
        return res.returncode, res.stdout + res.stderr

    where = subprocess.run(
        [sys.executable, "-c", "import repro.pytest_plugin as p; print(p.__file__)"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
    )
    assert where.stdout.strip() == str(site / "repro" / "pytest_plugin.py"), where
    rc, out = pytest_run()
    assert rc == 0 and "1 passed" in out, out
    # the header lists the distributions whose pytest11 entry point was loaded: the package's
    plugins = next(line for line in out.splitlines() if line.startswith("plugins:"))
    assert re.search(r"\brepro-\d", plugins), plugins

    write_store(store, 300, 500)  # the measured value moves: 0.375
    rc, out = pytest_run()
    assert rc == 1 and "1 failed" in out, out
    assert failure_line in out, out
