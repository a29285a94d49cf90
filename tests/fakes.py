"""Fakes for the runner tests: a tiny model, in-memory image sources and a probe with the
interface of the real ones, plus an ``Environment`` factory the CLI and submitit subprocesses
can load by name (``--env tests.fakes:environment``).

Behaviour is controlled by environment variables so that subprocesses see it too:
``FAKE_FAIL_MODELS`` (comma list: loading these models raises), ``FAKE_FAIL_MEASUREMENTS``
(these probes raise), ``FAKE_SLEEP`` (seconds per job, to interrupt a sweep part-way;
``FAKE_SLEEP_MODELS``, e.g. ``m2:60,m3:60``, overrides it per model, so a test can interrupt at a
known job however loaded the machine is),
``FAKE_PROBE_VERSION`` (the probe's VERSION), ``FAKE_RUN_LOG`` (a file each probe run appends
``<pid> <dataset> <model> <CUDA_VISIBLE_DEVICES>`` to, so a test can count how often each job ran).
"""

from __future__ import annotations

import os
import time

import numpy as np

from repro.base.results import ConditionCount, ProbeResult
from repro.datasets.base import ArraySource
from repro.measurements.registry import Measurement
from repro.runner.jobs import Environment

VERSION = os.environ.get("FAKE_PROBE_VERSION", "1")
N_ITEMS = 24


def make_model(name: str, device: str = "cpu"):
    """A deterministic 'model' (per name): a linear map from the mean colour to 1000 logits."""
    import torch

    if name in os.environ.get("FAKE_FAIL_MODELS", "").split(","):
        raise RuntimeError(f"cannot load {name} (fake failure)")
    seed = sum(map(ord, name))
    gen = torch.Generator().manual_seed(seed)

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(3, 1000, generator=gen))

        def forward(self, x):
            return x.mean(dim=(2, 3)) @ self.w

    model = Tiny().to(device).eval()
    model.tag = name
    return model


def make_source(dataset: str):
    rng = np.random.default_rng(sum(map(ord, dataset)))
    images = rng.integers(0, 256, size=(N_ITEMS, 3, 8, 8), dtype=np.uint8)
    labels = rng.integers(0, 5, size=N_ITEMS)
    return ArraySource(dataset, images, labels, [f"img{i:03d}.png" for i in range(N_ITEMS)])


def classify(
    model, source, *, device="cpu", batch_size=8, seed=0, progress=None, top=5, **kwargs
) -> ProbeResult:
    """top-1 restricted to the first ``top`` classes (so random models get non-trivial counts)."""
    import torch

    if source.name in os.environ.get("FAKE_FAIL_MEASUREMENTS", "").split(","):
        raise ValueError(f"probe failure on {source.name} (fake)")
    per_model = dict(
        item.split(":") for item in os.environ.get("FAKE_SLEEP_MODELS", "").split(",") if item
    )
    time.sleep(float(per_model.get(getattr(model, "tag", None), os.environ.get("FAKE_SLEEP", "0"))))
    log = os.environ.get("FAKE_RUN_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write(
                f"{os.getpid()} {source.name} {model.tag} "
                f"{os.environ.get('CUDA_VISIBLE_DEVICES', '-')}\n"
            )
    k = n = 0
    records = []
    with torch.no_grad():
        for batch in source.batches(batch_size):
            x = torch.from_numpy(batch.images).float().div(255).to(device)
            pred = model(x)[:, :top].argmax(1).cpu().numpy()
            k += int((pred == batch.labels).sum())
            n += len(pred)
            records += [
                {"name": nm, "label": int(lb), "prediction": int(p)}
                for nm, lb, p in zip(batch.names, batch.labels, pred, strict=True)
            ]
            if progress:
                progress(n)  # the running count, as the real probes report it
    # a top5 condition too, as repro.benchmarks.classify returns: the summarizer must pick top1
    return ProbeResult(
        "classify",
        VERSION,
        seed,
        [ConditionCount("top1", k, n), ConditionCount("top5", n, n)],
        records=records,
    )


def summarize(result, ctx):
    from repro.measurements.columns import imagenet

    return imagenet(result, ctx)


MEASUREMENTS = {
    "fake_a": Measurement(
        "fake_a",
        "data_a",
        "tests.fakes:summarize",
        "fake accuracy A",
        run="tests.fakes:classify",
        columns=("top1_acc/imagenet",),
    ),
    "fake_b": Measurement(
        "fake_b",
        "data_b",
        "tests.fakes:summarize",
        "fake accuracy B",
        run="tests.fakes:classify",
        columns=("top1_acc/imagenet",),
    ),
    "fake_c": Measurement(
        "fake_c",
        "data_c",
        "tests.fakes:summarize",
        "fake accuracy C",
        run="tests.fakes:classify",
        columns=("top1_acc/imagenet",),
    ),
}


def environment() -> Environment:
    log = os.environ.get("FAKE_RUN_LOG")
    if log:  # each process that builds the environment (a worker) says which GPU it sees
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} <start> - {os.environ.get('CUDA_VISIBLE_DEVICES', '-')}\n")
    return Environment(
        load_model=make_model, open_source=make_source, measurement=MEASUREMENTS.__getitem__
    )
