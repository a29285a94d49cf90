"""The README's your-model recipe, with a small model: ``reproduce --models X`` for a model that
is not a study model, with the cue-conflict root configured. It must exit 0, leave the committed
REPORT.md and report_assets/ untouched (its report goes to the run's folder beside the store,
named in the last line), judge every claim as the re-analysis of the published data does, keep
in its report what the store had already placed (EfficientNet-Lite0), and flag the random
model's shape bias as at chance."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from repro.base.study import select
from repro.claims import evaluate_all
from repro.claims.context import published_context
from repro.report import full_text
from repro.store.files import Store
from tests.small_store import shape_record

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PROV = {
    "dataset_fingerprint": "f",
    "dataset_items": 1280,
    "dataset_mini": False,
    "dataset_partial": False,
}


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _verdicts(report: str) -> dict[str, str]:
    """{claim: verdict} of the report's table "Where each claim's inputs came from"."""
    start = report.index("| claim | input values | columns not (all) published | verdict |")
    rows = report[start:].split("\n\n", 1)[0].splitlines()[2:]
    return {
        re.match(r"\| `([^`]+)`", r)[1]: r.rstrip(" |").rsplit("| ", 1)[1].strip() for r in rows
    }


def test_your_model_leaves_the_study_and_the_committed_report_as_they_are(
    run_cli, data_dir, tmp_path
):
    # a working copy of what a fresh clone holds at its root: the committed report and figures
    work = tmp_path / "clone"
    work.mkdir()
    shutil.copy(ROOT / "REPORT.md", work / "REPORT.md")
    shutil.copytree(ROOT / "report_assets", work / "report_assets")
    before = _digests(work)
    # what an earlier plain run placed: EfficientNet-Lite0's shape bias (its published counts)
    store = tmp_path / "runs" / "store"
    Store(store).write(shape_record("efficientnet_lite0", 197, 626, **PROV))

    cue = data_dir / "texture-vs-shape" / "cue-conflict"
    res = run_cli(
        "reproduce",
        "--models",
        "tiny_random_a",
        "--store",
        store,
        "--device",
        "cpu",
        "--no-progress",
        "--data-dir",
        data_dir,
        cwd=str(work),
        env={"REPRO_CUE_CONFLICT_ROOT": str(cue), "OMP_NUM_THREADS": "1"},
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    assert _digests(work) == before  # REPORT.md and report_assets/ untouched, nothing added
    out = tmp_path / "runs" / "reports" / "tiny_random_a" / "REPORT.md"
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith(f"report: {out} (your run: --models, a configured dataset;"), last
    assert (out.parent / "report_assets").is_dir()

    # every claim as the published data judges it (the claims do not read tiny_random_a)
    report = full_text(out)
    expected = {
        o.claim.id: o.verdict
        for study in select(None)
        for o in evaluate_all(published_context(study, data_dir))
    }
    assert _verdicts(report) == expected
    assert "incomplete" not in set(expected.values()) | set(_verdicts(report).values())
    assert "`tiny_random_a` is not a study model, so the claims of `gavrikov2024` do not read" in (
        report
    )

    # placed: the run's model, at chance, and what the store had placed before
    rows = [r for r in report.splitlines() if r.startswith("| `") and "| shape bias |" in r]
    lite0 = next(r for r in rows if r.startswith("| `efficientnet_lite0` |"))
    tiny = next(r for r in rows if r.startswith("| `tiny_random_a` |"))
    assert "| 0.239 |" in lite0 and "AT CHANCE" not in lite0
    assert re.search(r"\| \d+ \(AT CHANCE\) \|", tiny), tiny
