"""A 16-class accuracy at chance is flagged wherever a value resting on it is placed: the
critical-band channel (Subramanian et al.'s bandwidth, centre frequency, peak noise sensitivity)
rests on the 16-class decisions of its stimuli, and a model whose clean (SD 0) 16-class accuracy
a one-sided exact binomial test cannot tell from 1/16 has no channel to speak of. Its ranks read
"(AT CHANCE)", one line gives the test, the JSON has ``rank.at_chance`` and ``chance``; the
probe's own output flags the same (``repro.analysis.chance.result_test``)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest

from repro.analysis.chance import (
    CHANCE_16,
    accuracy_test,
    clean_accuracy_test,
    record_test,
    result_test,
)
from repro.base.results import ConditionCount
from repro.base.study import get_study
from repro.measurements.registry import current_versions
from repro.placement import output
from repro.placement.place import place
from repro.placement.values import model_values
from repro.store.files import Store
from repro.store.record import ColumnValue, JobRecord

pytestmark = pytest.mark.claims

MEASUREMENT = "critical_band_16_premade"
PREFIX = "metric/criticalband-16class-premade"
PROV = {
    "dataset_fingerprint": "f",
    "dataset_items": 1050,
    "dataset_mini": False,
    "dataset_partial": False,
}


def _greater_p(k: int, n: int, p0: float) -> float:
    """P(X >= k), X ~ Binomial(n, p0), summed exactly in rationals (independent of scipy)."""
    q = Fraction(p0)
    return float(sum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(k, n + 1)))


def _record(model: str, clean_k: int) -> JobRecord:
    """A pre-made critical-band record: 35 clean images (SD 0) with ``clean_k`` right, and a
    channel fit (the same made-up values for both models: only the clean accuracy differs)."""
    values = {"bw": 3.0, "cf": 40.0, "pns": 0.9}
    return JobRecord(
        model,
        MEASUREMENT,
        current_versions([MEASUREMENT])[MEASUREMENT],
        "ok",
        conditions=[
            {"condition": "sd=0", "k": clean_k, "n": 35},
            {"condition": "f=3/sd=0.02", "k": 2, "n": 35},
        ],
        values=values,
        columns=[ColumnValue(f"{PREFIX}/{k}", v) for k, v in values.items()],
        provenance=PROV,
    )


def test_the_exact_binomial_test_against_one_of_sixteen():
    assert CHANCE_16 == 1 / 16
    # 3 of 35 right (8.6%): chance makes 2.2 of 35, p = 0.38; 8 of 35 (22.9%): p = 0.0015
    at, above = accuracy_test(3, 35), accuracy_test(8, 35)
    assert at.at_chance and at.p == pytest.approx(_greater_p(3, 35, 1 / 16))
    assert not above.at_chance and above.p == pytest.approx(_greater_p(8, 35, 1 / 16))
    assert 0.3 < at.p < 0.45 and above.p < 0.005
    assert at.text().startswith(
        "AT CHANCE: 3 correct 16-class decisions of 35 trials (8.6%; a uniform guess over the 16 "
        "categories makes 6.2%; one-sided exact binomial p = "
    )


def test_the_clean_condition_is_the_one_tested():
    conds = [ConditionCount("f=0/sd=0.02", 30, 35), ConditionCount("sd=0", 2, 35)]
    assert (clean_accuracy_test(conds).k, clean_accuracy_test(conds).n) == (2, 35)
    assert clean_accuracy_test([{"condition": "clean", "k": 20, "n": 100}]).k == 20
    assert clean_accuracy_test([ConditionCount("f=0/sd=0.02", 1, 35)]) is None
    # a 1000-class protocol has another chance rate: no 16-class test
    assert result_test("imagenet-1000class", {}, conds) is None
    assert result_test("subramanian2023-16class", {}, conds).at_chance
    # a shape bias is tested on its shape-or-texture decisions, not on a clean accuracy
    shape = result_test("model-vs-human-16class", {"n": 1200, "shape": 400, "texture": 400}, [])
    assert shape.what == "shape-or-texture decisions" and shape.k == 800
    assert record_test(_record("m", 3)).at_chance and not record_test(_record("m", 30)).at_chance


@pytest.fixture
def placed(tmp_path, data_dir):
    store = Store(tmp_path / "store")
    store.write(_record("random_net", 3))
    store.write(_record("trained_net", 30))
    study = get_study("subramanian2023")
    return {
        m: place(study, model_values(m, store.root), data_dir, claims=False)
        for m in ("random_net", "trained_net")
    }


def test_a_channel_on_a_clean_accuracy_at_chance_is_flagged(placed):
    p = placed["random_net"]
    assert [x.value.column for x in p.placed] == [f"{PREFIX}/{k}" for k in ("bw", "cf", "pns")]
    assert all(x.at_chance and (x.chance.k, x.chance.n) == (3, 35) for x in p.placed)
    text = output.text(p)
    rows = [line for line in text.splitlines() if line.startswith(PREFIX)]
    assert len(rows) == 3 and all(re.search(r"\b\d+ of \d+ \(AT CHANCE\)", r) for r in rows)
    # one line for the test the three columns share
    lines = [line for line in text.splitlines() if "correct 16-class decisions" in line]
    assert lines == [f"  {PREFIX}/bw, {PREFIX}/cf, {PREFIX}/pns: {accuracy_test(3, 35).text()}"], (
        lines
    )
    doc = output.as_json(p)["placed"]
    assert all(d["rank"]["at_chance"] is True and d["chance"]["at_chance"] is True for d in doc)
    assert doc[0]["chance"]["chance"] == 1 / 16
    assert doc[0]["chance"]["p"] == pytest.approx(_greater_p(3, 35, 1 / 16))


def test_a_channel_above_chance_says_so_without_the_flag(placed):
    p = placed["trained_net"]
    assert all(x.chance is not None and not x.at_chance for x in p.placed)
    text = output.text(p)
    assert "AT CHANCE" not in text
    assert "above chance: 30 correct 16-class decisions of 35 trials" in text


def test_the_reports_measurements_flag_a_16_class_accuracy_at_chance(tmp_path, data_dir):
    """Stylized-ImageNet's 16-class accuracy in the report's table "Our measurements": 60 of 800
    right (7.5%, chance 6.25%: p about 0.08) is flagged, 200 of 800 is not; a 1000-class accuracy
    of the same rate is not a 16-class one and is never flagged by this test."""
    from repro.analysis.chance import accuracy_flag
    from repro.measurements.registry import get
    from repro.report.sections.measurements import measurement_table
    from repro.runner.pipeline import MeasurePlan

    store = Store(tmp_path / "store")
    for model, k in (("random_net", 60), ("trained_net", 200)):
        store.write(
            JobRecord(
                model,
                "stylized",
                current_versions(["stylized"])["stylized"],
                "ok",
                conditions=[{"condition": "stylized", "k": k, "n": 800}],
                columns=[ColumnValue.from_count("top1_acc/stylized", k, 800)],
                provenance={**PROV, "dataset_items": 800},
            )
        )
    plan = MeasurePlan(
        get_study("gavrikov2024"),
        False,
        ["random_net", "trained_net"],
        ["stylized"],
        store.root,
        "cpu",
        {},
    )
    text = measurement_table(plan, data_dir)
    p = accuracy_test(60, 800).p
    assert 0.05 < p < 0.15
    random_row = next(r for r in text.splitlines() if r.startswith("| random_net |"))
    assert random_row.endswith(
        f"; AT CHANCE (60/800 16-class decisions right, chance 1/16, p = {p:.2g}) |"
    ), random_row
    trained_row = next(r for r in text.splitlines() if r.startswith("| trained_net |"))
    assert "AT CHANCE" not in trained_row and "| 200/800 |" in trained_row
    assert accuracy_flag(get("imagenet"), "top1_acc/imagenet", 60, 800) == ""
