"""Quirks Q1-Q4 of the published benchmark.csv (METHODS.md section 5): these tests fail if the
data stops showing them (a different file version, or a "fixed" upload)."""

from __future__ import annotations

import pytest

from repro.studies.gavrikov2024 import quirks

pytestmark = pytest.mark.claims


@pytest.fixture(scope="module")
def table_and_population(published_claim_context):
    return published_claim_context.table, published_claim_context.analysis.population


def test_q1_every_real_value_is_k_over_326(table_and_population):
    table, pop = table_and_population
    q = quirks.real_last_batch(table, pop)
    assert q.holds and q.evidence.startswith("48 of 48 ")
    assert quirks.real_last_batch(table).evidence.startswith("69 of 69 ")  # every model in the file
    k = table.value("tv_resnet50", "top1_acc/imagenet-real") / 100 * 326
    assert k == pytest.approx(282, abs=1e-9)  # 282/326 = 86.503%


def test_q2_pgd_values_are_one_minus_s_over_50048(table_and_population):
    table, pop = table_and_population
    q = quirks.pgd_denominator(table, pop)
    assert q.holds, q.evidence
    assert "48 of 48" in q.evidence and "only 0 fit 1 - s/50000" in q.evidence
    assert min(table.column("top1_acc/PGD-40/low", pop)) >= 100 * 48 / 50048 - 1e-12


def test_q3_imagenet_c_is_the_19_corruption_mean(table_and_population):
    table, pop = table_and_population
    q = quirks.imagenet_c_19(table, pop)
    assert q.holds, q.evidence
    assert q.evidence.startswith("48 of 48 ") and "; 0 equal the 15-corruption mean" in q.evidence
    assert "up to 2.02 points" in q.evidence


def test_q4_27_of_48_raw_critical_band_fits_are_degenerate(table_and_population):
    table, pop = table_and_population
    q = quirks.critical_band_degenerate(table, pop)
    assert q.evidence.startswith("27 of 48 raw metric/criticalband/bw values are the flat fit")
    # the paper's _norm columns never are
    assert max(table.column("metric/criticalband/bw_norm", pop)) < 100


def test_detectors_notice_when_a_quirk_is_gone(table_and_population):
    table, pop = table_and_population
    m = pop[0]
    assert not quirks.real_last_batch(table.perturbed(m, "top1_acc/imagenet-real", 0.1), pop).holds
    assert not quirks.pgd_denominator(table.perturbed(m, "top1_acc/PGD-40/low", 0.001), pop).holds
    assert not quirks.imagenet_c_19(table.perturbed(m, "top1_acc/imagenet-c", 0.01), pop).holds
