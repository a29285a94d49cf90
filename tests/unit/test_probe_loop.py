"""The probe loop (repro.measurements.loop): the batch sources (parts one after the other, images
regrouped by condition), one Probe per model fed the same batches giving what a run per model
gives, the model's state restored even when a batch fails, every pass observed in the stimuli's
order, an Environment's own run function handed over, and parameters no piece takes refused."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from repro.base.errors import ConfigError, DataError  # noqa: E402
from repro.datasets.base import ArraySource  # noqa: E402
from repro.datasets.open import ConcatSource  # noqa: E402
from repro.measurements import loop  # noqa: E402
from repro.measurements.registry import Measurement, get  # noqa: E402
from repro.scoring import spectral as sc  # noqa: E402

pytestmark = pytest.mark.unit


def _images(n: int, size: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 3, size, size), dtype=np.uint8)


class Readout(torch.nn.Module):
    """A seeded linear readout of the 4x4-pooled image: decisions that move with the stimulus."""

    def __init__(self, seed: int):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.fc = torch.nn.Linear(48, 1000)
            torch.nn.init.normal_(self.fc.weight, 0, 4.0)

    def forward(self, x):
        return self.fc(torch.nn.functional.adaptive_avg_pool2d(x, 4).flatten(1) - 0.45)


def _labelled(model: torch.nn.Module, images: np.ndarray, name: str = "src") -> ArraySource:
    """Labels: the model's own clean decision on even images, class 0 on odd ones."""
    with torch.no_grad():
        own = model(torch.from_numpy(images).float() / 255).argmax(1).numpy()
    labels = np.where(np.arange(len(images)) % 2 == 0, own, 0)
    return ArraySource(name, images, labels, [f"im{i:03d}.png" for i in range(len(images))])


def test_parts_come_one_after_the_other_and_are_released():
    released = []

    class Part(ArraySource):
        def release(self):
            released.append(self.name)

    imgs = _images(5)
    parts = {
        "fog/1": Part("a", imgs[:3], [0, 1, 2], list("abc")),
        "fog/2": Part("b", imgs[3:], [3, 4], list("de")),
    }
    got = [(part, batch.names) for part, batch in loop.batches(ConcatSource("c", parts), 2, parts)]
    assert got == [("fog/1", ["a", "b"]), ("fog/1", ["c"]), ("fog/2", ["d", "e"])]
    assert released == ["a", "b"]
    assert [p for p, _ in loop.batches(parts["fog/1"], 2)] == [None, None]
    with pytest.raises(ConfigError, match="batch_size: expected a positive integer, got 0"):
        list(loop.batches(parts["fog/1"], 0))


def test_by_condition_regroups_full_batches_first_then_the_rest():
    imgs = _images(7)
    src = ArraySource("s", imgs, list(range(7)), [f"n{i}" for i in range(7)])
    cond = {"n0": "a", "n1": "b", "n2": "a", "n4": "a", "n5": "b", "n6": "c"}  # n3 is skipped
    got = [(c, b.names, b.labels.tolist()) for c, b in loop.by_condition(src, cond, 2)]
    assert got == [
        ("a", ["n0", "n2"], [0, 2]),
        ("b", ["n1", "n5"], [1, 5]),
        ("a", ["n4"], [4]),
        ("c", ["n6"], [6]),
    ]
    first = next(b for c, b in loop.by_condition(src, cond, 2))
    np.testing.assert_array_equal(first.images, imgs[[0, 2]])


