"""The edges of Spearman's correlation with its bootstrap interval (``repro.analysis.correlation``)
and of the critical-band threshold vector: the defaults a claim relies on (2,000 resamples, seed
0, 95%), one resample is an interval and zero is none, and each refusal's message whole."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.analysis.correlation import (
    INTERVAL_METHOD,
    NO_INTERVAL,
    describe_interval,
    spearman,
)
from repro.scoring.critical_band import fit

pytestmark = pytest.mark.unit

X = np.array([0.1, 0.4, 0.35, 0.8, 0.6, 0.2, 0.9, 0.5])
Y = np.array([1.0, 2.5, 2.0, 3.0, 3.5, 0.5, 2.8, 1.2])


def test_describe_interval_names_the_method_and_its_defaults():
    assert describe_interval(0, 7) == NO_INTERVAL
    assert describe_interval(1, 7) == f"{INTERVAL_METHOD} (95%, 1 resamples, seed 7)"
    assert describe_interval(2000, 0, 0.9) == f"{INTERVAL_METHOD} (90%, 2000 resamples, seed 0)"


def test_spearman_defaults_are_2000_resamples_seed_0_at_95_percent():
    default = spearman(X, Y)
    explicit = spearman(X, Y, resamples=2000, seed=0, confidence=0.95)
    assert default == explicit
    # the method names the resamples and the seed it used (the interval alone may not show a
    # changed default: with 8 models many resamplings give the same percentiles)
    assert default.method == describe_interval(2000, 0, 0.95)
    assert spearman(X, Y, resamples=50, confidence=0.9).method == describe_interval(50, 0, 0.9)


def test_one_resample_is_an_interval_and_zero_is_none():
    one = spearman(X, Y, resamples=1, seed=3)
    assert one.method == describe_interval(1, 3) and all(map(math.isfinite, one.interval))
    none = spearman(X, Y, resamples=0)
    assert none.method == NO_INTERVAL and all(map(math.isnan, none.interval))
    assert (none.rho, none.p, none.n) == (one.rho, one.p, 8)


def test_spearman_refuses_what_is_not_two_equal_1d_samples():
    for x, y in (
        (np.ones((3, 3)), np.ones((3, 3))),  # equal shapes, but not 1-d
        (np.arange(4.0), np.arange(5.0)),  # 1-d, unequal lengths
    ):
        with pytest.raises(ValueError) as err:
            spearman(x, y)
        assert str(err.value) == (
            f"spearman needs two 1-d arrays of equal length, got {x.shape} and {y.shape}"
        )
    with pytest.raises(ValueError) as err:
        spearman([1.0, 2.0], [2.0, 1.0])
    assert str(err.value) == "spearman needs at least 3 models, got 2"


def test_thresholds_out_of_range_are_shown_as_numbers_read():
    with pytest.raises(ValueError) as err:
        fit([0, 1, 2, 3, 4, 5, 2])
    assert str(err.value) == (
        "thresholds must be numbers in [0, 4], got [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 2.0]"
    )


def test_a_threshold_vector_may_be_any_iterable_and_a_nested_one_is_refused_whole():
    vector = [0.5, 1.0, 2.5, 3.0, 2.0, 1.0, 0.5]
    assert fit(iter(vector)) == fit(vector) == fit(tuple(vector))
    with pytest.raises(ValueError) as err:
        fit([[1.0, 2.0]] * 7)
    assert str(err.value) == "need 7 thresholds (bands 0..6), got 14"


def test_thresholds_that_are_not_numbers_are_named_as_read():
    """``None`` is read as NaN and refused with the vector; integer thresholds out of range are
    shown as the floats they are compared as."""
    from repro.scoring.critical_band import fit_params

    with pytest.raises(ValueError) as err:
        fit([None] * 7)
    assert str(err.value) == (
        "thresholds must be numbers in [0, 4], got [nan, nan, nan, nan, nan, nan, nan]"
    )
    with pytest.raises(ValueError) as err:
        fit_params([0, 1, 2, 3, 4, 5, 2])
    assert str(err.value) == (
        "thresholds must be numbers in [0, 4], got [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 2.0]"
    )
