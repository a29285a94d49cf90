"""A declared subset of a dataset (``repro.datasets.subset``; ``measure --subset N``): seeded and
class-stratified, the same images in every condition, recorded in the provenance (size, seed,
stratification, the digest of the image list), and evidence with its own n; an ad-hoc part of
a dataset stays not evidence (``repro.store.validate.evidence_problem``)."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

import pytest

from repro.base.errors import DataError
from repro.datasets import make_mini, open_dataset
from repro.datasets.subset import Subset, is_declared, provenance, stratified_names
from repro.runner.identity import source_identity
from repro.store.validate import evidence_problem

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class It:
    name: str
    label: int


ITEMS = [It(f"c{c}/{i:03d}", c) for c, n in ((0, 50), (1, 30), (2, 20)) for i in range(n)]


def test_stratified_by_class_in_proportion_and_seeded():
    names = stratified_names(ITEMS, Subset(10, seed=4))
    assert Counter(n.split("/")[0] for n in names) == {"c0": 5, "c1": 3, "c2": 2}
    assert names == sorted(names, key=[it.name for it in ITEMS].index)  # the dataset's order
    assert names == stratified_names(ITEMS, Subset(10, seed=4))
    assert names != stratified_names(ITEMS, Subset(10, seed=5))
    # largest remainders: 11 of 100 -> 5.5, 3.3, 2.2 -> 5 + 1, 3, 2
    assert Counter(n.split("/")[0] for n in stratified_names(ITEMS, Subset(11))) == {
        "c0": 6,
        "c1": 3,
        "c2": 2,
    }
    assert len(stratified_names(ITEMS, Subset(100))) == 100
    with pytest.raises(DataError, match="a subset of 101 images, but it holds 100"):
        stratified_names(ITEMS, Subset(101))
    with pytest.raises(ValueError):
        Subset(0)


def test_provenance_names_the_images_by_digest():
    names = stratified_names(ITEMS, Subset(10, seed=1))
    prov = provenance(Subset(10, seed=1), names)
    assert prov == {
        "size": 10,
        "seed": 1,
        "stratification": "class",
        "digest": hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest(),
    }
    assert is_declared(prov)
    assert not is_declared({k: v for k, v in prov.items() if k != "digest"})


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    root = tmp_path_factory.mktemp("mini")
    make_mini(root, per_class=2, seed=0, datasets=["imagenet_val", "imagenet_c"])
    return root


def test_open_dataset_subset_of_a_dataset_and_of_every_condition(mini, tmp_path):
    full = open_dataset("imagenet_val", mini / "imagenet_val", mini=True, cache=False)
    sub = open_dataset(
        "imagenet_val",
        mini / "imagenet_val",
        mini=True,
        cache_dir=tmp_path,
        subset=Subset(30, seed=2),
    )
    assert len(sub) == 30 and sub.subset["size"] == 30 and sub.subset["seed"] == 2
    names = [n for b in sub.batches(8) for n in b.names]
    assert set(names) <= set(full.names) and len(set(names)) == 30
    assert sub.subset["digest"] == hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()
    assert full.subset is None
    corr = open_dataset(
        "imagenet_c", mini / "imagenet_c", mini=True, cache=False, subset=Subset(3, seed=2)
    )
    per_condition = {
        c: sorted(it.name.removeprefix(c + "/") for it in p.items) for c, p in corr.parts.items()
    }
    first = next(iter(per_condition.values()))
    assert len(first) == 3 and all(
        v == first for v in per_condition.values()
    )  # the same images everywhere
    assert len(corr) == 3 * len(corr.parts) and corr.subset["size"] == 3


class _Source:
    def __init__(self, n, subset=None):
        self.n, self.subset = n, subset

    def __len__(self):
        return self.n

    def fingerprint(self):
        return "f" * 32


def test_a_declared_subset_is_evidence_an_ad_hoc_part_is_not():
    declared = provenance(Subset(2000, seed=0), [f"x{i}" for i in range(2000)])
    ident = source_identity("imagenet_val", _Source(2000, declared))
    assert ident["dataset_partial"] is False and ident["dataset_subset"] == declared
    assert evidence_problem(ident) is None
    part = source_identity("imagenet_val", _Source(2000))
    assert part["dataset_partial"] is True and part["dataset_subset"] is None
    assert evidence_problem(part) == "measured on part of the dataset (2000 items)"
    broken = dict(ident, dataset_subset={"size": 2000})
    assert "declaration" in evidence_problem(broken)
    assert evidence_problem(dict(ident, dataset_mini=True)) == "measured on generated mini data"
