"""The ImageNet-X group comparisons (paradigm, architecture) on synthetic factor tables with known
answers: the headline rho of the groups' mean profiles (identical: 1; reversed: -1, which the
claims' tolerance fails), the labels read from the installed package, the declared name rule
(matches, unmatched, ambiguous), the closed-form leave-one-out, and every fail-closed path."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from repro.base.errors import ConfigError, DataError
from repro.claims.tolerance import get_policy
from repro.scoring.imagenet_x import FACTORS
from repro.studies.imagenetx import group_agreement as ga
from repro.studies.imagenetx import model_labels as ml
from repro.studies.imagenetx.published import read_tables

pytestmark = pytest.mark.unit

PARADIGMS = ["Supervised on ImageNet-1K", "Self-supervised"]
SUPERVISED = ["resnet50", "alexnet", "vgg16", "densenet121"]  # 'Supervised on ImageNet-1K'
SSL_TESTBED = [
    "resnet50_simclrv2_linear_probe_tf_port",
    "resnet50_simclrv2_finetuned_100pct_tf_port",
]


def _profile(slope: float, rng, m: int) -> np.ndarray:
    """m models' accuracies with error rising over the factors (slope > 0) or falling, plus
    noise too small to reorder the factors."""
    base = 0.8 - slope * np.arange(16) * 0.01
    return base[None, :] + rng.normal(0, 1e-4, (m, 16))


def _context(root, sets: dict[str, tuple[list[str], np.ndarray]]):
    files = []
    for model_set, (models, acc) in sets.items():
        path = root / "imagenetx/factor_accuracies" / model_set / "class/accuracies_per_factor.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame(acc, columns=list(FACTORS))
        frame.insert(0, "model", models)
        frame["average"] = 0.9
        frame.to_csv(path, index=False)
        files.append((model_set, "class"))
    return SimpleNamespace(
        data_dir=root, cache={}, table=read_tables(root, files, check_sha256=False)
    )


def _paradigm_context(root, ssl_slope: float):
    rng = np.random.default_rng(0)
    testbed = [*SUPERVISED, *SSL_TESTBED, "not_a_listed_model", "resnet50_swsl"]
    acc = np.vstack(
        [
            _profile(1.0, rng, len(SUPERVISED)),
            _profile(ssl_slope, rng, len(SSL_TESTBED)),
            _profile(1.0, rng, 2),
        ]
    )
    return _context(
        root,
        {
            "imagenet_testbed": (testbed, acc),
            # MoCo is in SELFSUPERVISED_MODELS; bagnet9 is not, so the package's comparison skips it
            "modelvshuman": (["MoCo", "bagnet9"], _profile(ssl_slope, rng, 2)),
            # DINO is in SELFSUPERVISED_MODELS; ViT is not
            "base": (["DINO", "ViT"], _profile(ssl_slope, rng, 2)),
        },
    )


def test_paradigm_groups_come_from_the_package_and_identical_profiles_agree(tmp_path):
    r = ga.group_agreement(
        _paradigm_context(tmp_path, 1.0), grouping="paradigm", groups=PARADIGMS, resamples=200
    )
    assert r.value == pytest.approx(1.0) and r.p < 1e-10 and r.n == 8
    assert r.details["n_per_group"] == {PARADIGMS[0]: 4, PARADIGMS[1]: 4}
    ssl = {m for m, g in r.per_model.items() if g == "Self-supervised"}
    assert ssl == {
        *(f"imagenet_testbed/{m}" for m in SSL_TESTBED),
        "modelvshuman/MoCo",
        "base/DINO",
    }
    assert r.details["left_out"] == {
        "not listed in imagenet_x/model_types.py": 1,
        "type Supervised on more data": 1,  # resnet50_swsl
    }
    labels = r.details["labels"]
    assert labels["package"] == "imagenet-x" and labels["version"] == ml.EXPECTED_VERSION
    assert len(labels["sha256"]) == 64
    assert r.interval[0] <= r.value <= r.interval[1]
    assert r.details["cross_within_ratio"] == pytest.approx(1.0, abs=1e-3)
    check = get_policy("within_range")(None, r, {"low": 0.8})
    assert check.passed


def test_reversed_failure_modes_fail_the_claims_tolerance(tmp_path):
    """The self-supervised models find the factors hard in the opposite order: rho -1, the
    cross/within ratio negative, and the claims' tolerance (rho >= 0.8) fails."""
    r = ga.group_agreement(
        _paradigm_context(tmp_path, -1.0), grouping="paradigm", groups=PARADIGMS, resamples=200
    )
    assert r.value == pytest.approx(-1.0)
    assert r.details["cross_within_ratio"] < -0.9
    check = get_policy("within_range")(None, r, {"low": 0.8})
    assert not check.passed and "OUTSIDE" in check.why


def test_leave_one_out_is_the_statistic_without_each_model(tmp_path):
    rng = np.random.default_rng(5)
    testbed = [*SUPERVISED, *SSL_TESTBED]
    acc = 0.7 + rng.random((len(testbed), 16)) * 0.2
    ctx = _context(
        tmp_path,
        {
            "imagenet_testbed": (testbed, acc),
            "modelvshuman": (["MoCo"], 0.7 + rng.random((1, 16)) * 0.2),
            "base": (["DINO"], 0.7 + rng.random((1, 16)) * 0.2),
        },
    )
    r = ga.group_agreement(ctx, grouping="paradigm", groups=PARADIGMS, resamples=0)
    loo = r.leave_one_out()
    for row, value in zip(loo.models, loo.value, strict=True):
        model_set, model = row.split("/")
        er = ctx.table.values
        keep = [k for k in r.per_model if k != row]
        mean = {
            g: np.mean(
                [
                    [(1 - er[k][f"class/{f}"]) / (1 - er[k]["class/average"]) for f in FACTORS]
                    for k in keep
                    if r.per_model[k] == g
                ],
                axis=0,
            )
            for g in PARADIGMS
        }
        assert value == pytest.approx(stats.spearmanr(*mean.values()).statistic, abs=1e-12), row


