"""The chance tests' words and the flags beside a value (``repro.analysis.chance``): the whole
sentence and JSON of a test, the clean-condition accuracy a 16-class result rests on (records as
dicts or objects, counts out of range skipped), which protocols decide among the 16, and which
flag ``compare`` prints beside a stored column. p-values are the hand sum of binomial terms."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from repro.analysis.chance import (
    CHANCE_16,
    CHANCE_SHAPE_OR_TEXTURE,
    above_chance_p,
    accuracy_flag,
    accuracy_test,
    at_chance,
    chance_ratio,
    clean_accuracy_test,
    column_flag,
    decision_test,
    is_sixteen_class,
    shape_or_texture,
)
from repro.measurements.registry import get

pytestmark = pytest.mark.unit


def _tail(k, n, p=CHANCE_16):
    """P(X >= k), X ~ Binomial(n, p): the sum of the terms, each in logs (n up to thousands)."""

    def term(j):
        log_comb = math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)
        return math.exp(log_comb + j * math.log(p) + (n - j) * math.log1p(-p))

    return sum(term(j) for j in range(k, n + 1))


def test_the_ratio_of_a_model_with_no_clean_decision_right_is_undefined():
    assert math.isnan(chance_ratio(0, 1050))
    assert chance_ratio(1, 16) == 1.0  # chance 1/16 over a clean 1/16


def test_the_sentence_of_a_test_at_chance_and_above_it():
    at = accuracy_test(60, 1000)
    assert at.text() == (
        "AT CHANCE: 60 correct 16-class decisions of 1,000 trials (6.0%; a uniform guess over the "
        f"16 categories makes 6.2%; one-sided exact binomial p = {_tail(60, 1000):.2g}): not above "
        "chance, so the value (and any rank of it) says nothing about the model"
    )
    above = accuracy_test(90, 1000)
    assert above.text() == (
        "above chance: 90 correct 16-class decisions of 1,000 trials (9.0%; a uniform guess over "
        f"the 16 categories makes 6.2%; one-sided exact binomial p = {_tail(90, 1000):.2g})"
    )


def test_the_json_of_a_test_names_every_field():
    doc = accuracy_test(60, 1000).as_json()
    assert doc == {
        "what": "correct 16-class decisions",
        "k": 60,
        "n": 1000,
        "chance": CHANCE_16,
        "p": pytest.approx(_tail(60, 1000), rel=1e-9),
        "alpha": 0.05,
        "at_chance": True,
        "test": "exact binomial, one-sided (greater)",
    }


def test_an_accuracy_test_keeps_its_alpha():
    # p = 0.12 for 70 of 1,000: at chance at 0.05, above it at 0.2
    p = _tail(70, 1000)
    assert 0.05 < p < 0.2
    assert accuracy_test(70, 1000).at_chance
    strict = accuracy_test(70, 1000, alpha=0.2)
    assert strict.alpha == 0.2 and not strict.at_chance


def test_the_clean_accuracy_is_read_from_dicts_and_objects():
    rows = [{"condition": "f=3/sd=0.1", "k": 10, "n": 30}, {"condition": "sd=0", "k": 9, "n": 30}]
    assert (clean_accuracy_test(rows).k, clean_accuracy_test(rows).n) == (9, 30)
    objs = [SimpleNamespace(condition="clean", k=12, n=40)]
    assert (clean_accuracy_test(objs).k, clean_accuracy_test(objs).n) == (12, 40)
    # an object without counts is skipped, not an error
    assert clean_accuracy_test([SimpleNamespace(condition="clean")]) is None
    assert clean_accuracy_test(None) is None


@pytest.mark.parametrize("k,n", [(0, 30), (30, 30), (1, 1)])
def test_a_clean_count_at_either_end_of_its_range_is_tested(k, n):
    test = clean_accuracy_test([{"condition": "sd=0", "k": k, "n": n}])
    assert (test.k, test.n, test.p) == (k, n, pytest.approx(_tail(k, n), rel=1e-9))


@pytest.mark.parametrize("k,n", [(-1, 30), (31, 30), (None, 30), (1.5, 30), (0, 0), (5, None)])
def test_a_clean_count_out_of_range_or_not_a_count_is_skipped(k, n):
    assert clean_accuracy_test([{"condition": "sd=0", "k": k, "n": n}]) is None


@pytest.mark.parametrize(
    "protocol,sixteen",
    [
        ("model-vs-human-16class", True),
        ("subramanian2023-16class", True),
        ("16-class", True),
        ("16class", True),
        ("imagenet-1000class", False),
        ("", False),
    ],
)
def test_which_protocols_decide_among_the_16(protocol, sixteen):
    assert is_sixteen_class(protocol) is sixteen


STYLIZED = get("stylized")  # 16-class by its description; its protocol is empty


def test_the_accuracy_flag_of_a_16_class_column_at_chance():
    assert accuracy_flag(STYLIZED, "top1_acc/stylized", 60, 1000) == (
        f"AT CHANCE (60/1,000 16-class decisions right, chance 1/16, p = {_tail(60, 1000):.2g})"
    )
    assert accuracy_flag(STYLIZED, "top1_acc/stylized", 90, 1000) == ""  # above chance
    assert accuracy_flag(STYLIZED, "shape_bias", 60, 1000) == ""  # not an accuracy column
    assert accuracy_flag(get("imagenet"), "top1_acc/imagenet", 60, 1000) == ""  # 1000 classes


@pytest.mark.parametrize(
    "k,n", [(None, 1000), (60, None), (None, None), (0, 0), (0, -1), (-1, 1000), (1001, 1000)]
)
def test_no_accuracy_flag_without_a_count_in_range(k, n):
    assert accuracy_flag(STYLIZED, "top1_acc/stylized", k, n) == ""


@pytest.mark.parametrize("k", [0, 1000])
def test_an_accuracy_flag_for_counts_at_the_ends_of_their_range(k):
    flag = accuracy_flag(STYLIZED, "top1_acc/stylized", k, 1000)
    assert flag == ("" if k else "AT CHANCE (0/1,000 16-class decisions right, chance 1/16, p = 1)")


def _record(measurement, values=None, conditions=()):
    return SimpleNamespace(
        measurement=measurement, values=values or {}, conditions=list(conditions)
    )


def test_a_column_flag_of_a_16_class_accuracy_at_chance():
    # the column's own k/n decide; the record's value rests on nothing else here
    rec = _record("stylized")
    assert column_flag(rec, "top1_acc/stylized", 60, 1000) == (
        f"AT CHANCE (60/1,000 16-class decisions right, chance 1/16, p = {_tail(60, 1000):.2g})"
    )
    assert column_flag(rec, "top1_acc/stylized", 90, 1000) == ""
    assert column_flag(rec, "top1_acc/stylized", None, None) == ""


def test_a_column_flag_of_a_measurement_no_longer_registered_reads_its_record():
    values = {"n": 1120, "shape": 70, "texture": 70}  # 140 of 1,120 = 2/16: at chance
    rec = _record("gone", values)
    k = 140
    assert column_flag(rec, "top1_acc/gone", 60, 1000) == (
        f"AT CHANCE ({k}/1,120 shape-or-texture decisions, chance 0.125, "
        f"p = {_tail(k, 1120, 2 / 16):.2g})"
    )
    assert column_flag(_record("gone"), "top1_acc/gone", 60, 1000) == ""


@pytest.mark.parametrize("k", [0, 1])
def test_a_single_trial_is_at_chance_whether_right_or_wrong(k):
    # one decision right is p = 1/16 = 0.0625 under a uniform guess: not above chance at 0.05
    assert accuracy_flag(STYLIZED, "top1_acc/stylized", k, 1) == (
        f"AT CHANCE ({k}/1 16-class decisions right, chance 1/16, p = {_tail(k, 1):.2g})"
    )


def test_a_p_value_equal_to_alpha_is_at_chance():
    # the test is "above chance when p < alpha": at p = alpha it cannot tell the rates apart

    p = above_chance_p(80, 1000, CHANCE_16)
    assert p == pytest.approx(_tail(80, 1000), rel=1e-9)
    assert at_chance(80, 1000, CHANCE_16, alpha=p)
    assert not at_chance(80, 1000, CHANCE_16, alpha=math.nextafter(p, 1.0))


@pytest.mark.parametrize("k,n", [(0, 0), (1, 0), (-1, 5), (6, 5)])
def test_a_count_out_of_range_is_refused_with_both_numbers(k, n):

    with pytest.raises(ValueError) as e:
        above_chance_p(k, n, CHANCE_16)
    assert str(e.value) == f"above_chance_p needs 0 <= k <= n and n > 0, got k={k}, n={n}"


@pytest.mark.parametrize(
    "shape,texture,n", [(0, 0, 1), (1, 0, 1), (0, 1, 1), (3, 4, 7), (0, 0, 20), (5, 15, 20)]
)
def test_the_decisions_of_any_count_in_range_are_tested(shape, texture, n):

    test = decision_test({"n": n, "shape": shape, "texture": texture})
    k = shape + texture
    assert (test.what, test.k, test.n, test.chance) == (
        "shape-or-texture decisions",
        k,
        n,
        CHANCE_SHAPE_OR_TEXTURE,
    )
    assert test.p == pytest.approx(_tail(k, n, 2 / 16), rel=1e-9)


@pytest.mark.parametrize(
    "values",
    [
        {"n": 0, "shape": 0, "texture": 0},
        {"n": -3, "shape": 0, "texture": 0},
        {"n": 5, "shape": 4, "texture": 2},
        {"n": 5, "shape": -1, "texture": 0},
        {"n": 5, "shape": "4", "texture": 0},
        {"n": 5, "shape": 1},
        {},
        None,
    ],
)
def test_decisions_out_of_range_or_incomplete_have_no_test(values):

    assert decision_test(values) is None


def test_a_shape_or_texture_test_keeps_its_alpha():

    # 155 of 1,120 (13.8%) against 2/16: p between 0.05 and 0.2
    p = _tail(155, 1120, 2 / 16)
    assert 0.05 < p < 0.2
    assert shape_or_texture(80, 75, 1120).at_chance
    strict = shape_or_texture(80, 75, 1120, alpha=0.2)
    assert strict.alpha == 0.2 and not strict.at_chance
