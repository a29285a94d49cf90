"""Tolerance policies (named, with the edge cases that decide verdicts), the claim-file loader
(every file found, errors named) and the generic checker on a context of our own."""

from __future__ import annotations

import pytest

from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError
from repro.base.table import ModelTable
from repro.claims import tolerance as tol
from repro.claims.check import applicable_tolerance, evaluate
from repro.claims.context import ClaimContext
from repro.claims.loader import load_claims, read_claim_file, study_claims

pytestmark = pytest.mark.unit


def R(value, p=None, interval=None, **details):
    return StatisticResult(value=value, p=p, interval=interval, details=details)


@pytest.mark.parametrize(
    "value,ok",
    [
        (-0.7614, True),
        (-0.755, True),
        (-0.765, True),
        (-0.7651, False),
        (-0.7549, False),
        (0.76, False),
    ],
)
def test_rounding_is_half_a_unit_of_the_last_published_digit(value, ok):
    assert tol.rounding(-0.76, R(value), {"decimals": 2}).passed is ok


def test_rounding_checks_named_details_too():
    r = R(-0.7614, at={"rho": -0.9786}, other={"rho": -0.61})
    check = tol.rounding(-0.76, r, {"decimals": 2, "also": {"at": -0.98, "other": -0.60}})
    assert not check.passed and "other -0.6100 OUTSIDE -0.6" in check.why


def test_sign_significance():
    cells = {"a": {"rho": 0.6, "p": 1e-5}, "b": {"rho": 0.3, "p": 0.01}}
    assert tol.sign_significance(
        None, R(0.3, **cells), {"sign": "+", "alpha": 0.05, "cells": ["a", "b"]}
    ).passed
    assert not tol.sign_significance(
        None, R(0.3, **cells), {"sign": "+", "alpha": 0.001, "cells": ["a", "b"]}
    ).passed
    assert not tol.sign_significance(None, R(0.3, **cells), {"sign": "-", "cells": ["a"]}).passed
    assert tol.sign_significance(None, R(-0.5, p=0.01), {"sign": "-"}).passed  # headline


def test_sign_significance_value_names_the_headline_among_cells():
    r = R(-0.76, p=1e-9, at={"rho": -0.98, "p": 1e-10}, other={"rho": -0.2, "p": 0.2})
    params = {"sign": "-", "alpha": 0.05}
    assert tol.sign_significance(None, r, params | {"cells": ["value", "at"]}).passed
    check = tol.sign_significance(None, r, params | {"cells": ["value", "at", "other"]})
    assert not check.passed and "other -0.200 (p=0.2) FAILS" in check.why
    assert not tol.sign_significance(
        None, R(-0.76, p=0.07, at={"rho": -0.98, "p": 1e-10}), params | {"cells": ["value", "at"]}
    ).passed


def test_exact_details_compares_named_details():
    r = R(0.8267, first_including_diagonal="imagenet_cbar", ranking=["imagenet_cbar", "imagenet"])
    ok = tol.exact_details(None, r, {"equal": {"first_including_diagonal": "imagenet_cbar"}})
    assert ok.passed and ok.why == "first_including_diagonal = 'imagenet_cbar'"
    bad = tol.exact_details(None, r, {"equal": {"first_including_diagonal": "imagenet"}})
    assert not bad.passed and "(expected 'imagenet')" in bad.why
    with pytest.raises(ConfigError, match="does not report"):
        tol.exact_details(None, r, {"equal": {"first": "x"}})
    with pytest.raises(ConfigError, match="needs `equal"):
        tol.exact_details(None, r, {})


def test_null_all_needs_every_p_at_least_alpha():
    r = R(0.058, x={"rho": 0.1, "p": 0.058}, y={"rho": -0.2, "p": 0.9})
    assert tol.null_all(None, r, {"alpha": 0.05}).passed
    r2 = R(0.049, x={"rho": 0.3, "p": 0.049}, y={"rho": -0.2, "p": 0.9})
    check = tol.null_all(None, r2, {"alpha": 0.05})
    assert not check.passed and "x (p=0.049)" in check.why


