"""Critical-band probe (repro.probes.critical_band): the 29 conditions and the accuracy grid the
threshold rule reads (repro.scoring.critical_band), and run(): counts per condition, seed and
version recorded, counts that do not depend on the batch size, undefined fits reported as None,
unlabelled data refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.base.errors import DataError
from repro.base.results import ConditionCount
from repro.datasets.base import ArraySource
from repro.measurements.loop import run
from repro.probes import critical_band as cbp
from repro.scoring import critical_band as cb

pytestmark = pytest.mark.unit


def test_the_grid_scorers_mapping_names_the_probes_conditions():
    """``score critical-band --grid`` maps the authors' 35 conditions onto
    these 29, in this order."""
    from repro.base.stats import Count
    from repro.scoring.critical_band_grid import DecisionGrid, parse_condition

    cells = {parse_condition(c): Count(1, 2) for c, _, _ in cbp.conditions()}
    assert [c for c, _ in DecisionGrid(cells).suite_counts()] == [c for c, _, _ in cbp.conditions()]


def test_conditions_are_the_studys_29():
    conds = cb.conditions()
    assert len(conds) == 29
    assert conds[0] == ("sd=0", None, 0.0)
    assert conds[1] == ("f=0/sd=0.02", 0, 0.02) and conds[-1] == ("f=6/sd=0.16", 6, 0.16)
    assert len({c for c, _, _ in conds}) == 29


def test_accuracy_grid_layout():
    counts = [ConditionCount("sd=0", 90, 100)]
    for cond, band, sd in cb.conditions()[1:]:
        counts.append(ConditionCount(cond, int(band * 10 + sd * 100), 100))
    grid = cb.accuracy_grid(counts)
    assert grid.shape == (5, 7)
    np.testing.assert_allclose(grid[0], 0.9)
    assert grid[4, 3] == pytest.approx((30 + 16) / 100)  # SD 0.16, band 3
    assert grid[1, 0] == pytest.approx(2 / 100)  # SD 0.02, band 0


class PatchClassifier(torch.nn.Module):
    """Class = the brightest of 10 vertical strips (channel 0): depends on the noise."""

    def forward(self, x):
        strips = x[:, 0, :, :220].reshape(x.shape[0], 224, 10, 22).mean(dim=(1, 3))
        logits = torch.full((x.shape[0], 1000), -1e9)
        logits[:, :10] = strips
        return logits


def _source(n=3, labels=None):
    rng = np.random.default_rng(5)
    images = rng.integers(60, 200, (n, 3, 224, 224), dtype=np.uint8)
    for i in range(n):  # strip i is brighter
        images[i, :, :, 22 * i : 22 * (i + 1)] = 230
    return ArraySource(
        "strips",
        images,
        list(range(n)) if labels is None else labels,
        [f"s{i}.png" for i in range(n)],
    )


def test_run_counts_seed_and_batch_size_invariance(torch_threads):
    one = run("critical_band", PatchClassifier(), _source(), batch_size=1, seed=11)
    three = run("critical_band", PatchClassifier(), _source(), batch_size=3, seed=11)
    assert [(c.condition, c.k, c.n) for c in one.conditions] == [
        (c.condition, c.k, c.n) for c in three.conditions
    ]
    assert one.measurement == "critical_band" and one.version == cbp.VERSION and one.seed == 11
    assert all(c.n == 3 for c in one.conditions)
    clean = one.conditions[0]
    assert clean.condition == "sd=0" and clean.k == 3
    # the strongest low-frequency noise breaks the strip classifier somewhere
    assert min(c.k for c in one.conditions) < 3
    for key in ("bw", "cf", "pns", "bw_norm", "cf_norm", "pns_norm"):
        assert key in one.values
    assert one.value == one.values["cf_norm"]


def test_flat_thresholds_give_undefined_fit(torch_threads):
    class Constant(torch.nn.Module):
        def forward(self, x):
            return torch.zeros(x.shape[0], 1000)

    res = run("critical_band", Constant(), _source(2, labels=[0, 0]), batch_size=2)
    assert all(c.k == 2 for c in res.conditions)  # always class 0, always right
    assert [res.values[f"threshold_norm/f={f}"] for f in range(7)] == [0.0] * 7
    assert (
        res.values["cf_norm"] is None and res.value is None
    )  # degenerate: undefined, not a number


def test_unlabelled_images_are_refused(torch_threads):
    with pytest.raises(DataError, match="without a label"):
        run("critical_band", PatchClassifier(), _source(2, labels=[-1, 0]), batch_size=2)


def test_noise_generator_is_selectable_and_recorded(torch_threads):
    from repro.base.errors import ConfigError

    new = run("critical_band", PatchClassifier(), _source(), batch_size=3, seed=11)
    old = run("critical_band", PatchClassifier(), _source(), batch_size=3, seed=11, noise="pcg64")
    assert new.version == "4" and old.version == "3"
    assert [c.n for c in new.conditions] == [c.n for c in old.conditions]
    with pytest.raises(ConfigError, match="noise"):
        run("critical_band", PatchClassifier(), _source(), noise="threefry")


def test_one_condition_refuses_an_unknown_condition_by_name():
    images = torch.zeros((1, 3, 8, 8), dtype=torch.uint8)
    with pytest.raises(ValueError) as bad:
        cbp.one_condition(images, ["a.png"], "f=9/sd=0.5", 0, torch.device("cpu"))
    assert str(bad.value) == "unknown critical-band condition 'f=9/sd=0.5'"


@pytest.mark.parametrize("shape", [(160, 224), (224, 160)])
def test_one_condition_is_the_suites_stimulus_on_non_square_images(shape, torch_threads):
    """``one_condition`` gives exactly ``stimuli``'s image for the condition on non-square
    images (rows and columns not swapped)."""
    rng = np.random.default_rng(3)
    gray = rng.integers(0, 256, (2, 1, *shape), dtype=np.uint8)
    images = torch.from_numpy(np.repeat(gray, 3, axis=1))
    names = ["a.png", "b.png"]
    cpu = torch.device("cpu")
    every = dict(cbp.stimuli(images, names, 5, cpu))
    for condition in ("f=1/sd=0.16", "f=4/sd=0.08", "sd=0"):
        got = cbp.one_condition(images, names, condition, 5, cpu)
        assert got.shape == (2, 3, *shape)
        assert torch.equal(got, every[condition]), condition


def test_one_condition_redraws_from_the_images_own_philox_stream(monkeypatch, torch_threads):
    """A pixel whose noise is too large for either bound is redrawn from the (seed, image,
    condition) Philox stream. At SD <= 0.16 that is rare (noise beyond 1), so the white field is
    scaled by 8 here: every such redraw must come from that stream."""
    from repro.probes import noise as nz

    shape, names, cpu = (160, 192), ["a.png", "b.png"], torch.device("cpu")
    condition = "f=2/sd=0.16"
    images = torch.from_numpy(
        np.repeat(np.random.default_rng(4).integers(0, 256, (2, 1, *shape), dtype=np.uint8), 3, 1)
    )
    real = nz.PhiloxNoise.condition

    def loud(self, name):
        gen, white = real(self, name)
        return gen, white * 8

    monkeypatch.setattr(nz.PhiloxNoise, "condition", loud)
    got = cbp.one_condition(images, names, condition, 5, cpu)
    base = nz.reduce_contrast(nz.grayscale(images), dtype=torch.float32)
    gen, white = nz.PhiloxNoise(5, names, [condition], shape, cpu).condition(condition)
    want = nz.model_input(nz.noisy_images(base, 2, [0.16], [white], [gen])[0])
    assert torch.equal(got, want)
    with pytest.raises(RuntimeError, match="needs a redraw"):  # (redraws were needed)
        nz.noisy_images(base, 2, [0.16], [white], None)


def test_the_makers_stimuli_are_stimuli_of_the_chosen_generator(torch_threads):
    """The probe loop's maker yields ``stimuli`` of the noise generator it was given (pcg64 is
    version 3's, other noise than philox's); an unknown generator is refused by name."""
    from repro.base.errors import ConfigError
    from repro.datasets.base import ImageBatch

    rng = np.random.default_rng(2)
    images = np.repeat(rng.integers(0, 256, (2, 1, 160, 160), dtype=np.uint8), 3, axis=1)
    batch = ImageBatch(images, np.array([0, 1]), ["a.png", "b.png"])
    cpu = torch.device("cpu")
    for noise, version in (("pcg64", "3"), ("philox", "4")):
        got_version, make = cbp.maker(seed=7, noise=noise)
        assert got_version == version
        got = {name: x.clone() for name, x in make(batch, None, device=cpu)}
        want = dict(cbp.stimuli(torch.from_numpy(images), batch.names, 7, cpu, noise=noise))
        assert got.keys() == want.keys()
        assert all(torch.equal(got[c], want[c]) for c in want), noise
    pcg = dict(cbp.stimuli(torch.from_numpy(images), batch.names, 7, cpu, noise="pcg64"))
    assert not torch.equal(pcg["f=3/sd=0.04"], want["f=3/sd=0.04"])  # the generators differ
    with pytest.raises(ConfigError) as bad:
        cbp.maker(seed=7, noise="threefry")
    assert str(bad.value) == "noise: expected one of philox, pcg64, got 'threefry'"


def test_a_float64_synthesis_is_done_in_float64(torch_threads):
    """``dtype=torch.float64`` synthesises in float64 (the model input is float32 either way):
    the contrast-reduced image is the float64 one, rounded once, not the float32 one."""
    from repro.probes import noise as nz

    rng = np.random.default_rng(1)
    images = torch.from_numpy(
        np.repeat(rng.integers(0, 256, (2, 1, 160, 160), dtype=np.uint8), 3, axis=1)
    )
    cpu = torch.device("cpu")
    got = dict(cbp.stimuli(images, ["a", "b"], 3, cpu, dtype=torch.float64))["sd=0"]
    want = nz.model_input(nz.reduce_contrast(nz.grayscale(images), dtype=torch.float64))
    single = nz.model_input(nz.reduce_contrast(nz.grayscale(images), dtype=torch.float32))
    assert got.dtype == torch.float32
    assert torch.equal(got, want.to(torch.float32)) and not torch.equal(got, single)


def test_stimuli_refuse_an_unknown_noise_generator_by_name():
    from repro.base.errors import ConfigError

    images = torch.zeros((1, 3, 160, 160), dtype=torch.uint8)
    with pytest.raises(ConfigError) as bad:
        dict(cbp.stimuli(images, ["a.png"], 0, torch.device("cpu"), noise="threefry"))
    assert str(bad.value) == "noise: expected one of philox, pcg64, got 'threefry'"
