"""Checks of the benchmarks scorers' edge cases (repro.scoring.benchmarks).

The empty result (no counts: n = 0) of score_stylized and score_pgd, the whole values dict of
score_pgd with the denominator rule of quirk Q2 computed by hand, and the argument checks and
messages of published_denominator and robust_count.
"""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.base.results import ConditionCount, ProbeResult
from repro.scoring.benchmarks import (
    published_denominator,
    robust_count,
    score_pgd,
    score_stylized,
)

pytestmark = pytest.mark.unit


def _pgd_params(**extra):
    return {"eps": 0.5, "steps": 3, "step_size": 0.25, "batch_size": 4, **extra}


def test_stylized_without_counts_has_no_value_and_an_empty_top1_count():
    res = score_stylized(ProbeResult("stylized", "1", None, []))
    assert res.conditions == [ConditionCount("top1", 0, 0)]
    assert res.value is None


def test_stylized_value_is_percent_of_top1():
    res = score_stylized(ProbeResult("stylized", "1", None, [ConditionCount("top1", 3, 8)]))
    assert res.value == 37.5  # 100 * 3 / 8


def test_pgd_without_counts_gives_none_values_not_nan():
    res = score_pgd(ProbeResult("pgd", "1", 0, []), _pgd_params())
    # n = 0: ceil(0 / 4) * 4 = 0, so every count is 0 of 0 and every rate undefined (None)
    assert res.conditions == [
        ConditionCount("clean", 0, 0),
        ConditionCount("robust", 0, 0),
        ConditionCount("robust_published", 0, 0),
    ]
    assert res.value is None
    assert res.values == {
        "eps": 0.5,
        "steps": 3.0,
        "step_size": 0.25,
        "batch_size": 4.0,
        "clean": None,
        "robust": None,
        "robust_published": None,
    }


@pytest.mark.parametrize("denominator", [None, "standard", "published"])
def test_pgd_values_under_both_denominators(denominator):
    params = _pgd_params() if denominator is None else _pgd_params(denominator=denominator)
    counts = [ConditionCount("clean", 7, 10), ConditionCount("adversarial", 3, 10)]
    res = score_pgd(ProbeResult("pgd", "1", 0, counts), params)
    # 10 images, 3 still right after the attack: 7 successes. Standard: 3 of 10.
    # Published (Q2): D = ceil(10 / 4) * 4 = 12, k = 12 - 7 = 5: 5 of 12.
    assert res.conditions == [
        ConditionCount("clean", 7, 10),
        ConditionCount("robust", 3, 10),
        ConditionCount("robust_published", 5, 12),
    ]
    assert res.value == (5 / 12 if denominator == "published" else 3 / 10)
    assert res.values == {
        "eps": 0.5,
        "steps": 3.0,
        "step_size": 0.25,
        "batch_size": 4.0,
        "clean": 0.7,
        "robust": 3 / 10,
        "robust_published": 5 / 12,
    }


@pytest.mark.parametrize(
    ("n", "batch_size", "expected"),
    [(0, 128, 0), (5, 1, 5), (50_000, 128, 50_048), (1, 2, 2), (128, 128, 128)],
)
def test_published_denominator_rounds_up_to_whole_batches(n, batch_size, expected):
    # 50,000 / 128 = 390.6 -> 391 batches * 128 = 50,048 (the study's figure)
    assert published_denominator(n, batch_size) == expected


@pytest.mark.parametrize(("n", "batch_size"), [(-1, 128), (5, 0), (-1, 0), (0, -3)])
def test_published_denominator_rejects_negative_n_or_nonpositive_batch(n, batch_size):
    with pytest.raises(ValueError) as exc:
        published_denominator(n, batch_size)
    assert str(exc.value) == (
        f"published_denominator needs n >= 0 and batch_size > 0, got n={n}, batch_size={batch_size}"
    )


def test_robust_count_defaults_to_the_standard_denominator():
    assert robust_count(2, 10, batch_size=4) == ConditionCount("robust", 8, 10)


def test_robust_count_published_denominator():
    # D = ceil(10 / 4) * 4 = 12; k = 12 - 2 = 10
    assert robust_count(2, 10, batch_size=4, denominator="published") == ConditionCount(
        "robust_published", 10, 12
    )


@pytest.mark.parametrize(("successes", "n"), [(-1, 10), (11, 10)])
def test_robust_count_rejects_successes_outside_0_n(successes, n):
    with pytest.raises(ValueError) as exc:
        robust_count(successes, n, batch_size=4)
    assert str(exc.value) == f"successes must be in [0, n], got {successes} of {n}"


def test_robust_count_rejects_an_unknown_denominator_naming_the_choices():
    with pytest.raises(ConfigError) as exc:
        robust_count(1, 10, batch_size=4, denominator="batch")
    assert str(exc.value) == "denominator: expected one of standard, published, got 'batch'"
