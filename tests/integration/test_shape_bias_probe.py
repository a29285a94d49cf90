"""Shape-bias probe with known-answer models on a tiny generated cue-conflict set.

The images (16 x 16 px, real naming ``<shape><i>-<texture><j>.png``) carry their shape
class in the red channel and their texture class in the green channel (value 8 + 15 * index);
the constructed models read one of them and put a large logit on every ImageNet class of
that category. So the shape reader must score 1.0, the texture reader 0.0, and a reader that
flips a fair coin per image must score 0.5 within its binomial interval; the probe's
decisions CSV re-scores to the same counts.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.base.errors import DataError
from repro.datasets.base import ArraySource
from repro.datasets.categories16 import categories16, get_mapping
from repro.measurements.loop import run
from repro.probes import shape_bias as probe
from repro.scoring.shape_bias import read_decisions_csv, shape_bias

pytestmark = pytest.mark.integration

CATS = categories16()
SIZE = 16


def cue_conflict_source(labelled: bool = True, repeats: int = 1) -> ArraySource:
    """Every (shape, texture) pair of the 16 categories, ``repeats`` times: 256 * repeats images."""
    images, labels, names = [], [], []
    rng = np.random.default_rng(0)
    for r in range(repeats):
        for si, shape in enumerate(CATS):
            for ti, texture in enumerate(CATS):
                img = np.empty((3, SIZE, SIZE), dtype=np.uint8)
                img[0] = 8 + 15 * si
                img[1] = 8 + 15 * ti
                img[2] = rng.integers(0, 256, (SIZE, SIZE), dtype=np.uint8)
                images.append(img)
                labels.append(si if labelled else -1)
                names.append(f"{shape}{r + 1}-{texture}{(si + ti) % 10 + 1}.png")
    return ArraySource("tiny-cue-conflict", np.stack(images), labels, names)


def _category_logits(torch, idx):
    """(N,) category indices -> (N, 1000) logits: 10 on every class of the category, 0 elsewhere."""
    mapping = get_mapping()
    table = torch.zeros(len(CATS), 1000)
    for c, classes in enumerate(mapping.indices):
        table[c, list(classes)] = 10.0
    return table[idx]


def make_reader(channel: str):
    import torch
    from torch import nn

    class ChannelReader(nn.Module):
        """Answers the category coded in one channel: 'shape' (red),
        'texture' (green), or 'coin'."""

        def forward(self, x):
            shape = torch.round((x[:, 0, 0, 0] * 255 - 8) / 15).long()
            texture = torch.round((x[:, 1, 0, 0] * 255 - 8) / 15).long()
            if channel == "shape":
                idx = shape
            elif channel == "texture":
                idx = texture
            else:
                idx = torch.where(torch.rand(len(x)) < 0.5, shape, texture)
            return _category_logits(torch, idx)

    return ChannelReader()


def test_shape_reader_scores_one(torch_threads):
    seen = []
    res = run(
        "shape_bias",
        make_reader("shape"),
        cue_conflict_source(),
        batch_size=50,
        subj="shape-reader",
        progress=seen.append,
    )
    assert seen == [50, 100, 150, 200, 250, 256]
    assert res.measurement == "shape_bias" and res.version == probe.VERSION and res.seed == 0
    assert res.value == 1.0
    counts = {c.condition: (c.k, c.n) for c in res.conditions}
    assert counts == {"shape_bias": (240, 240), "shape": (240, 240), "texture": (0, 240)}
    assert len(res.records) == 256 and res.records[0]["subj"] == "shape-reader"
    assert [r["trial"] for r in res.records] == list(range(1, 257))


def test_texture_reader_scores_zero(torch_threads):
    res = run("shape_bias", make_reader("texture"), cue_conflict_source(), batch_size=64)
    assert res.value == 0.0
    assert {c.condition: (c.k, c.n) for c in res.conditions}["texture"] == (240, 240)


def test_coin_flip_reader_scores_half_within_its_interval(torch_threads):
    res = run(
        "shape_bias", make_reader("coin"), cue_conflict_source(repeats=4), batch_size=128, seed=0
    )
    cond = {c.condition: c for c in res.conditions}["shape_bias"]
    assert cond.n == 960  # every conflict trial is answered with its shape or texture class
    from repro.base.stats import binomial_interval

    lo, hi = binomial_interval(cond.k, cond.n)
    assert lo < 0.5 < hi
    assert 0.4 < res.value < 0.6
    again = run(
        "shape_bias", make_reader("coin"), cue_conflict_source(repeats=4), batch_size=128, seed=0
    )
    assert again.value == res.value  # the seed is the only source of randomness


def test_shape_class_is_parsed_from_the_name_without_labels(torch_threads):
    res = run(
        "shape_bias", make_reader("shape"), cue_conflict_source(labelled=False), batch_size=256
    )
    assert res.value == 1.0
    assert {r["category"] for r in res.records} == set(CATS)


def test_decisions_csv_rescores_to_the_same_counts(tmp_path, torch_threads, run_cli):
    res = run("shape_bias", make_reader("coin"), cue_conflict_source(), batch_size=64, subj="coin")
    path = probe.write_decisions_csv(res, tmp_path / "coin.csv")
    header, first = path.read_text().splitlines()[:2]
    assert header == "subj,session,trial,rt,object_response,category,condition,imagename"
    assert first.startswith("coin,1,1,NaN,") and first.endswith(
        ",airplane,NaN,airplane1-airplane1.png"
    )
    score = shape_bias(read_decisions_csv(path))
    cond = {c.condition: (c.k, c.n) for c in res.conditions}
    assert (score.shape, score.shape + score.texture) == cond["shape_bias"]
    assert score.shape_bias == res.value


def test_bad_names_and_labels_are_data_errors(torch_threads):
    src = cue_conflict_source()
    bad = ArraySource("bad-names", src.images[:2], [-1, -1], ["image1.png", "image2.png"])
    with pytest.raises(DataError, match=r"bad-names: image image1.png: cannot read a shape class"):
        run("shape_bias", make_reader("shape"), bad)
    wrong = ArraySource("wrong-label", src.images[:1], [3], ["airplane1-bicycle2.png"])
    with pytest.raises(
        DataError, match=r"label 3 \(bird\) disagrees with the shape class in its name \(airplane\)"
    ):
        run("shape_bias", make_reader("shape"), wrong)
    notex = ArraySource("no-texture", src.images[:1], [0], ["airplane1-unicorn2.png"])
    with pytest.raises(DataError, match="cannot read a texture class"):
        run("shape_bias", make_reader("shape"), notex)