def test_binomial_half_width():
    # 0.21 from n = 1200: half-width 1.96 * sqrt(.21 * .79 / 1200) = 0.02305
    assert tol.binomial(0.21, R(0.2330), {"n": 1200}).passed
    assert not tol.binomial(0.21, R(0.2332), {"n": 1200}).passed


def test_correlation_interval_needs_inside_same_sign_and_significance():
    assert tol.correlation_interval(-0.76, R(-0.70, p=1e-6, interval=(-0.85, -0.55)), {}).passed
    assert not tol.correlation_interval(
        -0.76, R(-0.60, p=1e-6, interval=(-0.72, -0.45)), {}
    ).passed  # outside
    assert not tol.correlation_interval(
        -0.76, R(-0.70, p=0.2, interval=(-0.9, 0.1)), {}
    ).passed  # lost significance


def test_measured_inputs_switch_rounding_claims_to_the_statistical_policy():
    claim = load_claims().get("shape_bias_vs_id_accuracy")
    r = StatisticResult(value=-0.7, p=1e-6, interval=(-0.8, -0.5), sources={"shape-bias": "store"})
    assert applicable_tolerance(claim, r, measured=True).policy == "correlation_interval"
    assert applicable_tolerance(claim, r, measured=False).policy == "rounding"
    r_pub = StatisticResult(
        value=-0.7, p=1e-6, interval=(-0.8, -0.5), sources={"shape-bias": "published"}
    )
    assert applicable_tolerance(claim, r_pub, measured=True).policy == "rounding"
    ssl = load_claims().get("shape_bias_yfcc_ssl_equals_baseline")
    assert (
        applicable_tolerance(
            ssl, StatisticResult(0.2, sources={"shape-bias": "store"}), True
        ).policy
        == "binomial"
    )


def test_every_claim_file_is_loaded_and_ids_are_the_issue_ids():
    ids = set(load_claims().names())
    assert {
        "shape_bias_vs_id_accuracy",
        "shape_bias_yfcc_ssl_equals_baseline",
        "critical_band_center_frequency_null",
        "imagenet_cbar_strongest_mean_correlation",
        "high_frequency_bias_positive",
        "low_frequency_bias_helps_pgd",
        "peak_noise_sensitivity_near_one",
        "adversarial_training_curvilinear",
        "high_frequency_strongest_model_9_percent",
    } <= ids
    from repro.base.study import select

    assert [s.name for s in select()][:3] == [
        "gavrikov2024",
        "imagenetx",
        "subramanian2023",
    ]  # the built-in studies, by name
    assert {c.study for _, c in load_claims().items()} == {
        "gavrikov2024",
        "imagenetx",
        "subramanian2023",
    }
    for _, c in load_claims().items():
        assert c.version >= 1 and c.tolerance.reason and c.source and c.statement


def fake_statistic(ctx, *, column, model):
    """A statistic defined outside repro (as another study's claim file would)."""
    return StatisticResult(
        value=ctx.table.value(model, column), n=1, details={"data_dir": str(ctx.data_dir)}
    )


CLAIM_A = """
[[claim]]
id = "alpha_value"
study = "test"
statement = "a's x is 0.5"
source = "here"
statistic = "tests.unit.test_claims_tolerance:fake_statistic"
params = { column = "x", model = "a" }
published = 0.5
version = 1
[claim.tolerance]
policy = "rounding"
params = { decimals = 1 }
reason = "one decimal"
"""


