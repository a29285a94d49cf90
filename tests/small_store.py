"""A small store, written as the runner writes records, for the tests and benchmarks of the
interactive commands (``compare``, ``place``): tv_resnet50 with a current ImageNet accuracy
(38,065/50,000, the ImageNet-X predictions of torchvision's ResNet-50 V1) and a shape bias to place
among the study's 48 (250 shape / 550 texture decisions of 1,200), and tv2_resnet50 with a stale
ImageNet record (version 0+1)."""

from __future__ import annotations

from pathlib import Path

SHAPE, TEXTURE = 250, 550


def write_small_store(root: Path) -> Path:
    from repro.measurements.registry import current_versions
    from repro.store.files import Store
    from repro.store.record import ColumnValue, JobRecord
    from tests.unit.test_store import _rec

    store = Store(root)
    store.write(_rec("tv_resnet50", "imagenet", version="1+1", k=38065, n=50000))
    store.write(_rec("tv2_resnet50", "imagenet", version="0+1", k=40000, n=50000))
    store.write(
        JobRecord(
            "tv_resnet50",
            "shape_bias",
            current_versions(["shape_bias"])["shape_bias"],
            "ok",
            conditions=[
                {"condition": "shape", "k": SHAPE, "n": 1200},
                {"condition": "texture", "k": TEXTURE, "n": 1200},
            ],
            values={"n": 1200.0, "shape": float(SHAPE), "texture": float(TEXTURE)},
            columns=[ColumnValue.from_count("shape-bias", SHAPE, SHAPE + TEXTURE, scale=1.0)],
            provenance={"dataset_items": 1280, "dataset_mini": False, "dataset_partial": False},
        )
    )
    return root
