"""Model zoo: apply a declared key remap to a loaded checkpoint, and check the result strictly.

Pure Python over mappings (no torch import), so the rules are testable on plain dicts.
Order: select the state dict -> drop declared keys -> strip prefixes -> regex renames.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from repro.base.errors import CheckpointError
from repro.zoo.specs import Remap

# BatchNorm step counters: unused in eval mode; torch itself fills them for old checkpoints.
ALWAYS_ALLOWED_MISSING = (r"\.num_batches_tracked$",)
_LIST_MAX = 12


def _is_state_dict(obj: Any) -> bool:
    return (
        isinstance(obj, Mapping)
        and bool(obj)
        and all(isinstance(k, str) and hasattr(v, "shape") for k, v in obj.items())
    )


def _preview(keys: Iterable[str]) -> str:
    keys = sorted(keys)
    shown = ", ".join(keys[:_LIST_MAX])
    return shown + (f", ... ({len(keys) - _LIST_MAX} more)" if len(keys) > _LIST_MAX else "")


def select_state(obj: Any, remap: Remap, path: Path | str) -> dict[str, Any]:
    """The state dict inside a checkpoint: the first present ``select`` key, else the top level."""
    if isinstance(obj, Mapping):
        for key in remap.select:
            if key in obj:
                obj = obj[key]
                break
    if not _is_state_dict(obj):
        top = _preview(map(str, obj)) if isinstance(obj, Mapping) else type(obj).__name__
        want = (
            f"one of the keys {list(remap.select)} holding"
            if remap.select
            else "the top level to be"
        )
        raise CheckpointError(
            f"{path}: expected {want} a state dict (name -> tensor) (remap {remap.name!r}); found "
            f"{top}"
        )
    return dict(obj)


def apply_remap(state: Mapping[str, Any], remap: Remap) -> dict[str, Any]:
    """Drop, strip and rename keys as declared; two keys mapping to one name is an error."""
    drops = [re.compile(p) for p in remap.drop]
    renames = [(re.compile(p), r) for p, r in remap.rename]
    out: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for key, value in state.items():
        if any(p.search(key) for p in drops):
            continue
        new = key
        for prefix in remap.strip_prefixes:
            if new.startswith(prefix):
                new = new[len(prefix) :]
                break
        for pattern, repl in renames:
            new = pattern.sub(repl, new)
        if new in out:
            raise CheckpointError(
                f"remap {remap.name!r} maps both {origin[new]!r} and {key!r} to {new!r}"
            )
        out[new] = value
        origin[new] = key
    return out


def check_keys(
    state: Mapping[str, Any],
    expected: Mapping[str, Any],
    remap_names: str,
    path: Path | str,
) -> list[str]:
    """Strict key and shape check (METHODS Q6), returning the tolerated missing keys.

    The tolerated missing keys are BatchNorm ``num_batches_tracked`` counters only.

    ``expected`` maps the architecture's keys to tensors (for their shapes).
    """
    allowed = [re.compile(p) for p in ALWAYS_ALLOWED_MISSING]
    missing = [k for k in expected if k not in state]
    tolerated = [k for k in missing if any(p.search(k) for p in allowed)]
    missing = [k for k in missing if k not in tolerated]
    unexpected = [k for k in state if k not in expected]
    problems = []
    if missing:
        problems.append(f"missing keys ({len(missing)}): {_preview(missing)}")
    if unexpected:
        problems.append(f"unexpected keys ({len(unexpected)}): {_preview(unexpected)}")
    shapes = [
        f"{k}: file {tuple(state[k].shape)} vs model {tuple(expected[k].shape)}"
        for k in state
        if k in expected and tuple(state[k].shape) != tuple(expected[k].shape)
    ]
    if shapes:
        problems.append(f"shape mismatches ({len(shapes)}): {'; '.join(shapes[:_LIST_MAX])}")
    if problems:
        raise CheckpointError(
            f"{path}: does not match the architecture after remap {remap_names}: "
            + "; ".join(problems)
            + " (loading is strict; declare deliberate drops/renames in the model's remap)"
        )
    return tolerated


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def positional_map(
    state: Mapping[str, Any],
    target: Mapping[str, Any],
    remap_name: str,
    path: Path | str,
) -> dict[str, Any]:
    """Rename the file's tensors to the architecture's keys BY POSITION.

    For checkpoints in another implementation's key layout whose tensors come in the same order,
    e.g. EfficientNet-PyTorch -> timm ``tf_efficientnet_lite*``.

    The map is explicit and checked pair by pair: the counts must be equal, and the i-th
    pair must agree in shape and in the leaf name (``weight``, ``bias``, ``running_mean``,
    ``running_var``, ``num_batches_tracked``), which catches a swapped BatchNorm weight/bias
    that shapes alone would not. The first mismatch is a CheckpointError naming both keys.
    """
    src, dst = list(state), list(target)
    if len(src) != len(dst):
        raise CheckpointError(
            f"{path}: positional remap {remap_name!r}: the file has {len(src)} tensors, the "
            f"architecture {len(dst)}; a positional key map needs the same number in the same order"
        )
    out: dict[str, Any] = {}
    for i, (a, b) in enumerate(zip(src, dst, strict=True)):
        sa, sb = tuple(state[a].shape), tuple(target[b].shape)
        if sa != sb or _leaf(a) != _leaf(b):
            what = f"shape {sa} vs {sb}" if sa != sb else f"leaf name {_leaf(a)!r} vs {_leaf(b)!r}"
            raise CheckpointError(
                f"{path}: positional remap {remap_name!r}: tensor {i} of {len(src)} does not pair: "
                f"file {a!r} with model {b!r} ({what}); the two layouts differ in order or content"
            )
        out[b] = state[a]
    return out
