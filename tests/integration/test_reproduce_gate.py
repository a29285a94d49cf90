"""``python -m repro reproduce`` fails closed (issue 9 item 2):

- a misspelt ``--models`` name is a one-line error with the closest zoo names, exit 2, before
  any data is generated or any job runs;
- a run with a failing job exits 1 and names the job and its error on stderr, in the report
  too; its model is not a study model, so the claims keep the published data's verdicts (a claim
  reading a study model's failed value is ``incomplete``: tests/claims/test_measured_source.py).
  (The mini-run case, exit 1 as well, is in ``test_pipeline.py``.)
"""

from __future__ import annotations

import json

import pytest

from repro.report import full_text

pytestmark = pytest.mark.integration


def test_a_misspelt_model_is_refused_before_anything_runs(run_cli, tmp_path):
    work = tmp_path / "work"
    res = run_cli(
        "reproduce",
        "--models",
        "tiny_rando_a",
        "--work-dir",
        work,
        "--out",
        tmp_path / "REPORT.md",
        cwd=str(tmp_path),
    )
    assert res.returncode == 2, res.stdout + res.stderr
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "error: unknown model 'tiny_rando_a'; did you mean 'tiny_random_a'"
    )
    assert (
        not work.exists() and not (tmp_path / "REPORT.md").exists()
    )  # no mini data made, no report written


def test_a_run_with_a_failing_job_exits_1_and_names_it(run_cli, tmp_path, data_dir):
    """A configured dataset that is not there: the job fails with its DataError."""
    env = {
        "REPRO_IMAGENET_SKETCH_ROOT": str(tmp_path / "no-sketch"),
        "REPRO_CACHE_DIR": str(tmp_path / "cache"),
        "OMP_NUM_THREADS": "1",
        # wide enough that the fitted table keeps its evidence column beside an INCOMPLETE-wide
        # verdict column (the 100-column fit itself: tests/claims/test_claims_terminal.py)
        "COLUMNS": "140",
    }
    res = run_cli(
        "reproduce",
        "--study",
        "gavrikov2024",
        "--models",
        "tiny_random_a",
        "--measurements",
        "imagenet_sketch",
        "--store",
        tmp_path / "store",
        "--out",
        tmp_path / "REPORT.md",
        "--device",
        "cpu",
        "--no-progress",
        "--data-dir",
        data_dir,
        cwd=str(tmp_path),
        env=env,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAILED: 1 job(s) of this run left no current record" in res.stderr
    assert (
        "  tiny_random_a x imagenet_sketch: failed: DataError: imagenet_sketch at "
        f"{tmp_path / 'no-sketch'}: "
        "folder not found"
    ) in res.stderr
    # one line per failed job, ending with the store path of its record, which holds the error
    line = next(
        x for x in res.stderr.splitlines() if x.startswith("  tiny_random_a x imagenet_sketch: ")
    )
    record = tmp_path / "store" / "tiny_random_a" / "imagenet_sketch.json"
    assert line.endswith(f" (record: {record})")
    stored = json.loads(record.read_text())
    assert (
        stored["error"]["type"] == "DataError" and "folder not found" in stored["error"]["message"]
    )
    # tiny_random_a is not a study model: the claims do not read it and keep the verdicts of the
    # published data (a re-analysis); the run still fails, on its failed job
    lines = res.stdout.splitlines()  # the claims table as claims prints it: the id, its row below
    row = lines[lines.index("shape_bias_vs_id_accuracy") + 1]
    assert "INCOMPLETE" not in row and " reproduced " in row and "re-analysis" in row, row
    report = full_text(tmp_path / "REPORT.md")
    assert "**INCOMPLETE**" not in report
    assert "`tiny_random_a` is not a study model, so the claims of `gavrikov2024` do not" in report
    assert "| tiny_random_a | `(imagenet_sketch)` |" in report and "failed: DataError" in report
