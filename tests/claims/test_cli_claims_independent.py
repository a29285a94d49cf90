"""``python -m repro claims --source independent [--json OUT]``: the claims recomputed on other
labs' same-protocol values of the same checkpoints, text and JSON, checked against what
``compare --independent --json`` lists; a study without sources says so; bad input is one line,
exit 2, nothing written."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli.test_compare_independent import _lab

pytestmark = pytest.mark.claims

JUDGED = ("agrees", "differs", "inconclusive")


@pytest.fixture(scope="module")
def ran(run_cli, data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("ind") / "claims.json"
    res = run_cli("claims", "--source", "independent", "--data-dir", data_dir, "--json", out)
    assert res.returncode == 0, res.stderr[-2000:]
    return res, json.loads(out.read_text())


def test_text_and_json_agree_and_every_claim_is_listed(ran, published_claim_contexts):
    from repro.claims.check import evaluate_all
    from repro.diagnostics.independent_inputs import CHOICE_RULE

    res, doc = ran
    published = {
        o.claim.id: o for ctx in published_claim_contexts.values() for o in evaluate_all(ctx)
    }
    by_id = {c["id"]: c for c in doc["claims"]}
    assert set(by_id) == set(published)  # no study's claims silently left out
    assert doc["choice_rule"] == CHOICE_RULE and "choice rule: " + CHOICE_RULE in res.stdout
    for cid, c in by_id.items():
        assert c["reanalysis"]["verdict"] == published[cid].verdict, cid
        (row,) = [x for x in res.stdout.splitlines() if x.startswith(cid + " ")]
        assert c["evidence"]["text"] in row, (cid, row)
        assert c["reanalysis"]["verdict"] in row
        if c["independent"] is None:
            assert c["verdict"] == c["reanalysis"]["verdict"]
            assert f"{c['verdict']} (re-analysis)" in row and c["evidence"]["kind"] == "re-analysis"
        else:
            k, n = c["evidence"]["independent"], c["evidence"]["total"]
            assert re.search(rf"\bindependent \({k} of {n} inputs\)$", row), row
            assert 0 < k <= n and len(c["substituted"]) == k
    for study in ("imagenetx", "subramanian2023"):
        for c in doc["claims"]:
            if c["study"] == study:
                assert c["evidence"]["text"] == "re-analysis (no independent inputs declared)"
    assert "no independent inputs declared: imagenetx, subramanian2023" in res.stdout


def test_the_replaced_inputs_are_compares_same_protocol_values(
    ran, run_cli, data_dir, tmp_path, published_claim_context
):
    """Each claim's replaced inputs are exactly the (model, column) cells among its inputs that
    ``compare --independent`` lists with a judged label and a certain or probable identity; the
    value is one of those listed for the cell."""
    from repro.claims.check import evaluate_all

    _, doc = ran
    out = tmp_path / "cmp.json"
    res = run_cli("compare", "--independent", "--data-dir", data_dir, "--json", out)
    assert res.returncode == 0, res.stderr[-2000:]
    (study,) = [s for s in json.loads(out.read_text())["studies"] if s["study"] == "gavrikov2024"]
    values: dict[tuple[str, str], list[float]] = {}
    for r in study["rows"]:
        if r["label"] in JUDGED and r["identity"] in ("certain", "probable"):
            values.setdefault((r["study_model"], r["column"]), []).append(r["independent"])
    by_id = {c["id"]: c for c in doc["claims"]}
    some = 0
    for o in evaluate_all(published_claim_context):
        cells = {(m, c) for c, row in o.provenance.cells.items() for m in row}
        c = by_id[o.claim.id]
        got = {(s["model"], s["column"]): s for s in c["substituted"]}
        assert set(got) == cells & set(values), o.claim.id
        assert c["evidence"]["total"] == len(cells)
        for cell, s in got.items():
            assert s["independent"] in values[cell] and s["candidates"] == len(values[cell])
            # exact_difference drops float32 residue below the values' precision
            assert s["difference"] == pytest.approx(s["independent"] - s["published"], abs=1e-6)
        moved = [m["effect"] for m in c["moved"]]
        assert all(e != 0 for e in moved) and moved == sorted(moved, key=abs, reverse=True)
        some += bool(got)
    assert some  # the shared data gives some claim an independent input


def test_options_without_meaning_and_a_bad_source_are_one_line_exit_2(run_cli, data_dir, tmp_path):
    res = run_cli("claims", "--source", "independent", "--store", tmp_path, "--data-dir", data_dir)
    assert res.returncode == 2 and "--store: has no meaning with --source independent" in res.stderr
    decl = _lab(tmp_path / "lab", sha256="0" * 64)
    out = tmp_path / "out" / "c.json"
    res = run_cli(
        "claims",
        "--source",
        "independent",
        "--data-dir",
        data_dir,
        "--json",
        out,
        env={"REPRO_INDEPENDENT_PATH": str(decl)},
    )
    assert res.returncode == 2, res.stderr[-2000:]
    lines = [x for x in res.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert "mylab.csv" in lines[0] and "sha256" in lines[0]
    assert not out.exists() and not out.with_name("c.json.tmp").exists()
