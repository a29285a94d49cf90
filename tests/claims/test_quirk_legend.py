"""``python -m repro claims`` names quirk-corrected variants by their ids (Q1, Q3, Q1+Q3) in its
flags and statements; each id is spelled out, with what it corrects, before it is first used."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.claims

HEAD = "quirk-corrected variants (published data with a quirk corrected) ="


def test_every_quirk_id_on_the_screen_is_spelled_out_before_its_first_use(capsys, data_dir):
    from repro.cli import main

    assert main(["claims", "--data-dir", str(data_dir)]) in (0, 1)
    lines = capsys.readouterr().out.splitlines()
    start = lines.index(HEAD)
    legend = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        vid, _, title = line.strip().partition(": ")
        legend[vid] = title
    assert legend == {
        "Q1": "ReaL (last batch, 326 images) dropped from ID and from the benchmarks",
        "Q3": "ImageNet-C as the standard 15-corruption mean",
        "Q1+Q3": "both",
    }
    used = [(i, m) for i, line in enumerate(lines) for m in re.findall(r"\bQ\d(?:\+Q\d)*\b", line)]
    assert used, "the claims output names no variant: the test would check nothing"
    assert min(i for i, _ in used) == start + 1  # the legend is where they first appear
    assert {m for _, m in used} <= set(legend)
