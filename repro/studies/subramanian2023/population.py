"""Subramanian et al. 2023: the populations of the study (``population.toml``).

The paper's 76 networks, the adversarial-training sweep (with each network's eps), the network
families (the clusters of its intervals and its leave-one-family-out robustness), the files left out
with their reasons, and the human channel.

``check_files`` holds the population to the published files: every network file is read as a
network of the population or of the sweep, or listed under ``[[left_out]]``; every network of
``population.toml`` has a file. A mismatch is one DataError naming the network or the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError, DataError
from repro.base.textfile import read_toml

POPULATION_FILE = Path(__file__).with_name("population.toml")
NETWORK_FILE = re.compile(r"solomon_(?P<network>.+)_accuracies_(?P<date>[0-9T:-]+)\.json")
SWEEP_EPS = re.compile(r"resnet50_l2_eps(?P<int>[0-9]+)(?:_(?P<frac>[0-9]+))?")


@dataclass(frozen=True)
class Human:
    """The human channel as published (group thresholds and their fit; per-observer summaries)."""

    observers: int
    thresholds: tuple[int, ...]
    source: str
    bandwidth: float
    center_frequency: float
    peak_noise_sensitivity: float
    per_observer: Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Population:
    networks: tuple[str, ...]  # the paper's 76
    description: str
    sweep: tuple[str, ...]  # the adversarial-training sweep, in eps order
    sweep_eps: Mapping[str, float]
    families: Mapping[str, tuple[str, ...]]
    left_out: tuple[tuple[str, str], ...]  # (file, reason)
    outside: tuple[tuple[tuple[str, ...], str], ...]  # (networks, reason)
    human: Human

    def family_of(self, network: str) -> str:
        for fam, members in self.families.items():
            if network in members:
                return fam
        raise DataError(f"{POPULATION_FILE}: network {network!r} is in no family ([families])")


def sweep_eps(name: str) -> float:
    """eps of a sweep network from its name: ``resnet50_l2_eps0_01`` -> 0.01, ``..._eps3`` -> 3."""
    m = SWEEP_EPS.fullmatch(name)
    if m is None:
        raise ConfigError(
            f"{POPULATION_FILE}: [sweep] network {name!r}: no eps in its name "
            "(expected resnet50_l2_eps<int>[_<fraction>])"
        )
    return float(f"{m.group('int')}.{m.group('frac') or '0'}")


def _strings(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw or not all(isinstance(v, str) and v for v in raw):
        raise ConfigError(f"{POPULATION_FILE}: {where} must be a non-empty list of network names")
    if len(set(raw)) != len(raw):
        dup = sorted({v for v in raw if raw.count(v) > 1})
        raise ConfigError(f"{POPULATION_FILE}: {where} names {', '.join(dup)} more than once")
    return tuple(raw)


def _human(raw: Any) -> Human:
    if not isinstance(raw, dict):
        raise ConfigError(f"{POPULATION_FILE}: [human] must be a table")
    try:
        th = tuple(int(t) for t in raw["thresholds"])
        per = {
            k.removeprefix("per_observer_"): dict(v)
            for k, v in raw.items()
            if k.startswith("per_observer_")
        }
        return Human(
            int(raw["observers"]),
            th,
            str(raw["source"]),
            float(raw["bandwidth"]),
            float(raw["center_frequency"]),
            float(raw["peak_noise_sensitivity"]),
            per,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"{POPULATION_FILE}: [human]: {exc} (expected observers, thresholds, source, "
            "bandwidth, center_frequency, peak_noise_sensitivity)"
        ) from None


@lru_cache(maxsize=1)
def population() -> Population:
    """``population.toml``, parsed and checked.

    Each network is in one family; the sweep's eps are strictly increasing in its order."""
    raw = read_toml(POPULATION_FILE, "the populations of study subramanian2023")
    pop = raw.get("population", {})
    networks = _strings(pop.get("networks"), "[population] networks")
    sweep = _strings(raw.get("sweep", {}).get("networks"), "[sweep] networks")
    eps = {n: sweep_eps(n) for n in sweep}
    values = list(eps.values())
    if any(b <= a for a, b in zip(values, values[1:], strict=False)):
        raise ConfigError(
            f"{POPULATION_FILE}: [sweep] networks must be in increasing eps order, got {values}"
        )
    fams = raw.get("families")
    if not isinstance(fams, dict) or not fams:
        raise ConfigError(
            f"{POPULATION_FILE}: [families] must map family names to lists of networks"
        )
    families = {name: _strings(members, f"[families] {name}") for name, members in fams.items()}
    seen: dict[str, str] = {}
    for name, members in families.items():
        for m in members:
            if m in seen:
                raise ConfigError(
                    f"{POPULATION_FILE}: network {m!r} is in families {seen[m]!r} and {name!r}"
                )
            seen[m] = name
    homeless = [n for n in (*networks, *sweep) if n not in seen]
    if homeless:
        raise ConfigError(
            f"{POPULATION_FILE}: network(s) {', '.join(sorted(set(homeless)))} in no family "
            "([families])"
        )
    left_out = tuple((str(e["file"]), str(e["reason"])) for e in raw.get("left_out", []))
    outside = tuple(
        (_strings(e["networks"], "[[outside_population]] networks"), str(e["reason"]))
        for e in raw.get("outside_population", [])
    )
    return Population(
        networks,
        str(pop.get("description", "")),
        sweep,
        eps,
        families,
        left_out,
        outside,
        _human(raw.get("human")),
    )


def network_files(names: Iterable[str]) -> dict[str, str]:
    """{network: file} for the network files among ``names``, those of ``[[left_out]]`` excluded.

    The network files are the ``solomon_<network>_accuracies_<date>.json`` files; a network with two
    files that are not left out is a DataError naming both."""
    left = {f for f, _ in population().left_out}
    out: dict[str, str] = {}
    for name in sorted(names):
        m = NETWORK_FILE.fullmatch(name)
        if m is None or name in left:
            continue
        net = m.group("network")
        if net in out:
            raise DataError(
                f"network {net!r} has two files, {out[net]} and {name}; list one under "
                f"[[left_out]] in {POPULATION_FILE} with its reason"
            )
        out[net] = name
    return out


def check_files(files: Mapping[str, str]) -> None:
    """Check that the network files and the networks of the population and the sweep match.

    Every network file is a network of the population or the sweep, and every such network has a
    file.
    """
    pop = population()
    known = set(pop.networks) | set(pop.sweep)
    stray = sorted(set(files) - known)
    if stray:
        raise DataError(
            f"network file(s) of {', '.join(stray)} belong to no population of {POPULATION_FILE} "
            "(add the network to [population] or [sweep], or its file to [[left_out]] with the "
            "reason)"
        )
    missing = sorted(known - set(files))
    if missing:
        raise DataError(f"no network file for {', '.join(missing)} (named in {POPULATION_FILE})")


def families(data_dir=None, known_models: Iterable[str] | None = None) -> dict[str, list[str]]:
    """The study's model categories: its network families (``[categories] loader``)."""
    known = None if known_models is None else set(known_models)
    out = {}
    for fam, members in population().families.items():
        if known is not None:
            unknown = [m for m in members if m not in known]
            if unknown:
                raise DataError(
                    f"{POPULATION_FILE}: family {fam!r} names {', '.join(unknown)}, not a row of "
                    "the study's table"
                )
        out[fam] = list(members)
    return out
