"""ImageNet class facts: the 1000 WordNet ids and the 200-class spaces of ImageNet-A and -R.

Used by the dataset readers and by scoring: the 1000 WordNet ids in class-index order and the
200-class label spaces of ImageNet-A and ImageNet-R (pipeline stage: datasets, pure data).

The facts live in ``repro/datasets/data/imagenet_classes.csv`` (one row per class:
``index,wnid,imagenet_a,imagenet_r``; the header comment records the provenance). They are
loaded on first attribute access, not at import:

- ``IMAGENET_WNIDS``: tuple of 1000 WordNet ids, index = class index (sorted wnids, the
  torchvision/timm order);
- ``IMAGENET_A_CLASSES``, ``IMAGENET_R_CLASSES``: tuples of 200 sorted class indices.

``python -m repro.datasets.class_subsets PATH/class_subsets.json`` regenerates the table from
the reference file (the only way it is ever written).
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from repro.base.errors import DataError, UnknownNameError

TABLE = Path(__file__).with_name("data") / "imagenet_classes.csv"
SUBSETS = ("imagenet_a", "imagenet_r")

_HEADER = """\
# ImageNet-1k classes in class-index order (sorted WordNet ids: the torchvision/timm order),
# with membership in the 200-class label spaces of ImageNet-A and ImageNet-R.
# Provenance: facts from the class lists used by paulgavrikov/biases_vs_generalization @
# 9168ac87bdf671ff711f6a19e29d0749ab2aad27, code/eval_imagenet_ood.py (ImageNet-A: Hendrycks et
# al. 2021, natural-adv-examples; ImageNet-R: Hendrycks et al. 2021, imagenet-r), as collected in
# the reference data file imagenet/class_subsets.json. Regenerate with
# `python -m repro.datasets.class_subsets DATA_DIR/imagenet/class_subsets.json`.
"""


@lru_cache(maxsize=1)
def _table() -> dict[str, tuple[Any, ...]]:
    wnids: list[str] = []
    members: dict[str, list[int]] = {s: [] for s in SUBSETS}
    rows = [ln for ln in TABLE.read_text().splitlines() if ln and not ln.startswith("#")]
    if rows[0] != "index,wnid,imagenet_a,imagenet_r":
        raise DataError(f"{TABLE}: header {rows[0]!r}, expected 'index,wnid,imagenet_a,imagenet_r'")
    for line_no, line in enumerate(rows[1:]):
        index, wnid, in_a, in_r = line.split(",")
        if int(index) != line_no:
            raise DataError(f"{TABLE}: class row {line_no} has index {index}, expected {line_no}")
        wnids.append(wnid)
        for name, flag in zip(SUBSETS, (in_a, in_r), strict=True):
            if flag == "1":
                members[name].append(int(index))
    return {"wnids": tuple(wnids), **{k: tuple(v) for k, v in members.items()}}


def subset(name: str) -> tuple[int, ...]:
    """The sorted class indices of a 200-class label space (``imagenet_a`` or ``imagenet_r``)."""
    key = name.replace("-", "_").lower()
    if key not in SUBSETS:
        raise UnknownNameError(f"unknown class subset {name!r} (known: {', '.join(SUBSETS)})")
    return _table()[key]


def __getattr__(name: str) -> tuple[Any, ...]:
    if name == "IMAGENET_WNIDS":
        return _table()["wnids"]
    if name == "IMAGENET_A_CLASSES":
        return _table()["imagenet_a"]
    if name == "IMAGENET_R_CLASSES":
        return _table()["imagenet_r"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render_table(class_subsets_json: str | Path) -> str:
    """The package table built from the reference ``imagenet/class_subsets.json``."""
    raw = json.loads(Path(class_subsets_json).read_text())
    wnids = raw["wnids"]
    in_a, in_r = set(raw["imagenet_a_indices"]), set(raw["imagenet_r_indices"])
    lines = ["index,wnid,imagenet_a,imagenet_r"]
    lines += [f"{i},{w},{int(i in in_a)},{int(i in in_r)}" for i, w in enumerate(wnids)]
    return _HEADER + "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - regeneration command
    TABLE.write_text(render_table(sys.argv[1]))
    print(f"wrote {TABLE}")
