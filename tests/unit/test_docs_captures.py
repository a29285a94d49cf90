"""The captures of the docs (``docs/gen_cli_output.py``) without running anything: what a rerun may
differ in (timings) and the recorded inputs of every expensive capture
(``docs/captures.lock.json``; ``tests/cli/test_docs_captures.py`` runs the check itself)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.by_path import load_module

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    return load_module("gen_cli_output", ROOT / "docs" / "gen_cli_output.py")


GEN = _generator()
INPUTS = GEN.capture_inputs


def test_a_rerun_that_differs_in_timings_only_keeps_the_page_text():
    ex = GEN.Example("e", "x", expensive=True)
    page = (
        "# captured with ... on 2 CPU cores; 48 s wall here\n$ x\n3 passed in 48.22s\ndone (12 s)\n"
    )
    rerun = (
        "# captured with ... on 2 CPU cores; 95 s wall here\n$ x\n3 passed in 91.02s\ndone (3 s)\n"
    )
    assert GEN.masked(page, ex) == GEN.masked(rerun, ex)
    assert GEN.masked(page, ex) != GEN.masked(rerun.replace("3 passed", "4 passed"), ex)
    cheap = GEN.Example("c", "x")  # a cheap example compares its timings too, unless volatile
    assert GEN.masked("in 1.0 s", cheap) != GEN.masked("in 2.0 s", cheap)
    bench = GEN.Example("b", "x", expensive=True, volatile=GEN.NUMBERS)
    assert GEN.masked("spectral: 22.0x faster", bench) == GEN.masked("spectral: 9.5x faster", bench)


def test_every_expensive_capture_of_the_docs_was_recorded_with_its_text():
    """Each expensive example in the pages (but those run only by name that were never
    recorded) has a lock entry whose text digest is the page's: a capture edited by hand, or
    written without its inputs, is caught without rerunning anything."""
    lock = INPUTS.load(ROOT)
    pages = sorted((ROOT / "docs").rglob("*.md"))
    blocks = {b.name: b for p in pages for b in GEN.parse(p.read_text(), str(p))}
    wrong = []
    for ex in GEN.examples():
        block = blocks.get(f"example:{ex.name}")
        if not ex.expensive or block is None or (ex.manual and ex.name not in lock):
            continue
        if ex.name not in lock:
            wrong.append(f"{ex.name}: no recorded inputs")
        elif lock[ex.name]["output"] != INPUTS.text_digest(block.body):
            wrong.append(f"{ex.name}: not the captured text")
    assert not wrong, "run python docs/gen_cli_output.py --only NAME:\n  " + "\n  ".join(wrong)
    assert re.search(r"\brepro/cli/", " ".join(lock.get("measure-mini", {}).get("inputs", {})))


def test_omit_replaces_a_part_by_its_length_and_what_it_is():
    lines = ["study: x", "claim  verdict", "a      ok", "b      ok", "", "wrote R.md", "done"]
    assert GEN.omit(lines, r"claim ", r"wrote ", "the claims table") == [
        "study: x",
        "... (4 lines: the claims table)",
        "wrote R.md",
        "done",
    ]
    assert GEN.omit(lines, r"nothing", r"wrote ", "x") == lines  # no such part: unchanged
    assert GEN.omit(lines, r"wrote ", r"never", "the rest") == [
        *lines[:5],
        "... (2 lines: the rest)",
    ]
