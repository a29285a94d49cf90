"""The `real` tier's one measurement of what ships: the jobs ``python -m repro reproduce`` runs
with no dataset configured (``repro.runner.pipeline.plan``: EfficientNet-Lite0 x shape bias and
the pre-made critical band, on the stimuli of the data directory), run through the runner into a
store laid out as the command's default (``<folder>/runs/store``), with every forward pass
recorded (``tests.real.measure.Recorder``: logits, input range, pixel hash).

The snapshot test (decision by decision against ``expected/real/efficientnet_lite0.json``) and
the REPORT.md test (the committed report is what ``reproduce`` writes from this store) share it,
so the tier measures each image once. Under pytest-xdist the workers share one folder: the first
to take its lock (``fcntl.flock``, released by the kernel when the holder exits) measures, the
others wait on the lock and read what it wrote.
"""

from __future__ import annotations

import fcntl
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

DONE = "done.json"
STUDY = "gavrikov2024"


@dataclass
class Recording:
    measurement: str
    names: list[str]  # the source's items, in the order the probe saw them
    logits: np.ndarray
    input_range: tuple[float, float]
    pixels_sha256: str


@dataclass
class Shipped:
    folder: Path
    plan: Any  # repro.runner.pipeline.MeasurePlan (shipped mode)
    recordings: dict[str, Recording]

    @property
    def store(self) -> Path:
        return self.folder / "runs" / "store"

    def record(self, measurement: str) -> Any:
        from repro.store.files import Store

        rec = Store(self.store).read(self.plan.models[0], measurement)
        assert rec is not None and rec.ok, f"{measurement}: no ok record in {self.store}"
        return rec

    def as_run(self, measurement: str) -> Any:
        """The recording in the shape of ``tests.real.measure.Run`` (result.records from the
        store's per-item rows, result.conditions from the record's counts)."""
        from repro.store.files import Store

        rec = self.record(measurement)
        r = self.recordings[measurement]
        conditions = [
            SimpleNamespace(condition=c["condition"], k=int(c["k"]), n=int(c["n"]))
            for c in rec.conditions
        ]
        result = SimpleNamespace(records=Store(self.store).read_items(rec), conditions=conditions)
        return SimpleNamespace(
            result=result,
            names=r.names,
            logits=r.logits,
            input_range=r.input_range,
            pixels_sha256=r.pixels_sha256,
        )


def _plan(folder: Path, data_dir: Path) -> Any:
    from repro.base.study import get_study
    from repro.runner import pipeline

    plan = pipeline.plan(get_study(STUDY), store=folder / "runs" / "store", data_dir=data_dir)
    if plan is None or not plan.shipped:
        raise RuntimeError(
            "reproduce would not measure the shipped stimuli here (a dataset root is configured: "
            "unset REPRO_<NAME>_ROOT / [datasets] for the real tier)"
        )
    return plan


def _measure(folder: Path, plan: Any, data_dir: Path) -> None:
    from repro.datasets import open_dataset
    from repro.runner.jobs import Environment, jobs_for, run_sweep
    from repro.store.files import Store
    from repro.zoo import load_model
    from tests.real.measure import Recorder

    for measurement in plan.measurements:  # one sweep each: one recorder per job
        recorders: list[Recorder] = []
        names: list[str] = []

        def load(name: str, device: str, recorders: list[Recorder] = recorders) -> Recorder:
            model = load_model(name, device=device)
            rec = Recorder(model)
            rec.weights_sha256 = (
                model.weights_sha256
            )  # the job's identity is the model's, not the wrapper's
            recorders.append(rec)
            return rec

        def open_source(dataset: str, names: list[str] = names) -> Any:
            source = open_dataset(dataset, data_dir=data_dir)
            names[:] = list(source.names)
            return source

        env = Environment(load_model=load, open_source=open_source, data_dir=data_dir)
        summary = run_sweep(
            jobs_for(plan.models, [measurement]),
            Store(plan.store),
            device=plan.device,
            batch_size=plan.batch_size,
            env=env,
            progress=False,
        )
        if summary.failed or len(summary.ran) != 1 or len(recorders) != 1:
            raise RuntimeError(f"{measurement}: {summary.line()}")
        rec = recorders[0]
        np.save(folder / f"{measurement}.logits.npy", rec.all_logits())
        (folder / f"{measurement}.json").write_text(
            json.dumps(
                {
                    "names": names,
                    "input_range": [rec.lo, rec.hi],
                    "pixels_sha256": rec.pixels.hexdigest(),
                }
            )
        )


def shipped(folder: Path, data_dir: Path) -> Shipped:
    """Measure into ``folder`` once (see the module docstring) and return what was measured."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # blocks until the worker that measures has finished
        plan = _plan(folder, data_dir)
        if not (folder / DONE).is_file():
            import shutil

            shutil.rmtree(folder / "runs", ignore_errors=True)  # what an interrupted attempt left
            _measure(folder, plan, data_dir)
            (folder / DONE).write_text(json.dumps({"measurements": plan.measurements}))
    recordings = {}
    for m in plan.measurements:
        meta = json.loads((folder / f"{m}.json").read_text())
        recordings[m] = Recording(
            m,
            meta["names"],
            np.load(folder / f"{m}.logits.npy"),
            tuple(meta["input_range"]),
            meta["pixels_sha256"],
        )
    return Shipped(folder, plan, recordings)
