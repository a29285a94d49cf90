"""A study is one folder: a THIRD study, built in a temporary folder (its study.toml, a tiny CSV
table, one claim and one statistic module on sys.path), is picked up by ``claims``, the report
and ``measure --study`` through REPRO_STUDY_PATH, with no change to the core."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from repro.report import full_text

pytestmark = pytest.mark.integration

STATS = '''
"""The toy study's statistic and report section."""
from repro.analysis.result import StatisticResult


def mean_score(ctx, *, column):
    models = ctx.table.models
    values = ctx.table.column(column, models)
    return StatisticResult(value=float(values.mean()), n=len(models),
                           per_model={m: float(v) for m, v in zip(models, values)},
                           sources={column: ctx.table.source_of(column)})


def section(ctx):
    return "## Toy scores\\n\\n" + ", ".join(f"{m}: {ctx.claims.table.value(m, 'score'):g}"
                                             for m in ctx.claims.table.models) + "\\n"
'''

STUDY = """
name = "toystudy"
title = "A toy study"
citation = "Nobody: A Toy Study. Tests 2026"
claims = "claims.toml"
measurements = ["fake_a"]
models = ["tiny_a", "tiny_b"]

[table]
file = "table.csv"

[report]
header = "Toy claims from a CSV shipped with the study (inputs: {inputs})."
sections = ["toy_study_stats:section"]
"""

CLAIMS = """
[[claim]]
id = "toy_mean_score"
study = "toystudy"
statement = "The toy models score 0.50 on average"
source = "this test"
statistic = "toy_study_stats:mean_score"
params = { column = "score" }
published = 0.5
version = 1
[claim.tolerance]
policy = "rounding"
params = { decimals = 2 }
reason = "printed with two decimals"
"""


@pytest.fixture
def toy(tmp_path):
    """The study folder under ``tmp_path/studies`` and the environment that makes it visible."""
    folder = tmp_path / "studies" / "toy"
    folder.mkdir(parents=True)
    (folder / "study.toml").write_text(textwrap.dedent(STUDY))
    (folder / "claims.toml").write_text(textwrap.dedent(CLAIMS))
    (folder / "table.csv").write_text("model,score\ntiny_a,0.42\ntiny_b,0.58\n")
    code = tmp_path / "code"
    code.mkdir()
    (code / "toy_study_stats.py").write_text(STATS)
    root = os.getcwd()
    env = {
        "REPRO_STUDY_PATH": str(tmp_path / "studies"),
        "PYTHONPATH": os.pathsep.join([str(code), root, os.environ.get("PYTHONPATH", "")]),
    }
    return folder, env


def test_claims_pick_up_the_third_study(toy, run_cli, data_dir):
    folder, env = toy
    out = run_cli(
        "claims",
        "--study",
        "toystudy",
        "--data-dir",
        data_dir,
        "--json",
        folder / "c.json",
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads((folder / "c.json").read_text())
    # robustness needs nothing from the study: its population is the table's rows, and either
    # model left out moves the mean (0.58 or 0.42) off 0.50 +- 0.005
    robustness = {
        "leave_one_model_out": {
            "min": pytest.approx(0.42),
            "max": pytest.approx(0.58),
            "flips": ["tiny_a", "tiny_b"],
        },
        "leave_one_category_out": {"flips": None},
        "qualitative_flips": None,
        "permutation_p": None,
    }
    # issue 20: a study without a count model says why nothing is redrawn, instead of a P(verdict)
    replication = {
        "kind": "replication",
        "p_verdict": None,
        "p_qualitative": None,
        "interval": None,
        "confidence": None,
        "resamples": 0,
        "seed": None,
        "method": "not computed",
        "redrawn": [],
        "held": [],
        "note": "study 'toystudy' declares no count model (study.toml `replication`): its "
        "columns' counts are not known, so nothing is redrawn",
    }
    # issue 21: a claim that declares no estimand, derivation, equivalence or turning point says so
    statements = {
        "verdict_paper_method": "reproduced",
        "derived": None,
        "equivalence": None,
        "turning_point": None,
        "unit": None,
        "quirk_variants": None,
        "expected_source": "from the paper (this test)",
        "estimand": {
            "kind": "not declared",
            "population": None,
            "unit": None,
            "reason": None,
            "clusters": None,
            "interval_kind": "across models",
            "headline": None,
            "intervals": {},
            "unclustered": {},
            "note": None,
        },
    }
    # issue 34: its finding is its published number (no qualitative content declared), and none
    # of the robust rule's checks applies to a study without counts, categories or quirks
    from repro.diagnostics.strength import RULES

    strength = {
        "finding": {
            "verdict": "reproduced",
            "p": None,
            "by": "its published number (no qualitative content declared apart from it)",
        },
        "digits": None,
        "strength": {
            "grade": "unexamined",
            "rule": RULES["unexamined"],
            "why": "replication: no replication model for its inputs; leave-one-category-out: no "
            "model categories; quirk corrections: reads no corrected column",
            "checks": [
                {
                    "check": "replication",
                    "status": "not available",
                    "detail": "no replication model for its inputs",
                },
                {
                    "check": "leave-one-category-out",
                    "status": "not available",
                    "detail": "no model categories",
                },
                {
                    "check": "quirk corrections",
                    "status": "not available",
                    "detail": "reads no corrected column",
                },
            ],
        },
    }
    assert doc["claims"] == [
        {
            "id": "toy_mean_score",
            "published": 0.5,
            "measured": pytest.approx(0.5),
            "interval": None,
            "verdict": "reproduced",
            "evidence": {"kind": "re-analysis", "measured": 0, "total": 2},
            "phrase": "consistent with the published data",
            "flags": [],
            "agreement": None,  # nothing measured: no per-model agreement
            "provenance": {"published": 2},  # the two models' scores, from the study's table
            "robustness": robustness,
            "p_verdict": None,
            "replication": replication,
        }
        | strength
        | statements
    ]
    assert doc["tables"] == {}  # no analysis definition
    every = run_cli("claims", "--data-dir", data_dir, env=env)  # default: every discovered study
    assert "toy_mean_score" in every.stdout and "shape_bias_vs_id_accuracy" in every.stdout
    assert "imagenetx_failure_modes_concordant" in every.stdout


def test_a_changed_table_fails_the_third_studys_claim(toy, run_cli, data_dir):
    folder, env = toy
    (folder / "table.csv").write_text("model,score\ntiny_a,0.42\ntiny_b,0.68\n")  # mean 0.55
    out = run_cli("claims", "--study", "toystudy", "--data-dir", data_dir, env=env)
    assert out.returncode == 1 and "0.5500" in out.stdout and "not_reproduced" in out.stdout


def test_report_has_a_section_group_for_the_third_study(toy, run_cli, data_dir, tmp_path):
    folder, env = toy
    out = run_cli(
        "report", "--study", "toystudy", "--data-dir", data_dir, "--out", tmp_path / "R.md", env=env
    )
    assert out.returncode == 0, out.stderr
    text = full_text(tmp_path / "R.md")
    assert "# A toy study\n\nNobody: A Toy Study. Tests 2026.\n" in text
    assert "Toy claims from a CSV shipped with the study (inputs: published)." in text
    assert "| `toy_mean_score` |" in text and "## Toy scores\n\ntiny_a: 0.42, tiny_b: 0.58" in text
    assert "Gavrikov" not in text


def test_measure_takes_the_third_studys_models_and_measurements(toy, run_cli, tmp_path):
    folder, env = toy
    store = tmp_path / "store"
    out = run_cli(
        "measure",
        "--study",
        "toystudy",
        "--models",
        "all",
        "--env",
        "tests.fakes:environment",
        "--store",
        store,
        "--device",
        "cpu",
        "--no-progress",
        env={**env, "OMP_NUM_THREADS": "1"},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    from repro.store.files import Store

    assert sorted((r.model, r.measurement, r.status) for r in Store(store)) == [
        ("tiny_a", "fake_a", "ok"),
        ("tiny_b", "fake_a", "ok"),
    ]


def test_an_unknown_study_is_a_one_line_error(toy, run_cli):
    # known: the three built-in studies and the toy one on REPRO_STUDY_PATH
    _, env = toy
    out = run_cli("claims", "--study", "toystudie", env=env)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "error: unknown study 'toystudie'; did you mean 'toystudy'? (known: 4 entries, "
        "list them with "
        "`python -m repro` help)"
    ]