def _study(root, name, claims_text):
    """A study folder ``root/name`` whose claims are ``claims_text`` (claims
    name study ``test``)."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.toml").write_text(
        f'name = "{name}"\ntitle = "T"\ncitation = "C"\nclaims = "claims.toml"\n'
        '[table]\nfile = "table.csv"\n'
    )
    (folder / "claims.toml").write_text(claims_text.replace('study = "test"', f'study = "{name}"'))
    (folder / "table.csv").write_text("model,x\na,0.53\n")
    return folder


def test_loader_picks_up_every_study_and_statistics_get_the_context(tmp_path, monkeypatch):
    from repro.base.study import read_study

    monkeypatch.setenv("REPRO_STUDY_PATH", str(tmp_path))
    _study(tmp_path, "one", CLAIM_A)
    _study(tmp_path, "two", CLAIM_A.replace("alpha_value", "beta_value").replace("0.5\n", "0.9\n"))
    claims = load_claims(["one", "two"])
    assert claims.names() == ["alpha_value", "beta_value"]
    ctx = ClaimContext(read_study(tmp_path / "one"), tmp_path, ModelTable({"a": {"x": 0.53}}), {})
    a, b = (evaluate(claims.get(i), ctx) for i in claims.names())
    assert a.verdict == "reproduced" and b.verdict == "not_reproduced"
    assert a.result.details["data_dir"] == str(tmp_path)
    assert a.as_json() == {
        "id": "alpha_value",
        "published": 0.5,
        "measured": 0.53,
        "interval": None,
        "verdict": "reproduced",
        "provenance": {},  # no per-model inputs: nothing to count
        "evidence": {"kind": "re-analysis", "measured": 0, "total": 0},
        "flags": [],
        "phrase": "consistent with the published data",
        "agreement": None,
    }


@pytest.mark.parametrize(
    "mutate,match",
    [
        (
            lambda s: s.replace('policy = "rounding"', 'policy = "roundish"'),
            "unknown tolerance policy 'roundish'",
        ),
        (lambda s: s.replace('reason = "one decimal"', ""), "needs a `reason`"),
        (lambda s: s.replace("version = 1\n", ""), "missing field.*version"),
        (lambda s: s.replace("[[claim]]", "[[claim"), "not valid TOML"),
        (lambda s: s + s, "claim id 'alpha_value' appears twice"),
        (
            lambda s: s.replace('study = "test"', 'study = "other"'),
            "says study = 'other', but the file is study 'one'",
        ),
    ],
)
def test_loader_errors_name_the_file_and_claim(tmp_path, mutate, match):
    from repro.base.study import read_study

    folder = _study(tmp_path, "one", mutate(CLAIM_A))
    with pytest.raises(ConfigError, match=match) as info:
        study_claims(read_study(folder))
    assert "claims.toml" in str(info.value)


def test_duplicate_across_studies_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_STUDY_PATH", str(tmp_path))
    _study(tmp_path, "one", CLAIM_A)
    _study(tmp_path, "two", CLAIM_A)
    with pytest.raises(
        ConfigError,
        match=r"two/claims\.toml: claim id 'alpha_value' is already defined in .*one/claims\.toml",
    ):
        load_claims(["one", "two"])
    assert len(read_claim_file(tmp_path / "one" / "claims.toml")) == 1


def test_qualitative_content_is_read_from_the_claim_file():
    claims = load_claims()
    q = claims.get("shape_bias_vs_id_accuracy").qualitative
    assert (
        q.policy == "sign_significance"
        and q.params["cells"] == ["value", "at", "other"]
        and q.reason
    )
    assert (
        claims.get("imagenet_cbar_strongest_mean_correlation").qualitative.policy == "exact_details"
    )
    assert (
        claims.get("peak_noise_sensitivity_near_one").qualitative is None
    )  # a count: none declared


def test_correlation_interval_says_what_it_checked():
    """Its reason names each check, passed or not; the interval's bounds belong to it."""
    ok = tol.correlation_interval(-0.5, R(-0.45, p=0.001, interval=(-0.6, -0.5)), {})
    assert ok.passed and ok.why == (
        "published -0.5 inside [-0.600, -0.500]; sign same; significance same (our p=0.001, "
        "alpha 0.05)"
    )
    flipped = tol.correlation_interval(0.1, R(-0.05, p=0.3, interval=(-0.2, 0.1)), {})
    assert not flipped.passed and flipped.why == (
        "published 0.1 inside [-0.200, 0.100]; sign DIFFERENT; significance LOST (our p=0.3, "
        "alpha 0.05)"
    )
