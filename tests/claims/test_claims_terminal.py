"""The claims table in a terminal (``repro.diagnostics.terminal``): ``python -m repro claims`` fits
100 columns and names every study and claim it lists, ``--wide`` is the full table of
``repro.diagnostics.output.format_table`` unchanged, and ``reproduce`` prints the same table as
``claims`` (the same columns and intervals) for the same claims."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.claims


def _results(contexts: dict, outcomes) -> list:
    return [(ctx, outcomes.of(name)) for name, ctx in contexts.items()]


def test_claims_fits_100_columns_and_names_every_study_and_claim(
    run_cli, data_dir, published_claim_contexts, published_outcomes
):
    res = run_cli("claims", "--data-dir", data_dir, env={"COLUMNS": "100"})
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    too_long = [line for line in lines if len(line) > 100]
    assert not too_long, too_long
    studies = {name: len(published_outcomes.of(name)) for name in published_claim_contexts}
    assert len(studies) >= 3  # the three shipped studies at least
    for name, n in studies.items():  # the first line names each study with its claim count
        assert f"{name} ({n})" in lines[0], lines[0]
    ids = [o.claim.id for o in published_outcomes.all()]
    assert len(ids) == sum(studies.values())
    from repro.diagnostics.strength import grade_counts, strength

    grades = []
    for cid in ids:  # each claim id in full, on its own line, its values on the next
        assert cid in lines, cid
        row = lines[lines.index(cid) + 1]
        o = published_outcomes[cid]
        s = strength(o, published_claim_contexts[o.claim.study])
        # the finding's verdict and the strength grade (whose first word fits on the first line)
        assert row.startswith("  ") and s.finding.verdict in row, (cid, row)
        assert f"  {s.grade.split()[0]}" in row, (cid, row)
        grades.append(s.grade)
    # the summary line counts the claims by grade
    summary = " ".join(res.stdout.rstrip().split("\n\n")[-1].split())
    assert summary.startswith(f"{len(ids)} of {len(ids)} claims as recorded"), summary
    assert f"by strength: {grade_counts(grades)};" in summary, summary
    assert "inputs" not in lines[lines.index("claim") + 1]  # the provenance is left to --wide


def test_claims_narrow_terminal_wraps_cells_and_explanations(run_cli, data_dir):
    res = run_cli(
        "claims", "--data-dir", data_dir, "--study", "gavrikov2024", env={"COLUMNS": "72"}
    )
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert max(map(len, lines)) <= 72, max(lines, key=len)
    assert "shape_bias_vs_id_accuracy" in lines


def test_wide_is_the_full_table_unchanged(
    run_cli, data_dir, published_claim_contexts, published_outcomes
):
    """``--wide``: the table of ``format_table`` (every column, the explanations unwrapped), as
    ``claims`` printed it before the fitted table, then the summary line unwrapped."""
    from repro.diagnostics.output import format_table
    from repro.diagnostics.replication import replication
    from repro.diagnostics.statements import statements_of

    results = _results(published_claim_contexts, published_outcomes)
    outcomes = [o for _, os in results for o in os]
    statements = {o.claim.id: statements_of(o, ctx) for ctx, os in results for o in os}
    replications = {o.claim.id: replication(o, ctx) for ctx, os in results for o in os}
    from repro.diagnostics.strength import strength

    strengths = {o.claim.id: strength(o, ctx) for ctx, os in results for o in os}
    res = run_cli("claims", "--data-dir", data_dir, "--wide", env={"COLUMNS": "100"})
    assert res.returncode == 0, res.stdout + res.stderr
    table = format_table(outcomes, statements, replications, strengths)
    assert res.stdout.startswith(table + "\n\n"), res.stdout[:500]
    summary = res.stdout[len(table) + 2 :].splitlines()
    assert len(summary) == 1 and summary[0].startswith(f"{len(outcomes)} of {len(outcomes)} claims")
    assert len(summary[0]) > 100  # unwrapped, as before
    assert res.stdout.splitlines()[0].split()[-1] == "inputs"


def test_reproduce_prints_the_claims_table(
    tmp_path, monkeypatch, capsys, data_dir, published_claim_contexts, published_outcomes
):
    """``reproduce`` on the same claims prints what ``claims`` prints above its summary line: the
    same columns, intervals and P(verdict) (the runner is replaced by the published contexts and
    outcomes; no report is written)."""
    import repro.report
    import repro.runner.reproduce
    from repro.cli import main
    from repro.diagnostics.terminal import claims_table

    results = _results(published_claim_contexts, published_outcomes)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(
        repro.runner.reproduce,
        "reproduce",
        lambda studies, **_: repro.runner.reproduce.Reproduction(
            [ctx for ctx, _ in results], [os for _, os in results], []
        ),
    )
    monkeypatch.setattr(repro.report, "write_report", lambda *a, **k: [])
    code = main(["reproduce", "--published-only", "--out", str(tmp_path / "R.md")])
    reproduced = capsys.readouterr().out
    assert code == 0, reproduced
    assert main(["claims", "--data-dir", str(data_dir)]) == 0
    claims = capsys.readouterr().out
    table = claims[: claims.index(f"\n\n{len(published_outcomes.all())} of ")]
    assert "interval = one per claim" in table and "P(finding)" in table and "strength" in table
    assert reproduced.startswith(table + "\n"), reproduced[:500]
    assert table == claims_table(results, width=100)