def _rules(tmp_path, body: str):
    path = tmp_path / "rules.toml"
    path.write_text(body)
    return path


RULES = """
population_types = ["Supervised on ImageNet-1K", "Supervised on more data"]
[[family]]
name = "transformer"
pattern = "vit_"
[[family]]
name = "convolutional"
pattern = "(resnet|vgg)"
"""


def test_architecture_rule_counts_matches_and_reports_unmatched(tmp_path, monkeypatch):
    rules = _rules(tmp_path, RULES)
    monkeypatch.setattr(ga, "architecture_rules", lambda: ml.architecture_rules(rules))
    rng = np.random.default_rng(1)
    vit = ["vit_small_patch16_224", "vit_base_patch16_224", "vit_large_patch16_224"]
    cnn = ["resnet50", "vgg16", "resnet101"]
    other = ["densenet121", "resnet18_50k_1_epochs", "identity32_one_nn"]
    ctx = _context(
        tmp_path / "data",
        {
            "imagenet_testbed": (
                vit + cnn + other,
                np.vstack([_profile(1.0, rng, 3), _profile(1.0, rng, 3), _profile(1.0, rng, 3)]),
            )
        },
    )
    r = ga.group_agreement(
        ctx, grouping="architecture", groups=["transformer", "convolutional"], resamples=200
    )
    assert r.value == pytest.approx(1.0)
    rule = r.details["name_rule"]
    assert {f: v["n"] for f, v in rule["matches"].items()} == {"transformer": 3, "convolutional": 3}
    assert rule["unmatched"] == ["densenet121"]  # in the population, matched by no pattern
    assert r.details["left_out"] == {
        "matched by no family of the name rule": 1,
        "type Low Accuracy CNN": 1,  # resnet18_50k_1_epochs
        "type Nearest Neighbors": 1,  # identity32_one_nn
    }
    assert r.sources["architecture_families.toml"] == "published"


def test_architecture_rule_fails_closed(tmp_path):
    ambiguous = ml.architecture_rules(_rules(tmp_path, RULES.replace('"vit_"', '"(vit_|resnet)"')))
    with pytest.raises(DataError, match="matches the patterns of transformer and convolutional"):
        ambiguous.family("resnet50")
    with pytest.raises(DataError, match="missing"):
        ml.architecture_rules(tmp_path / "none.toml")
    with pytest.raises(DataError, match="expected population_types"):
        ml.architecture_rules(_rules(tmp_path, '[[family]]\nname = "x"\npattern = "x"\n'))
    with pytest.raises(DataError, match="pattern"):
        ml.architecture_rules(_rules(tmp_path, RULES.replace('"vit_"', '"(vit_"')))


def test_the_shipped_rule_table_reads_and_names_package_types():
    rules = ml.architecture_rules()
    assert set(rules.families) == {"transformer", "convolutional"}
    ml.package_model_types().check_types(list(rules.population_types), "test")
    assert rules.family("vit_base_patch16_224") == "transformer"
    assert rules.family("efficientnet-b0") == "convolutional"
    assert rules.family("identity32_one_nn") is None


def test_unknown_groups_and_groupings_are_config_errors(tmp_path):
    ctx = _paradigm_context(tmp_path, 1.0)
    with pytest.raises(ConfigError, match="not defined by imagenet_x/model_types.py"):
        ga.group_agreement(ctx, grouping="paradigm", groups=["Supervised", "Self-supervised"])
    with pytest.raises(ConfigError, match="unknown grouping"):
        ga.group_agreement(ctx, grouping="depth", groups=PARADIGMS)
    with pytest.raises(ConfigError, match="two distinct groups"):
        ga.group_agreement(ctx, grouping="paradigm", groups=[PARADIGMS[0], PARADIGMS[0]])


def test_a_group_too_small_is_a_data_error(tmp_path):
    rng = np.random.default_rng(2)
    ctx = _context(
        tmp_path,
        {
            "imagenet_testbed": (SUPERVISED + SSL_TESTBED[:1], _profile(1.0, rng, 5)),
            "modelvshuman": (["bagnet9"], _profile(1.0, rng, 1)),
            "base": (["ViT"], _profile(1.0, rng, 1)),
        },
    )
    with pytest.raises(DataError, match="group 'Self-supervised' has 1 model"):
        ga.group_agreement(ctx, grouping="paradigm", groups=PARADIGMS)


def test_package_file_fails_closed(monkeypatch):
    from importlib import metadata

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    ml.package_model_types.cache_clear()
    try:
        monkeypatch.setattr(metadata, "distribution", missing)
        with pytest.raises(DataError, match="imagenet-x package .* is not installed"):
            ml.package_model_types()
        monkeypatch.undo()
        ml.package_model_types.cache_clear()
        monkeypatch.setattr(ml, "_record_sha256", lambda entry: "0" * 64)
        with pytest.raises(DataError, match="changed after installation"):
            ml.package_model_types()
    finally:
        monkeypatch.undo()
        ml.package_model_types.cache_clear()
    pkg = ml.package_model_types()
    assert pkg.types["DINO"] == "Self-supervised" and "MoCo" in pkg.selfsupervised
