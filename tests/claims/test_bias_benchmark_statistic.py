"""``bias_benchmark_spearman``: a bias against ONE benchmark's accuracy (the ImageNet-A claim).
Bad parameters are one ConfigError line naming the parameter and what is known; another group
gives that group's correlation, recomputed here with scipy."""

from __future__ import annotations

import pytest
from scipy import stats

from repro.base.errors import ConfigError
from repro.studies.gavrikov2024.statistics import bias_benchmark_spearman

pytestmark = pytest.mark.claims


def test_an_unknown_benchmark_is_one_line_naming_the_known_ones(published_claim_context):
    with pytest.raises(ConfigError) as exc:
        bias_benchmark_spearman(published_claim_context, bias="shape_bias", benchmark="imagenet-a")
    msg = str(exc.value)
    assert "\n" not in msg and "'imagenet-a'" in msg and "imagenet_a" in msg


def test_an_unknown_group_is_one_line(published_claim_context):
    with pytest.raises(ConfigError) as exc:
        bias_benchmark_spearman(
            published_claim_context, bias="shape_bias", benchmark="imagenet_a", group="AT"
        )
    msg = str(exc.value)
    assert "\n" not in msg and "'AT'" in msg and "total, at, other" in msg


def test_another_group_is_that_groups_correlation(published_claim_context):
    ctx = published_claim_context
    r = bias_benchmark_spearman(ctx, bias="shape_bias", benchmark="imagenet_a", group="at")
    models = ctx.analysis.groups["at"]
    ref = stats.spearmanr(
        ctx.table.column("shape-bias", models), ctx.table.column("top1_acc/imagenet-a", models)
    )
    assert r.n == len(models) == 15
    assert r.value == pytest.approx(ref.statistic, abs=1e-12) and r.p == pytest.approx(ref.pvalue)
    lo, hi = r.interval
    assert lo <= r.value <= hi and "2000 resamples" in r.interval_method
