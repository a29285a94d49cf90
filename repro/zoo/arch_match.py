"""Model zoo: the architectures a misfitting checkpoint would fit, and with which remap.

Used when a checkpoint does not fit its declared architecture: which architectures of the zoo it
would fit, and with which remap.

A checkpoint whose keys mostly differ from the architecture's (fewer than half of the
architecture's keys in the file after the declared remap, or a positional remap that cannot pair
the tensors) was most likely saved from another network: the error then names the architecture,
not the remap, as the cause, and lists the zoo's architectures (``arch`` values of its entries)
whose keys and shapes the file's tensors match under one of the ``[remaps]`` entries, simplest
first. Pure Python over mappings (the caller builds the candidates' state dicts, on the ``meta``
device: ``repro.zoo.loaders.zoo_architectures``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from repro.base.errors import CheckpointError
from repro.zoo.remap import (
    ALWAYS_ALLOWED_MISSING,
    apply_remap,
    check_keys,
    positional_map,
    select_state,
)
from repro.zoo.specs import Remap

#: below this share of the architecture's keys present in the file, the architecture is blamed
MOSTLY = 0.5


def _countable(keys: Iterable[str]) -> set[str]:
    allowed = [re.compile(p) for p in ALWAYS_ALLOWED_MISSING]
    return {k for k in keys if not any(p.search(k) for p in allowed)}


def mostly_mismatched(state: Mapping[str, Any], target: Mapping[str, Any]) -> bool:
    """Whether fewer than ``MOSTLY`` of the architecture's keys are in the file.

    BatchNorm step counters are not counted. A remap renames a few prefixes; another network has
    other keys."""
    expected = _countable(target)
    return len(expected & set(state)) < MOSTLY * max(len(expected), 1)


def fits(obj: Any, remap: Remap, target: Mapping[str, Any]) -> bool:
    """Whether the checkpoint ``obj`` loads into ``target`` (key -> tensor) under ``remap``.

    Strictly: the check ``load_model`` makes."""
    try:
        state = apply_remap(select_state(obj, remap, "-"), remap)
        if remap.positional:
            state = positional_map(state, target, remap.name, "-")
        check_keys(state, target, remap.name, "-")
    except CheckpointError:
        return False
    return True


def matching(
    obj: Any, candidates: Mapping[str, Mapping[str, Any]], remaps: Mapping[str, Remap]
) -> list[tuple[str, str]]:
    """(arch, remap name) for every candidate architecture the checkpoint fits.

    Each with the first remap (in ``remaps``' order: the plain ones before ``positional``) that
    makes it fit."""
    out = []
    for arch, target in candidates.items():
        for name, remap in remaps.items():
            if fits(obj, remap, target):
                out.append((arch, name))
                break
    return out


def architecture_error(
    path: Path | str,
    *,
    model: str,
    arch: str,
    remap: str,
    state: Mapping[str, Any],
    target: Mapping[str, Any],
    matches: list[tuple[str, str]],
    known: Iterable[str],
) -> CheckpointError:
    """The one-line error that names the architecture as the likely cause and what would fit."""
    expected = _countable(target)
    common = len(expected & set(state))
    missing = len(expected - set(state))
    unexpected = len(set(state) - set(target))
    head = (
        f"{path}: does not fit the architecture {arch} of model {model!r} after remap {remap!r}: "
        "only "
        f"{common} of its {len(expected)} keys are in the file ({missing} missing, {unexpected} "
        f"unexpected of the file's {len(state)} tensors), so the checkpoint was most likely saved "
        "from another network (a remap only renames or drops keys)"
    )
    if matches:
        fix = "; ".join(f'arch = "{a}" with remap = "{r}"' for a, r in matches)
        tail = (
            f"; its tensors fit the zoo's {fix}: set those in the model's [models.<name>] entry "
            "of repro.toml (docs/zoo.md, Remaps)"
        )
    else:
        tail = (
            f"; none of the zoo's architectures ({', '.join(sorted(known))}) fits it under any "
            "[remaps] entry: set arch to the timm or torchvision name of the network it was saved "
            'from ("timm:<name>", "torchvision:<name>"; docs/zoo.md, Remaps)'
        )
    return CheckpointError(head + tail)
