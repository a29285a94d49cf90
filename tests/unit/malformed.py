"""Malformed and hostile inputs, written on demand into a folder: the inputs of the one-line-error
and security tests (test_security.py and test_hardening_*.py in tests/unit, tests/cli and
tests/data), kept here so a negative-input corpus test over every CLI command can reuse them.

Every writer takes the destination path and returns it. The hostile model files run a payload
when unpickled without restriction: it creates ``marker`` (so a test asserts no code ran by
checking that the marker does not exist).
"""

from __future__ import annotations

import builtins
import csv
import json
import os
import pickle
import struct
import zlib
from pathlib import Path


# --------------------------------------------------------------------------- hostile model files
class _Exec:
    """Unpickled without restriction, calls builtins.exec(code)."""

    def __init__(self, code: str):
        self.code = code

    def __reduce__(self):
        return (builtins.exec, (self.code,))


# os.system itself, taken at import: the unit tier's guard (tests/tier_guard.py) replaces os.system
# while a unit test runs, and the payload must still pickle as posix.system
_OS_SYSTEM = os.system


class _System:
    """Unpickled without restriction, calls os.system(command)."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (_OS_SYSTEM, (self.command,))


def _payload(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').write('code ran')"


def malicious_torch_save(path: Path, marker: Path) -> Path:
    """A torch.save zip with real tensors next to an object whose unpickling calls builtins.exec."""
    import torch

    torch.save(
        {"state_dict": {"fc.weight": torch.zeros(2, 2)}, "extra": _Exec(_payload(marker))}, path
    )
    return path


def malicious_plain_pickle(path: Path, marker: Path) -> Path:
    """A legacy (non-zip) pickle file whose unpickling calls os.system."""
    with open(path, "wb") as fh:
        pickle.dump({"state_dict": {}, "x": _System(f"touch {marker}")}, fh, protocol=2)
    return path


def text_checkpoint(path: Path) -> Path:
    path.write_text("these are not weights\n")
    return path


def tiny_state_dict(width: int = 8, seed: int = 0) -> dict:
    """The state dict of the zoo's tiny CNN (``arch = "tiny:<width>"``)."""
    from repro.zoo.tiny import seeded_tiny_cnn

    return seeded_tiny_cnn(width, seed).state_dict()


def int64_weights(path: Path) -> Path:
    """A tiny-CNN state dict whose first conv weight is an int64 tensor."""
    import torch

    state = tiny_state_dict()
    state["features.0.weight"] = state["features.0.weight"].round().to(torch.int64)
    torch.save(state, path)
    return path


def torchscript_file(path: Path) -> Path:
    import warnings

    import torch

    class Zero(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.zeros(x.shape[0], 1000)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.jit.script(Zero()).save(str(path))
    return path


# --------------------------------------------------------------------------- images
def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data))
        + kind
        + data
        + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def png_header_only(path: Path, width: int, height: int) -> Path:
    """A PNG that announces ``width x height`` pixels in 60 bytes (PIL reads the size on open)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", zlib.compress(b""))
        + _png_chunk(b"IEND", b"")
    )
    return path


def decompression_bomb(path: Path) -> Path:
    """30000 x 30000 announced: above PIL's error limit (2 x MAX_IMAGE_PIXELS)."""
    return png_header_only(path, 30_000, 30_000)


def decompression_bomb_warning(path: Path) -> Path:
    """10000 x 10000 announced: above MAX_IMAGE_PIXELS, below the error limit (PIL only warns)."""
    return png_header_only(path, 10_000, 10_000)


# --------------------------------------------------------------------------- decisions CSVs
DECISION_COLUMNS = (
    "subj",
    "session",
    "trial",
    "rt",
    "object_response",
    "category",
    "condition",
    "imagename",
)


