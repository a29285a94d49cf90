"""REPORT.md's section "What other labs measured" is built from the real independent sources: its
counts are the ones ``python -m repro compare --independent --json`` and ``python -m repro claims
--source independent --json`` write (run here in-process on the shared data), its tables stay
short, and its figure and the figure's data are written."""

from __future__ import annotations

import csv
import json
import re
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.claims

CELL_WORDS = 40
SECTION_WORDS = 700  # words with a letter or digit, numbers in the tables included (641 today)


@pytest.fixture(scope="module")
def built(tmp_path_factory, data_dir, published_claim_context):
    """(section text, its asset folder, compare JSON of the study, claims JSON)."""
    from repro.cli import main
    from repro.report import ReportContext
    from repro.report.png import style
    from repro.report.sections.independent import render

    tmp = tmp_path_factory.mktemp("independent_section")
    assert (
        main(
            [
                "compare",
                "--independent",
                "--study",
                "gavrikov2024",
                "--data-dir",
                str(data_dir),
                "--json",
                str(tmp / "compare.json"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "claims",
                "--source",
                "independent",
                "--study",
                "gavrikov2024",
                "--data-dir",
                str(data_dir),
                "--json",
                str(tmp / "claims.json"),
            ]
        )
        == 0
    )
    compare = json.loads((tmp / "compare.json").read_text())["studies"]
    assert [s["study"] for s in compare] == ["gavrikov2024"]
    claims = json.loads((tmp / "claims.json").read_text())["claims"]
    ctx = ReportContext(tmp / "REPORT.md", [], claims=published_claim_context)
    with style():
        text = render(ctx)
    return text, tmp / "report_assets", compare[0], claims


def test_section_counts_are_those_of_compare_independent(built, published_claim_context):
    text, _, compare, _ = built
    assert text.startswith("## What other labs measured\n")
    rows = compare["rows"]
    for s in compare["summary"]:
        counts = f"{s['agrees']}/{s['differs']}/{s['inconclusive']}/{s['other_protocol']}"
        column = s["column"].replace("<", "&lt;").replace(">", "&gt;")  # not an HTML tag
        assert f"| {s['source']} | {column} | {s['models']} | {counts} |" in text, s
    n = {label: sum(r["label"] == label for r in rows) for label in ("agrees", "differs")}
    n["inconclusive"] = sum(r["label"] == "inconclusive" for r in rows)
    n["other"] = sum(r["label"] == "other_protocol" for r in rows)
    same = n["agrees"] + n["differs"] + n["inconclusive"]
    assert same > 0 and n["differs"] > 0  # the data has disagreements: the list is exercised
    assert (
        f"Of {same} pairs under the same protocol, {n['agrees']} agree, {n['differs']} differ "
        f"and {n['inconclusive']} are inconclusive" in text
    )
    assert f"{n['other']} pairs are of another protocol" in text
    population = set(published_claim_context.population)
    covered = {r["study_model"] for r in rows if r["label"] != "not_same"} & population
    assert f"**Coverage.** {len(covered)} of the {len(population)} study models" in text
    for source in {r["source"] for r in rows}:
        models = {
            r["study_model"] for r in rows if r["source"] == source and r["label"] != "not_same"
        }
        assert re.search(rf"^\| {source} \| {len(models)} \| \d+ \|", text, re.M), source


def test_disagreements_and_collisions_are_listed(built):
    text, _, compare, _ = built
    differs = [r for r in compare["rows"] if r["label"] == "differs"]
    block = text[text.index("**Disagreements**") : text.index("**Name collisions**")]
    assert f"({len(differs)} pairs beyond the margin" in block
    for r in differs:
        assert r["cause"] and f"{r['cause']} (" in block
        assert (
            f"{r['study_model']} {r['column'].split('/')[-1]} ({r['source']}) "
            f"{r['difference']:+.3g}" in block
        )
    collisions = {
        (r["source_model"], r["study_model"]) for r in compare["rows"] if r["label"] == "not_same"
    }
    assert collisions
    block = text[text.index("**Name collisions**") : text.index("**Claims on independent")]
    for source_model, study_model in collisions:
        assert f"`{source_model}` = `{study_model}`" in block


def test_claims_table_is_that_of_claims_source_independent(built):
    text, _, _, claims = built
    with_inputs = [c for c in claims if c["independent"] is not None]
    assert with_inputs and len(with_inputs) < len(claims)
    assert f"{len(with_inputs)} of {len(claims)} claims read a value another lab measured" in text
    for c in claims:
        ev = c["evidence"]
        verdict = c["verdict"] if c["independent"] is not None else "-"
        assert (
            f"| `{c['id']}` | {c['reanalysis']['verdict']} | {verdict} | "
            f"{ev['independent']} of {ev['total']} | {c['differs']} |" in text
        ), c["id"]


def test_section_is_short(built):
    text, *_ = built
    assert "<" not in text  # markdown would read <corruption> as an HTML tag
    words = [w for w in text.split() if re.search(r"\w", w)]
    assert len(words) <= SECTION_WORDS, len(words)
    for line in text.splitlines():
        if line.startswith("|"):
            for cell in line.strip("|").split("|"):
                assert len(cell.split()) <= CELL_WORDS, cell


def test_figure_and_its_data_are_written(built):
    from repro.report.png import text_chunks
    from repro.report.sections.independent_figure import FIGURE, TABLE

    text, assets, compare, _ = built
    assert f"](report_assets/{FIGURE})" in text and f"(report_assets/{TABLE})" in text
    png = (assets / FIGURE).read_bytes()
    assert png.startswith(b"\x89PNG") and text_chunks(png) == []
    with (assets / TABLE).open() as f:
        drawn = [
            (r["column"], r["study_model"], r["source"], r["label"]) for r in csv.DictReader(f)
        ]
    expected = [
        (r["column"], r["study_model"], r["source"], r["label"])
        for r in compare["rows"]
        if "<" not in r["entry"] and r["published"] is not None
    ]
    assert drawn == expected and len({c for c, *_ in drawn}) >= 4


def test_a_study_without_sources_has_no_section():
    from repro.base.study import get_study
    from repro.report.sections.independent import render

    ctx = SimpleNamespace(claims=SimpleNamespace(study=get_study("imagenetx")))
    assert render(ctx) == ""
