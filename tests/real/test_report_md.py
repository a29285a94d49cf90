"""The committed REPORT.md and report_assets/ are exactly what ``python -m repro reproduce``
(``nox -s reproduce``) writes on a fresh clone with no dataset configured.

The run is the command's own code (``repro.runner.reproduce.reproduce``, then ``write_report`` as
the command calls it) on the store the tier measured with the same runner jobs
(``tests.real.shipped``: EfficientNet-Lite0 x shape bias and pre-made critical band). The run must
find both jobs finished and current (their identity checked: measurement version, dataset
fingerprint, weights) and measure nothing, so the report is the one a fresh clone's run writes
after measuring them itself. Compared: REPORT.md byte for byte, every figure byte for byte, and
the set of files in report_assets/ (a figure no section writes any more fails).

Where the float32 kernels of this CPU decide a fragile decision (margin below the snapshot's
``fragile_bound``; ``test_lite_snapshots.py`` checks that nothing else moved) differently from
the machine that wrote the report, the measured numbers may differ from the committed ones in
those decisions only. The test then compares everything that does not rest on the measurement
(every section but "Our measurements", "Placement" and "Models measured here", every figure but
the scatter grid and those of these sections) and says which decisions differ; where no decision
differs (the committed report's machine, CI) it compares everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.report import full_text

pytestmark = pytest.mark.real
ROOT = Path(__file__).resolve().parents[2]
MEASURED_SECTIONS = ("## Our measurements", "## Placement", "## Models measured here")
MEASURED_FIGURES = ("bias_vs_category_scatter.png", "placement_", "models_here_")


def _sections(text: str) -> dict[str, str]:
    """Second-level sections by heading (with the study group they belong to)."""
    out, group, current, lines = {}, "", "", []
    for line in text.splitlines(keepends=True):
        if line.startswith("# ") or line.startswith("## "):
            out[f"{group} / {current}"] = "".join(lines)
            lines = []
            if line.startswith("# "):
                group = line.strip()
            current = line.strip()
        lines.append(line)
    out[f"{group} / {current}"] = "".join(lines)
    return out


def _flipped(shipped, snapshot) -> list[str]:
    from tests.real.measure import probe_decisions

    out = []
    for stimulus_set, measurement in (
        ("cue_conflict", "shape_bias"),
        ("cbmsplit", "critical_band_16_premade"),
    ):
        run = shipped.as_run(measurement)
        snap = snapshot["sets"][stimulus_set]
        out += [
            n
            for n, a, b in zip(
                run.names, probe_decisions(run, stimulus_set), snap["decisions"], strict=True
            )
            if a != b
        ]
    return out


def test_the_committed_report_is_what_reproduce_writes(shipped, real_data, snapshot, tmp_path):
    from repro.base.study import select
    from repro.report import write_report
    from repro.runner.reproduce import reproduce

    logged: list[str] = []
    done = reproduce(
        select(),
        data_dir=real_data,
        store=shipped.store,
        progress=False,
        log=logged.append,
        warn=logged.append,
    )
    assert not done.failed_jobs and done.exit_status == 0, done.failed_jobs
    sweep = [line for line in logged if " measured (" in line]
    assert sweep and sweep[0].startswith("0 measured") and "2 already in the store" in sweep[0], (
        logged
    )
    (plan,) = done.plans
    assert plan.shipped == "real" and plan.models == ["efficientnet_lite0"]
    written = write_report(
        tmp_path / "REPORT.md", done.contexts, done.outcomes, plans=done.plans, store=shipped.store
    )
    ours = full_text(tmp_path / "REPORT.md")  # with its study pages (report/<study>.md)
    committed = full_text(ROOT / "REPORT.md")
    pages = sorted(p.name for p in written if p.suffix == ".md" and p.parent.name == "report")
    assert pages == sorted(p.name for p in (ROOT / "report").iterdir()), (
        "report/ holds other pages than the report writes: regenerate with `nox -s reproduce`"
    )
    assert str(shipped.store) not in ours and str(tmp_path) not in ours  # no machine-specific path
    # the figures and, since issue 21 item 8, the CSV of each paper figure's data beside it
    assets = sorted(p.name for p in written if p.suffix in (".png", ".csv"))
    figures = [name for name in assets if name.endswith(".png")]
    assert assets == sorted(p.name for p in (ROOT / "report_assets").iterdir()), (
        "report_assets/ holds other files than the report writes: regenerate with `nox "
        "-s reproduce`"
    )
    flipped = _flipped(shipped, snapshot)
    if not flipped:
        assert ours == committed, (
            "REPORT.md differs from what `nox -s reproduce` writes: regenerate it"
        )
        for name in figures:
            assert (tmp_path / "report_assets" / name).read_bytes() == (
                ROOT / "report_assets" / name
            ).read_bytes(), (
                f"report_assets/{name} differs from what `nox -s reproduce` writes: regenerate it"
            )
        return
    # fragile decisions decided otherwise on this CPU: compare what does not rest on them
    mine, theirs = _sections(ours), _sections(committed)
    assert list(mine) == list(theirs)
    for key in mine:
        if not key.endswith(MEASURED_SECTIONS):
            assert mine[key] == theirs[key], f"{key} differs from the committed REPORT.md"
    for name in figures:
        if not name.startswith(MEASURED_FIGURES):
            assert (tmp_path / "report_assets" / name).read_bytes() == (
                ROOT / "report_assets" / name
            ).read_bytes()
    pytest.skip(
        f"{len(flipped)} fragile decision(s) differ from the snapshot on this CPU "
        f"({', '.join(flipped[:3])}): "
        "the measured sections were not compared byte for byte; everything else was"
    )