def decisions_rows(n: int = 6) -> list[dict[str, str]]:
    """Valid model rows: shape class airplane/bear/... with another texture class."""
    shapes = ["airplane", "bear", "bicycle", "bird", "boat", "bottle", "car", "cat"]
    rows = []
    for i in range(n):
        shape, texture = shapes[i % len(shapes)], shapes[(i + 1) % len(shapes)]
        rows.append(
            {
                "subj": "m",
                "session": "1",
                "trial": str(i + 1),
                "rt": "NaN",
                "object_response": shape,
                "category": shape,
                "condition": "NaN",
                "imagename": f"{shape}{i + 1}-{texture}1.png",
            }
        )
    return rows


def write_decisions(path: Path, rows: list[dict[str, str]]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=DECISION_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


def duplicate_trial_decisions(path: Path) -> Path:
    """Rows 2 and 5 (lines 3 and 6... see the test) share trial number 2."""
    rows = decisions_rows()
    rows[4]["trial"] = rows[1]["trial"]
    return write_decisions(path, rows)


def duplicate_image_decisions(path: Path) -> Path:
    rows = decisions_rows()
    rows[5]["imagename"] = rows[0]["imagename"]
    rows[5]["category"] = rows[0]["category"]
    return write_decisions(path, rows)


def category_mismatch_decisions(path: Path) -> Path:
    """Row 3's category says bicycle, its image name's shape class is bird."""
    rows = decisions_rows()
    rows[3]["category"] = "bicycle"
    return write_decisions(path, rows)


# --------------------------------------------------------------------------- store records
def store_record(
    model: str = "m1", measurement: str = "imagenet", k: int = 38, n: int = 50, **prov
) -> dict:
    from repro.base.stats import binomial_interval

    iv = [100.0 * b for b in binomial_interval(k, n)] if n > 0 and 0 <= k <= n else None
    return {
        "model": model,
        "measurement": measurement,
        "version": "1+1",
        "status": "ok",
        "conditions": [{"condition": "top1", "k": k, "n": n}],
        "columns": [
            {
                "column": "top1_acc/imagenet",
                "value": 100.0 * k / n if n else None,
                "k": k,
                "n": n,
                "interval": iv,
                "variant": "standard",
                "note": "",
            }
        ],
        "provenance": {"dataset": "imagenet_val", **prov},
        "schema": 1,
    }


def write_record(store: Path, folder: str, name: str, data: dict | str) -> Path:
    path = store / folder / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def record_missing_key(store: Path) -> Path:
    data = store_record()
    del data["status"]
    return write_record(store, "m1", "imagenet", data)


def record_k_above_n(store: Path) -> Path:
    return write_record(store, "m1", "imagenet", store_record(k=60, n=50))


def record_in_another_models_folder(store: Path) -> Path:
    """m1's record copied into m2's folder."""
    return write_record(store, "m2", "imagenet", store_record(model="m1"))


def record_truncated(store: Path) -> Path:
    return write_record(store, "m1", "imagenet", json.dumps(store_record())[:40])


# --------------------------------------------------------------------------- configs
CONFIGS = {
    "unknown_dataset_key": '[datasets]\nimagenet_vall = "/data/val"\n',
    "unknown_table": '[dataset]\nimagenet_val = "/data/val"\n',
    "unknown_paths_key": '[paths]\nweight = "/w"\n',
    "exec_pickle_global": (
        '[models.evil]\nsource = "local"\nreference = "evil.pth"\n'
        'pickle_globals = ["builtins.exec"]\n'
    ),
    "unknown_model_override": '[models]\nresnet50_prim = "/w/x.pth"\n',
    "not_toml": "[paths\n",
}


def write_config(folder: Path, which: str) -> Path:
    path = folder / "repro.toml"
    path.write_text(CONFIGS[which])
    return path


# --------------------------------------------------------------------------- published tables
def imagenetx_table_with_text_cell(
    src: Path, dest: Path, row: int = 3, column: str = "pose"
) -> Path:
    """A copy of an ImageNet-X factor table with one cell replaced by text."""
    with open(src, newline="") as fh:
        rows = list(csv.reader(fh))
    j = rows[0].index(column)
    rows[row][j] = "n/a?"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return dest