def test_probes_of_two_models_fed_the_same_batches_give_what_a_run_per_model_gives(torch_threads):
    """A sweep that decodes each batch once: one Probe per model, ``step`` on every batch; and with
    stimuli made once (the spectral filters do not depend on the model), ``take`` for each."""
    imgs = _images(6)
    models = [Readout(1), Readout(2)]
    src = _labelled(models[0], imgs)
    alone = [loop.run("spectral", m, src, batch_size=4).as_json() for m in models]
    probes = [loop.Probe(get("spectral"), m, src, batch_size=4) for m in models]
    for p in probes:
        p.__enter__()
    for part, batch in probes[0].batches(src):
        for p in probes:
            p.step(batch, part)
    assert [p.result().as_json() for p in probes] == alone
    shared = [loop.Probe(get("spectral"), m, src, batch_size=4) for m in models]
    for p in shared:
        p.__enter__()
    for part, batch in shared[0].batches(src):
        labels = shared[0].rule.labels(batch)
        for condition, x in shared[0].stimuli(
            batch, part, model=None, labels=labels, device=shared[0].device
        ):
            for p in shared:
                p.take(condition, batch, labels, x)
    for p in probes + shared:
        p.__exit__(None, None, None)
    assert [p.result().as_json() for p in shared] == alone
    assert alone[0] != alone[1] and {c["condition"] for c in alone[0]["conditions"]} == set(
        sc.stimulus_conditions()
    )


def test_every_pass_is_observed_in_the_stimuli_order(torch_threads):
    src = _labelled(Readout(1), _images(3))
    seen = []
    res = loop.run(
        "spectral",
        Readout(1),
        src,
        batch_size=2,
        observe=lambda cond, batch, logits, decisions: seen.append(
            (cond, len(batch.names), decisions.shape)
        ),
    )
    assert len(seen) == 2 * 23 and seen[0] == ("clean", 2, (2,)) and seen[23] == ("clean", 1, (1,))
    assert sorted(c for c, _, _ in seen[:23]) == sorted(sc.stimulus_conditions())
    # the counts are in the measurement's order, whatever order the filters are made in
    assert tuple(c.condition for c in res.conditions) == sc.stimulus_conditions()


def test_the_models_state_is_restored_even_when_a_batch_fails(torch_threads):
    model = Readout(1).train()
    imgs = _images(4)
    bad = ArraySource(
        "bad", imgs, [1, 2, -1, 3], list("abcd")
    )  # the second batch has an unlabelled item
    with pytest.raises(DataError, match="bad: items without a label"):
        loop.run("spectral", model, bad, batch_size=2)
    assert model.training and all(p.requires_grad for p in model.parameters())
    seen = []
    loop.run(
        "imagenet",
        model,
        bad,
        batch_size=2,
        observe=lambda *a: seen.append(torch.is_grad_enabled()),
    )
    assert seen == [False, False] and model.training  # no gradients inside, state restored after


def test_an_environments_own_run_function_is_handed_the_call():
    calls = []

    def own(model, source, *, device, batch_size, seed, progress, **kwargs):
        calls.append((model, source, device, batch_size, seed, kwargs))
        return "result"

    import sys
    import types

    mod = types.ModuleType("repro_test_own_run")
    mod.run = own
    sys.modules["repro_test_own_run"] = mod
    try:
        m = Measurement(
            "mine", "d", "m:f", "d", run="repro_test_own_run:run", kwargs={"k": 1}, seed=5
        )
        assert loop.run(m, "model", "source", batch_size=3, extra=2) == "result"
    finally:
        del sys.modules["repro_test_own_run"]
    assert calls == [("model", "source", "cpu", 3, 5, {"k": 1, "extra": 2})]


def test_a_parameter_no_piece_takes_is_refused_and_results_carry_their_measurement(torch_threads):
    src = _labelled(Readout(1), _images(2, size=8))
    with pytest.raises(ConfigError, match=r"spectral: unknown parameter\(s\) nosie"):
        loop.run("spectral", Readout(1), src, nosie="pcg64")
    res = loop.run("imagenet", Readout(1), src)
    assert (res.measurement, res.version, res.seed) == (
        "imagenet",
        "1",
        None,
    )  # deterministic: no seed
    assert [c.condition for c in res.conditions] == ["top1", "top5"] and len(res.records) == 2
