"""Data-major against model-major execution (repro.runner.data_major): one sweep of 3 and of 8
models over a generated ImageNet-C-like set (224 x 224 JPEGs of noisy patterns, quality 90, in
corruption/severity parts, decoded on every pass as ImageNet-C is: its crops do not fit a
device box's disk), through the runner as ``measure`` runs it, records written. Both orders are
measured in the same run; the data-major / model-major ratio of the fastest rounds is printed at
the end, and the two orders' records are checked equal (bit for bit but the timestamps).

The models are tiny seeded CNNs (about 3 MFLOPs per image): decoding dominates, as it does for
a fast GPU next to its CPU cores, so the ratio is the most data-major saves (about 1 / models);
on a CPU with a large model the forward passes dominate and the ratio approaches 1.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.store_records import records_without_timing

pytestmark = pytest.mark.bench

CONDITIONS = ("gaussian_noise/1", "gaussian_noise/3", "shot_noise/2", "shot_noise/5")
PER_CONDITION = 24
MODEL_COUNTS = (3, 8)
RESULTS: dict[tuple[int, str], dict[str, float]] = {}
RECORDS: dict[tuple[int, str], dict[str, object]] = {}


def summarize(result, ctx):
    """The pooled top-1 count over the parts (the set has 4 of ImageNet-C's 95 cells, too
    few for its summarizer)."""
    from repro.store.record import ColumnValue

    k, n = sum(c.k for c in result.conditions), sum(c.n for c in result.conditions)
    return [ColumnValue.from_count("top1_acc/imagenet-c", k, n)]


def _source(root):
    from repro.datasets.decode import FileSource
    from repro.datasets.layout import Item
    from repro.datasets.open import ConcatSource
    from repro.datasets.specs import AS_IS_224
    from repro.planner.decode_rate import generated_jpegs

    rng = np.random.default_rng(0)
    parts = {}
    for i, cond in enumerate(CONDITIONS):
        paths = generated_jpegs(
            root / cond, PER_CONDITION, (224, 224), seed=i, prefix="ILSVRC2012_val_"
        )
        items = [Item(str(p), int(rng.integers(0, 1000)), f"{cond}/{p.name}") for p in paths]
        parts[cond] = FileSource("c_like", items, AS_IS_224, root=str(root))
    return ConcatSource("c_like", parts, root=str(root))


@pytest.fixture(scope="module")
def setting(tmp_path_factory, request):
    from repro.measurements.registry import get
    from repro.runner.jobs import Environment
    from repro.zoo.tiny import seeded_tiny_cnn

    top = tmp_path_factory.mktemp("data-major")
    source = _source(top / "jpegs")
    spec = replace(
        get("imagenet_c"), name="c_like", dataset="c_like", summarize=f"{__name__}:summarize"
    )
    env = Environment(
        load_model=lambda name, device: seeded_tiny_cnn(8, int(name[1:])).eval(),
        open_source=lambda dataset: source,
        measurement=lambda name: spec,
    )
    yield env, top
    capture = request.config.pluginmanager.getplugin("capturemanager")
    for n in MODEL_COUNTS:
        r = RESULTS.get((n, "data-major")), RESULTS.get((n, "model-major"))
        if r[0] and r[1]:
            line = (
                f"data-major / model-major, {n} models over "
                f"{len(CONDITIONS) * PER_CONDITION} generated 224 px "
                f"JPEGs in {len(CONDITIONS)} parts (decode included): "
                f"{r[0]['min'] / r[1]['min']:.2f} on the "
                f"fastest of the rounds (data-major {r[0]['min']:.2f} s, model-major "
                f"{r[1]['min']:.2f} s), "
                f"{r[0]['mean'] / r[1]['mean']:.2f} on the mean"
            )
            with capture.global_and_fixture_disabled():
                print("\n" + line)


@pytest.mark.parametrize("n_models", MODEL_COUNTS)
@pytest.mark.parametrize("order", ["model-major", "data-major"])
def test_sweep_speed(benchmark, setting, n_models, order, torch_threads):
    from repro.runner.data_major import run_sweep
    from repro.runner.jobs import jobs_for
    from repro.store.files import Store

    env, top = setting
    jobs = jobs_for([f"m{i}" for i in range(n_models)], ["c_like"])
    rounds = iter(range(1000))

    def fresh():
        return (Store(top / f"{order}-{n_models}-{next(rounds)}"),), {}

    def sweep(store):
        summary = run_sweep(jobs, store, batch_size=32, env=env, progress=False, order=order)
        assert len(summary.ran) == n_models and not summary.failed
        return store

    store = benchmark.pedantic(sweep, setup=fresh, rounds=3, iterations=1, warmup_rounds=0)
    RESULTS[(n_models, order)] = {
        "min": benchmark.stats.stats.min,
        "mean": benchmark.stats.stats.mean,
    }
    RECORDS[(n_models, order)] = records_without_timing(store.root)
    other = RECORDS.get((n_models, "model-major" if order == "data-major" else "data-major"))
    if other is not None:
        assert RECORDS[(n_models, order)] == other  # the same records, whichever the order
        a, b = RESULTS[(n_models, "data-major")], RESULTS[(n_models, "model-major")]
        benchmark.extra_info["data_major_over_model_major"] = round(a["min"] / b["min"], 3)
