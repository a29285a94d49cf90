"""Data-major execution (repro.runner.data_major): on the CPU every record it writes is the
model-by-model path's, bit for bit (counts, values, columns, per-item records: all but the
timestamps and the durations), on tiny seeded CNNs over generated mini data, for every kind of
stimuli the probe loop makes (the images as they are, the parts of ImageNet-C, the spectral
filters, the critical band's noise synthesis, the cue-conflict images). The models are not perfect
classifiers, and not all wrong: their logits are live only on the classes the images read belong to,
scored by the mean colour against perturbed class templates: their ImageNet and ImageNet-C counts
lie strictly between 0 and n, and no measurement gives every model the same record (a record swapped
between models, or fed another model's stimuli, shows)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration
torch = pytest.importorskip("torch")

from repro.base.errors import ConfigError  # noqa: E402
from repro.measurements.registry import get as get_measurement  # noqa: E402
from repro.runner.data_major import run_sweep  # noqa: E402
from repro.runner.jobs import Environment, jobs_for  # noqa: E402
from repro.store.files import Store  # noqa: E402
from tests.store_records import records_without_timing  # noqa: E402

MODELS = ["tiny_a", "tiny_b", "tiny_c"]
SHARED = ["imagenet", "imagenet_c", "spectral", "critical_band", "shape_bias"]
COUNTED = ("imagenet", "imagenet_c")  # their counts lie strictly inside (0, n) for every model


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    from repro.datasets import make_mini

    return make_mini(
        tmp_path_factory.mktemp("mini"),
        per_class=1,
        datasets=["imagenet_val", "imagenet_c", "cue_conflict"],
    )


#: images per dataset (a declared subset, the same in every ImageNet-C condition): 2 CPU cores
SUBSET = {"imagenet_val": 6, "imagenet_c": 1, "cue_conflict": 16}


def _open(roots, name):
    from repro.datasets import open_dataset
    from repro.datasets.subset import Subset

    return open_dataset(name, roots[name], cache=False, subset=Subset(SUBSET[name]))


@pytest.fixture(scope="module")
def live_classes(roots):
    """{class: mean colour of its first image} over the images the tests read (6 classes)."""
    out = {}
    for name in ("imagenet_val", "imagenet_c"):
        for batch in _open(roots, name).batches(64):
            for x, y in zip(batch.images, batch.labels, strict=True):
                out.setdefault(int(y), (x / 255.0).mean(axis=(1, 2)))
    return out


class _Weak(torch.nn.Module):
    """A weak classifier: the live classes scored by how near the image's mean colour lies to its
    class's, the templates perturbed per model (seeded: some images go to the wrong class), plus a
    seeded TinyCNN's logits (so the spatial content counts too); every other
    class pushed down by 50."""

    def __init__(self, seed: int, live: dict):
        super().__init__()
        import numpy as np

        from repro.zoo.tiny import seeded_tiny_cnn

        self.net = seeded_tiny_cnn(4, seed)
        rng = np.random.default_rng(seed)
        classes = sorted(live)
        self.register_buffer("classes", torch.tensor(classes))
        self.register_buffer(
            "templates",
            torch.tensor(
                np.stack([live[c] + rng.normal(0, 0.1, 3) for c in classes]), dtype=torch.float32
            ),
        )

    def forward(self, x):
        out = self.net(x) - 50.0
        near = -200.0 * ((x.mean(dim=(2, 3))[:, None, :] - self.templates[None]) ** 2).sum(-1)
        return out.index_add(1, self.classes, near + 50.0)


def _env(roots, live, loads=None):
    def load(name, device):
        if loads is not None:
            loads.append(name)
        return _Weak(MODELS.index(name) + 11, live).to(device).eval()

    return Environment(
        load_model=load, open_source=lambda ds: _open(roots, ds), measurement=get_measurement
    )


def test_records_equal_model_major_bit_for_bit(roots, live_classes, tmp_path):
    jobs = jobs_for(MODELS, SHARED)
    stores = {}
    for order in ("model-major", "data-major"):
        store = Store(tmp_path / order)
        summary = run_sweep(
            jobs, store, batch_size=8, env=_env(roots, live_classes), progress=False, order=order
        )
        assert not summary.failed, [
            (j, store.read(j.model, j.measurement).error) for j in summary.failed
        ]
        assert len(summary.ran) == len(jobs)
        stores[order] = records_without_timing(tmp_path / order)
    a, b = stores["model-major"], stores["data-major"]
    assert sorted(a) == sorted(b) and len(a) >= len(jobs)
    for key in a:
        assert a[key] == b[key], key
    # the test can tell: counts strictly inside (0, n), and the models'
    # records differ from each other
    store = Store(tmp_path / "model-major")
    for meas in SHARED:
        per_model = set()
        for model in MODELS:
            rec = store.read(model, meas)
            k = sum(c["k"] for c in rec.conditions)
            n = sum(c["n"] for c in rec.conditions)
            if meas in COUNTED:
                assert 0 < k < n, (model, meas, k, n)
            items = store.records_path(model, meas)
            per_model.add(
                json.dumps([rec.conditions, rec.values], sort_keys=True, default=str)
                + (items.read_bytes().hex() if items.exists() else "")
            )
        if (
            meas != "shape_bias"
        ):  # its 16-class decisions: the weak models' six live classes decide alike
            assert len(per_model) > 1, meas  # not every model the same records


def test_resumes_and_loads_only_the_models_still_needed(roots, live_classes, tmp_path):
    store = Store(tmp_path / "s")
    run_sweep(
        jobs_for(MODELS[:1], ["imagenet"]),
        store,
        batch_size=8,
        env=_env(roots, live_classes),
        progress=False,
        order="data-major",
    )
    loads: list[str] = []
    summary = run_sweep(
        jobs_for(MODELS, ["imagenet"]),
        store,
        batch_size=8,
        env=_env(roots, live_classes, loads),
        progress=False,
        order="data-major",
    )
    assert [str(j) for j in summary.skipped] == ["tiny_a x imagenet"]
    assert sorted(str(j) for j in summary.ran) == ["tiny_b x imagenet", "tiny_c x imagenet"]
    assert (
        loads.count("tiny_b") == 1 and loads.count("tiny_c") == 1
    )  # each loaded once for the group


def test_a_failing_model_gets_its_failed_record_and_the_others_go_on(roots, live_classes, tmp_path):
    env = _env(roots, live_classes)
    good = env.load_model

    def load(name, device):
        if name == "tiny_b":
            raise RuntimeError("cannot load tiny_b")
        return good(name, device)

    env.load_model = load
    store = Store(tmp_path / "s")
    summary = run_sweep(
        jobs_for(MODELS, ["spectral"]),
        store,
        batch_size=8,
        env=env,
        progress=False,
        order="data-major",
    )
    assert [str(j) for j in summary.failed] == ["tiny_b x spectral"]
    assert store.read("tiny_b", "spectral").error["message"] == "cannot load tiny_b"
    assert store.read("tiny_a", "spectral").ok and store.read("tiny_c", "spectral").ok


def test_memory_checked_before_anything_runs(roots, live_classes, tmp_path):
    from repro.runner import data_major
    from repro.runner.jobs import Sweep, SweepSummary, _Loaded
    from repro.runner.progress import NoProgress

    store = Store(tmp_path / "s")
    env = _env(roots, live_classes)
    spec = get_measurement("imagenet")
    sweep = Sweep(
        store,
        {"imagenet": spec},
        {"imagenet": spec.version()},
        _Loaded(env, "cpu"),
        False,
        NoProgress(),
        SweepSummary(),
    )
    one = data_major.resident_bytes(_Weak(1, live_classes))
    with pytest.raises(
        ConfigError,
        match=r"the 3 models of imagenet \(tiny_a, tiny_b, tiny_c\) do not fit on cpu.*"
        r"after 2 of them.*--order model-major",
    ):
        data_major.run_data_major(
            jobs_for(MODELS, ["imagenet"]), sweep, device="cpu", batch_size=8, budget=int(1.5 * one)
        )
    assert not list((tmp_path / "s").rglob("*.json"))  # nothing written, every lock released
    assert all(store.lock(m, "imagenet").acquire() for m in MODELS)


def test_only_model_independent_stimuli_are_grouped():
    from repro.runner.data_major import shares_inputs

    assert [n for n in SHARED + ["pgd_low"] if not shares_inputs(get_measurement(n))] == ["pgd_low"]
