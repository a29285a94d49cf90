"""The extension points that are registries (``repro.base.registry.Registry``): dataset specs,
16-class category mappings and claim tolerance policies. A researcher adds an entry with
``register`` and the code that looks names up finds it; a duplicate name is refused; an unknown
name gets the closest known ones."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError, UnknownNameError
from repro.base.registry import Registry
from repro.claims import tolerance
from repro.datasets import categories16, specs

pytestmark = pytest.mark.unit


@pytest.fixture
def restore():
    """Take the entries a test adds out again (the registries are module state)."""
    added: list[tuple[Registry, str]] = []
    yield added
    for registry, name in added:
        registry._entries.pop(name, None)


def test_the_three_are_registries_with_their_entries():
    assert isinstance(specs.SPECS, Registry) and specs.SPECS.kind == "dataset"
    assert "imagenet_val" in specs.SPECS and specs.SPECS["cbmsplit"].name == "cbmsplit"
    assert [s.name for s in specs.SPECS.values()] == specs.SPECS.names()
    assert isinstance(categories16.MAPPINGS, Registry) and categories16.mapping_names() == [
        "model-vs-human-16"
    ]
    assert isinstance(tolerance.POLICIES, Registry)
    assert tolerance.POLICIES.names() == [
        "rounding",
        "sign_significance",
        "null_all",
        "null_equivalent",
        "binomial",
        "exact_details",
        "correlation_interval",
        "within_range",
    ]


def test_a_registered_dataset_spec_is_found_by_name(restore):
    mine = dataclasses.replace(
        specs.get_spec("imagenet_v2"), name="my_val_subset", title="my subset"
    )
    specs.SPECS.register("my_val_subset", mine)
    restore.append((specs.SPECS, "my_val_subset"))
    assert specs.get_spec("my-val-subset") is mine  # hyphens as on the command line
    with pytest.raises(ValueError, match="duplicate dataset name 'my_val_subset'"):
        specs.SPECS.register("my_val_subset", mine)
    with pytest.raises(UnknownNameError, match="did you mean 'my_val_subset'"):
        specs.get_spec("my_val_subst")


def test_a_registered_category_mapping_is_found_by_name(restore):
    base = categories16.get_mapping()
    summed = dataclasses.replace(base, aggregation="sum")
    categories16.MAPPINGS.register("mvh-16-sum", lambda: summed)
    restore.append((categories16.MAPPINGS, "mvh-16-sum"))
    assert categories16.get_mapping("mvh-16-sum").aggregation == "sum"
    assert categories16.get_mapping().aggregation == base.aggregation  # the default is untouched
    with pytest.raises(
        UnknownNameError, match="unknown category mapping 'mvh-16-summ'.*did you mean 'mvh-16-sum'"
    ):
        categories16.get_mapping("mvh-16-summ")


def test_a_registered_tolerance_policy_judges_claims(restore, tmp_path):
    def within_tenth(published, result, params):
        ok = (
            published is not None
            and result.value is not None
            and abs(result.value - published) <= 0.1
        )
        return tolerance.Check(ok, f"|{result.value} - {published}| <= 0.1")

    tolerance.POLICIES.register("within_tenth", within_tenth)
    restore.append((tolerance.POLICIES, "within_tenth"))
    policy = tolerance.get_policy("within_tenth")
    assert policy(0.5, StatisticResult(value=0.55), {}).passed
    assert not policy(0.5, StatisticResult(value=0.65), {}).passed
    from repro.claims.loader import read_claim_file

    def claim_file(policy: str) -> Path:
        path = tmp_path / "claims.toml"
        path.write_text(
            '[[claim]]\nid = "c"\nstudy = "s"\nstatement = "s"\nsource = "p"\nstatistic = "m:f"\n'
            f'version = 1\n[claim.tolerance]\npolicy = {policy}\nreason = "a study\'s own rule"\n'
        )
        return path

    assert (
        read_claim_file(claim_file('"within_tenth"'))[0].tolerance.policy == "within_tenth"
    )  # a claim file may name it
    with pytest.raises(
        ConfigError, match=r"claim #1 \('c'\): tolerance: unknown tolerance policy \['x'\]"
    ):
        read_claim_file(claim_file('["x"]'))  # not a name: an error, not a TypeError
    with pytest.raises(ConfigError, match="unknown tolerance policy 'within_tenthh'"):
        tolerance.get_policy("within_tenthh")


@pytest.mark.parametrize(
    "ref, why",
    [
        ("repro.no_such_module:f", "No module named 'repro.no_such_module'"),
        ("repro.base.registry:no_such_attr", "no_such_attr"),
        ("no_colon", "not of the form 'module:attribute'"),
    ],
)
def test_an_unloadable_reference_names_what_gives_it_and_why(ref, why):
    from repro.base.errors import ConfigError
    from repro.base.registry import load_lazy

    with pytest.raises(ConfigError) as err:
        load_lazy(ref, "study.toml: [quirks] variants")
    msg = str(err.value)
    assert msg.startswith(f"study.toml: [quirks] variants {ref!r} cannot be loaded (")
    assert why in msg


def test_a_loadable_reference_is_its_object():
    from repro.base.registry import load_lazy, resolve_lazy

    assert load_lazy("repro.base.registry:resolve_lazy", "x") is resolve_lazy
