"""``python -m repro claims --census`` (issue 36) as a user runs it: it prints every statement of
each study's census with the counts per status, the counts it prints are the counts of the files
(read here with tomllib), ``--json`` writes the same, and bad input is one line with exit
status 2."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ("gavrikov2024", "imagenetx", "subramanian2023")
STATUSES = ("claim", "table", "open", "not testable here", "out of scope")


def _file_counts(study: str) -> Counter:
    raw = tomllib.loads((ROOT / "repro" / "studies" / study / "census.toml").read_text())
    return Counter(s["status"] for s in raw["statement"])


def test_census_prints_every_statement_and_the_files_counts(run_cli, tmp_path):
    out_json = tmp_path / "census.json"
    res = run_cli("claims", "--census", "--json", out_json)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = res.stdout.splitlines()
    totals = [0, 0]
    for study in STUDIES:
        counts = _file_counts(study)
        gated, total = counts["claim"] + counts["table"], sum(counts.values())
        testable = gated + counts["open"]
        totals[0] += gated
        totals[1] += total
        by_status = ", ".join(f"{k} {counts.get(k, 0)}" for k in STATUSES)
        summary = (
            f"  {gated} of {total} statements gated ({gated} of {testable} testable, "
            f"{100 * gated / testable:.0f}%); by status: {by_status}"
        )
        assert summary in lines, (summary, res.stdout[-3000:])
        head = lines.index(next(x for x in lines if x.startswith(f"{study} (")))
        rows = lines[head + 1 : lines.index(summary)]
        assert len(rows) == total
        printed = Counter(
            re.match(r"\s+\S+\s+(claim|table|open|not testable here|out of scope)\s", r).group(1)
            for r in rows
        )
        assert printed == counts
    assert lines[-2] == (
        f"{totals[0]} of {totals[1]} statements gated over 3 studies "
        f"({totals[0]} of {totals[0] + sum(_file_counts(s)['open'] for s in STUDIES)} testable)"
    )
    assert lines[-1] == f"wrote {out_json}"
    doc = json.loads(out_json.read_text())["census"]
    assert sorted(doc) == sorted(STUDIES)
    for study in STUDIES:
        assert doc[study]["counts"] == {k: _file_counts(study).get(k, 0) for k in STATUSES}
        assert len(doc[study]["entries"]) == sum(_file_counts(study).values())


def test_census_of_one_study(run_cli):
    res = run_cli("claims", "--census", "--study", "imagenetx")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith("imagenetx (") and "gavrikov2024" not in res.stdout
    assert "colorjitter_hurts_pose" in res.stdout
    assert res.stdout.rstrip().endswith("statements gated over 1 study (9 of 10 testable)")


def _copy_study(tmp_path: Path, census_edit) -> Path:
    """The ImageNet-X study folder copied under another name (its claim ids prefixed), its census
    edited."""
    folder = tmp_path / "ix_copy"
    shutil.copytree(ROOT / "repro" / "studies" / "imagenetx", folder)
    for name, old, new in (
        ("study.toml", 'name = "imagenetx"', 'name = "ix_copy"'),
        ("claims.toml", 'study = "imagenetx"', 'study = "ix_copy"'),
        ("claims.toml", 'id = "imagenetx_', 'id = "copy_'),
        ("census.toml", '"imagenetx_', '"copy_'),
    ):
        path = folder / name
        path.write_text(path.read_text().replace(old, new))
    path = folder / "census.toml"
    path.write_text(census_edit(path.read_text()))
    return folder


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda t: t.replace('"copy_colorjitter_spillover_pose"', '"copy_colorjitter_pose"'),
            "statement #10 ('colorjitter_hurts_pose'): claims: unknown claim id "
            "'copy_colorjitter_pose'; did you mean 'copy_colorjitter_spillover_pose'?",
        ),
        (
            lambda t: t.replace('status = "open"', 'status = "maybe"', 1),
            "statement #11 ('blur_spillover'): status = 'maybe', expected one of",
        ),
    ],
)
def test_bad_census_is_one_line_exit_2(run_cli, tmp_path, edit, expected):
    folder = _copy_study(tmp_path, edit)
    res = run_cli("claims", "--census", "--study", "ix_copy", env={"REPRO_STUDY_PATH": str(folder)})
    assert res.returncode == 2, res.stdout + res.stderr
    err = res.stderr.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith(f"error: {folder / 'census.toml'}: ") and expected in err, err
    assert res.stdout == ""


def test_census_refuses_the_options_of_a_computation(run_cli):
    res = run_cli("claims", "--census", "--source", "store")
    assert res.returncode == 2
    assert res.stderr.strip() == (
        "error: --source: has no meaning with --census (it lists the papers' statements; no "
        "claim is computed)"
    )
