"""PGD's early-stop rule against the full attack (issue 38) on EfficientNet-Lite0/1/2 (``nox -s
bench``; skipped in CI by --benchmark-skip): per model, the full 40-step attack with every iterate
judged and the early-stop attack on the same seeded GraySplit images, in the same run
(``repro.planner.pgd_deviation.measure``). Prints, past pytest's capture, the pass ratio (all passes
of the early-stop rule over the study's rule's) and the time ratio, with the recoveries (images
the two rules decide differently) and the parity of the early-stop attack with the trace (the
images where it differs are counted, not failed: the early-stop batch shrinks as images stop and
EfficientNet's CPU kernels give batch-size-dependent sums; on the unit tests' models it is exact).

Small on purpose (``BENCH_PGD_IMAGES``, default 4 images per model: about a minute per model on one
loaded core); the measured deviation with its intervals is docs/performance.md's larger run
(``python -m tests.real.pgd_deviation``).
"""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.bench

MODELS = ("efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2")
IMAGES = int(os.environ.get("BENCH_PGD_IMAGES", "4"))


def _say(config, line: str) -> None:
    """Print past pytest's capture, so ``nox -s bench`` shows the ratios."""
    with config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print("\n" + line)


@pytest.fixture(scope="module")
def graysplit(data_dir):
    from repro.planner import pgd_deviation as pd
    from repro.planner.throughput import GRAYSPLIT, read_graysplit

    if not (data_dir / GRAYSPLIT).is_dir():
        pytest.skip(f"{data_dir / GRAYSPLIT}: not in the data directory (see SOURCES.md)")
    images, _, names = read_graysplit(data_dir, None)
    idx = pd.seeded_subset(len(names), IMAGES, pd.SEED)
    return images[idx], [names[i] for i in idx]


@pytest.mark.parametrize("name", MODELS)
def test_pgd_early_stop_pass_and_time_ratio(
    name, benchmark, graysplit, torch_threads, pytestconfig
):
    from repro.planner import pgd_deviation as pd
    from repro.zoo import load_model

    model = load_model(name)
    images, names = graysplit
    rows = []
    benchmark.pedantic(
        lambda: rows.append(pd.measure(name, model, images, names, batch_size=IMAGES)),
        rounds=1,
        iterations=1,
    )
    (row,) = rows
    benchmark.extra_info.update(
        {
            "images": row.n,
            "pass_ratio": row.pass_ratio,
            "time_ratio": row.time_ratio,
            "recovered": row.recovered,
            "parity": row.parity,
            "outcome_mismatches": row.extra["outcome_mismatches"],
        }
    )
    _say(
        pytestconfig,
        f"PGD early stop vs full, {name}, {row.n} images: pass ratio {row.pass_ratio:.4f} "
        f"({sum(row.passes_early)} / {sum(row.passes_full)} passes), time ratio "
        f"{row.time_ratio:.4f} ({row.seconds_early:.1f} s / {row.seconds_full:.1f} s), recovered "
        f"{row.recovered}, parity {'yes' if row.parity else 'NO'} (outcome mismatches "
        f"{row.extra['outcome_mismatches']} of {row.n})",
    )
    assert row.passes_full == (row.n * 42, row.n * 40)
    assert 0 < row.pass_ratio <= 1
