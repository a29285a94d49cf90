"""Light commands stay light: ``python -m repro --help``, ``models``, ``claims``, ``claims
--census``, ``claims --source independent``, ``measure --list`` and the interactive ``plan``,
``compare`` and ``place`` import neither torch nor matplotlib (they answer in seconds on 2 cores;
torch alone takes about two to import). This is why repro/ keeps some imports of heavy packages
inside functions (docs/architecture.md, "Imports inside functions"), and why a measurement's
version is read from its module's source (``repro.measurements.source_version``). Each runs as a
user runs it, ``python -m repro`` in a fresh interpreter, with ``-X importtime``: every module that
process imports is listed on stderr."""

from __future__ import annotations

import re

import pytest

from tests.small_store import write_small_store

pytestmark = pytest.mark.cli

HEAVY = ("torch", "matplotlib")


def imported(stderr: str) -> set[str]:
    """The top-level packages of the modules an ``-X importtime`` run lists."""
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)\s*$", stderr, re.MULTILINE)
    return {name.split(".")[0] for name in names}


# by the name docs/cli.md gives them (its conventions list these, and only these)
COMMANDS = {
    "--help": ["--help"],
    "models": ["models"],
    "claims": ["claims"],
    "claims --census": ["claims", "--census"],
    "claims --source independent": ["claims", "--source", "independent"],
    "measure --list": ["measure", "--list"],
    "plan": ["plan"],
    "compare": ["compare"],
    "compare --independent": ["compare", "--independent"],
    "place": ["place", "--model", "tv_resnet50"],
}
WITH_STORE = ("compare", "place")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_light_commands_import_neither_torch_nor_matplotlib(name, run_cli, data_dir, tmp_path):
    args = COMMANDS[name]
    with_data = ("claims", "claims --source independent", "compare --independent", *WITH_STORE)
    extra = ["--data-dir", str(data_dir)] if name in with_data else []
    if name in WITH_STORE:  # current and stale records: both commands read every version
        extra += ["--store", str(write_small_store(tmp_path / "store"))]
    res = run_cli(
        *args,
        *extra,
        env={"PYTHONPROFILEIMPORTTIME": "1", "REPRO_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert res.returncode == 0, res.stderr[-2000:]
    if name in WITH_STORE:  # it did its work: the stored model is in what it printed
        assert "tv_resnet50" in res.stdout, res.stdout
    mods = imported(res.stderr)
    assert (
        "repro" in mods and "argparse" in mods
    )  # the listing is there: the check can see an import
    assert not mods & set(HEAVY), (
        f"python -m repro {' '.join(args)} imported {sorted(mods & set(HEAVY))}"
    )


def test_the_manual_lists_the_commands_checked_here():
    """docs/cli.md's conventions name the light commands: the same set as COMMANDS."""
    from repro.base.settings import checkout_dir

    text = (checkout_dir() / "docs" / "cli.md").read_text()
    (item,) = [x for x in text.split("\n- ") if "import neither torch nor matplotlib" in x]
    named = re.findall(r"`([^`]+)`", item.split("import neither")[0])
    assert sorted(named) == sorted(COMMANDS), item


def test_the_import_listing_shows_a_heavy_import():
    """The same listing shows torch and matplotlib where a process imports them."""
    import subprocess
    import sys

    res = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import matplotlib, torch"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0 and set(HEAVY) <= imported(res.stderr)
