"""Runner, what to measure: the models and the measurements of a run.

The models are canonical zoo names, resolved at the door; both come from the command line,
``[runner]`` in repro.toml, or the study.

An alias (``resnet50.tv_in1k``) is resolved to the zoo's canonical name (``tv_resnet50``)
before anything is stored or looked up, so its results land on the study model's row.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from repro.base.errors import ConfigError
from repro.base.settings import current
from repro.base.study import Study
from repro.measurements.registry import MEASUREMENTS, Measurement
from repro.published.study_data import study_models
from repro.zoo import aliases

STUDY_KEYWORDS = ("all", "study")  # `--models all` = the study's models


def canonical_name(name: str) -> str:
    """The zoo's canonical name of ``name`` (an alias resolved; any other name unchanged)."""
    return aliases().get(name, name)


def canonical_names(names: Sequence[str]) -> list[str]:
    """Canonical names, in order, each once."""
    return list(dict.fromkeys(canonical_name(n) for n in names))


def configured_models(
    names: Sequence[str] | None,
    studies: Sequence[Study] = (),
    data_dir: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Models from ``names`` (the flag), else ``[runner] models`` in repro.toml.

    ``all`` (or ``study``) = the models of ``studies`` (each read from the study's data in
    ``data_dir``). Canonical names, each once.
    """
    chosen = list(names or []) or list(current().runner.models)
    if len(chosen) == 1 and chosen[0] in STUDY_KEYWORDS:
        if not studies:
            raise ConfigError(
                f"--models {chosen[0]}: no study selected whose models to measure (--study NAME)"
            )

        chosen = [m for study in studies for m in study_models(study, data_dir)]
    return canonical_names(chosen)


def configured_measurements(
    names: Sequence[str] | None,
    studies: Sequence[Study] = (),
    measurement: Callable[[str], Measurement] = MEASUREMENTS.get,
) -> list[str]:
    """Measurements from ``names`` (the flag), else ``[runner] measurements``, else the studies'.

    The studies' are those the ``studies`` need (every registered one when none is named); ``all`` =
    every registered one but the opt-in protocol variants (``Measurement.opt_in``: PGD's early
    stop). Unknown names fail here with the closest matches.
    """
    chosen = list(names or []) or list(current().runner.measurements)
    if not chosen:  # the studies' measurements, in study order, each once
        chosen = list(dict.fromkeys(m for study in studies for m in study.measurements)) or ["all"]
    if chosen == ["all"]:  # every registered one but the opt-in protocol variants
        return [n for n in MEASUREMENTS.names() if not MEASUREMENTS.get(n).opt_in]
    for n in chosen:
        measurement(n)
    return chosen
