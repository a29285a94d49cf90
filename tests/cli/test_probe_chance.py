"""``probe shape-bias`` on a random-weights model, as a user runs it on the shipped cue-conflict
images: it flags the decisions at chance, its last line says that nothing was stored and which
command stores it; that command, run as printed (into a temporary store), stores it, and
``place`` then ranks the value with the flag, in the text and in ``--json``, with the same N."""

from __future__ import annotations

import json
import os
import re
import shlex

import pytest

pytestmark = pytest.mark.cli


def test_a_random_model_is_flagged_at_chance_and_told_how_to_store_it(run_cli, data_dir, tmp_path):
    cue = data_dir / "texture-vs-shape" / "cue-conflict"
    res = run_cli(
        "probe", "shape-bias", "--model", "tiny_random_a", "--data", cue, "--device", "cpu"
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert any(
        line.startswith("  AT CHANCE: ")
        and " shape-or-texture decisions of 1,200 trials " in line
        and "not above chance" in line
        for line in lines
    ), res.stdout
    last = lines[-1]
    assert last.startswith("not stored: a probe prints its result"), last
    command = re.search(r"to store it, run `(.+)`$", last)[1]
    words = shlex.split(command)
    assert words[0] == f"REPRO_CUE_CONFLICT_ROOT={cue.resolve()}"
    assert words[1:6] == ["python", "-m", "repro", "measure", "--models"]
    assert words[6:] == ["tiny_random_a", "--measurements", "shape_bias"]

    # the command as printed (its variable, its arguments), into a temporary store
    store = tmp_path / "store"
    variable, value = words[0].split("=", 1)
    res = run_cli(
        *words[4:], "--store", store, "--device", "cpu", "--no-progress", env={variable: value}
    )
    assert res.returncode == 0, res.stderr
    res = run_cli(
        "place", "--model", "tiny_random_a", "--store", store, "--json", tmp_path / "p.json"
    )
    assert res.returncode == 0, res.stderr
    row = next(ln for ln in res.stdout.splitlines() if ln.startswith("shape-bias  "))
    shown = re.search(r"(\d+) of (\d+) \(AT CHANCE\)", row)
    assert shown, row
    doc = next(d for d in json.loads((tmp_path / "p.json").read_text()) if d["placed"])
    rank = doc["placed"][0]["rank"]
    assert (rank["rank"], rank["of"], rank["at_chance"]) == (int(shown[1]), int(shown[2]), True)
    assert os.path.isfile(store / "tiny_random_a" / "shape_bias.json")
