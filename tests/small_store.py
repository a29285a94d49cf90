"""A small store, written as the runner writes records, for the tests and benchmarks of the
interactive commands (``compare``, ``place``): tv_resnet50 with a current ImageNet accuracy
(38,065/50,000, the ImageNet-X predictions of torchvision's ResNet-50 V1) and a shape bias to place
among the study's 48 (250 shape / 550 texture decisions of 1,200), and tv2_resnet50 with a stale
ImageNet record (version 0+1)."""

from __future__ import annotations

from pathlib import Path

SHAPE, TEXTURE = 250, 550


def shape_record(model: str, shape: int, texture: int, **provenance):
    """A current shape_bias record as the runner writes it: ``shape`` and ``texture`` decisions of
    1,200 cue-conflict trials."""
    from repro.measurements.registry import current_versions
    from repro.store.record import ColumnValue, JobRecord

    return JobRecord(
        model,
        "shape_bias",
        current_versions(["shape_bias"])["shape_bias"],
        "ok",
        conditions=[
            {"condition": "shape", "k": shape, "n": 1200},
            {"condition": "texture", "k": texture, "n": 1200},
        ],
        values={"n": 1200.0, "shape": float(shape), "texture": float(texture)},
        columns=[ColumnValue.from_count("shape-bias", shape, shape + texture, scale=1.0)],
        provenance=provenance,
    )


def write_small_store(root: Path) -> Path:
    from repro.store.files import Store
    from tests.unit.test_store import _rec

    store = Store(root)
    store.write(_rec("tv_resnet50", "imagenet", version="1+1", k=38065, n=50000))
    store.write(_rec("tv2_resnet50", "imagenet", version="0+1", k=40000, n=50000))
    store.write(
        shape_record(
            "tv_resnet50",
            SHAPE,
            TEXTURE,
            dataset_items=1280,
            dataset_mini=False,
            dataset_partial=False,
        )
    )
    return root
