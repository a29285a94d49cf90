"""Claims on independent inputs (``repro.diagnostics.independent_inputs``): a constructed lab (a
declaration and a CSV, as a user writes them) replaces some published inputs; the claims that
read them count one more independent input, name the input that moved them, and never take a
value of another protocol or of a ``not_same`` identity."""

from __future__ import annotations

import pytest

from tests.cli.test_compare_independent import _lab

pytestmark = pytest.mark.claims

# resnet50_noisymix, resnet50_pixmix_180ep and tv2_resnet50: no other source publishes their clean
# top-1 under the study's protocol (torchvision's V2 metadata is at crop 0.966); the lab's -V2 at
# crop 0.95 is another protocol than the study's; robust_resnet50_l2_eps3's entry is a name
# collision (not_same)
CSV = (
    "model,val,v2\n"
    "my_noisymix,10.00,50.00\n"
    "my_pixmix,77.00,60.00\n"
    "my_tv2,80.00,10.00\n"
    "my_l2_eps3,10.00,10.00\n"
    "my_tv1,76.15,60.00\n"
)
IDENTITY = [
    ("resnet50_noisymix", "my_noisymix", "certain", "same release file"),
    ("resnet50_pixmix_180ep", "my_pixmix", "probable", "same paper release"),
    ("tv2_resnet50", "my_tv2", "certain", "same torchvision enum"),
    ("robust_resnet50_l2_eps3", "my_l2_eps3", "not_same", "Engstrom et al.'s, not Salman's"),
    ("tv_resnet50", "my_tv1", "certain", "same torchvision enum"),
]
COLUMNS = [
    ('column = "top1_acc/imagenet"', 'value = "val"'),
    (
        'column = "top1_acc/imagenet-v2"',
        'value = "v2"\nprotocol = { images = "ImageNetV2 matched-frequency (10,000)", '
        'crop_pct = "0.95" }',
    ),
]


@pytest.fixture(scope="module")
def outcomes(data_dir, tmp_path_factory):
    """{claim id: IndependentOutcome}, without and with the constructed lab."""
    from repro.base.study import get_study
    from repro.claims.context import published_context
    from repro.diagnostics.independent_inputs import independent_outcomes

    study = get_study("gavrikov2024")
    folder = tmp_path_factory.mktemp("lab")
    _lab(folder, csv_text=CSV, identity=IDENTITY, columns=COLUMNS)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("REPRO_INDEPENDENT_PATH", raising=False)
        before = {
            o.reanalysis.claim.id: o
            for o in independent_outcomes(published_context(study, data_dir))
        }
        mp.setenv("REPRO_INDEPENDENT_PATH", str(folder))
        after = {
            o.reanalysis.claim.id: o
            for o in independent_outcomes(published_context(study, data_dir))
        }
    return before, after


def _subs(o, source="mylab"):
    return {(s.model, s.column): s for s in o.substituted if s.source == source}


def test_the_labs_input_is_counted_and_named_as_the_one_that_moved_the_claim(outcomes):
    before, after = outcomes
    cid = "shape_bias_vs_id_accuracy"  # reads top1_acc/imagenet of the 48 models
    b, a = before[cid], after[cid]
    assert a.total == b.total == 192
    # noisymix, tv2 (certain) and pixmix (probable) are new; tv_resnet50's clean top-1 already
    # had a per-image value (ImageNet-X), which the choice rule keeps over the lab's rounded one
    assert a.k == b.k + 3, sorted(_subs(a))
    mine = _subs(a)
    assert set(mine) == {
        ("resnet50_noisymix", "top1_acc/imagenet"),
        ("resnet50_pixmix_180ep", "top1_acc/imagenet"),
        ("tv2_resnet50", "top1_acc/imagenet"),
    }
    noisy = mine[("resnet50_noisymix", "top1_acc/imagenet")]
    assert noisy.independent == pytest.approx(10.0) and noisy.identity == "certain"
    assert noisy.label == "differs" and noisy.difference < -60  # far from its published value
    assert len(a.differing) >= len(b.differing) + 1 and noisy in a.differing
    assert a.as_json()["differs"] == len(a.differing)
    assert mine[("resnet50_pixmix_180ep", "top1_acc/imagenet")].identity == "probable"
    assert a.by_identity()["probable"] == b.by_identity()["probable"] + 1
    # 10 % clean accuracy drops the model to the bottom of the ID ranking: it alone moves rho
    assert noisy.effect is not None and abs(noisy.effect) > 1e-3
    assert a.moved[0].model == "resnet50_noisymix" and a.moved[0].source == "mylab"
    assert a.shift != pytest.approx(b.shift)
    assert a.evidence_text() == f"independent ({b.k + 3} of 192 inputs)"
    tv = next(
        s for s in a.substituted if (s.model, s.column) == ("tv_resnet50", "top1_acc/imagenet")
    )
    assert tv.source == "imagenetx" and tv.precision == "per-image"
    assert (
        tv.candidates
        == next(
            s for s in b.substituted if (s.model, s.column) == ("tv_resnet50", "top1_acc/imagenet")
        ).candidates
        + 1
    )


def test_other_protocol_and_not_same_values_never_replace_an_input(outcomes):
    _, after = outcomes
    for o in after.values():
        mine = _subs(o)
        assert ("tv2_resnet50", "top1_acc/imagenet-v2") not in mine  # crop 0.95: other protocol
        assert not any(m == "robust_resnet50_l2_eps3" for m, _ in mine)  # not_same
        assert all(s.identity in ("certain", "probable") for s in o.substituted)


def test_a_claim_without_independent_inputs_keeps_its_reanalysis_verdict(outcomes):
    _, after = outcomes
    o = after["peak_noise_sensitivity_near_one"]  # the critical-band PNS: nobody else measured it
    assert o.k == 0 and o.independent is None
    assert o.verdict == o.reanalysis.verdict
    assert o.evidence_text() == f"re-analysis (0 of {o.total} inputs independent)"
    assert o.as_json()["evidence"]["kind"] == "re-analysis"
