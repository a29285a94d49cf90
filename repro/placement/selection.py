"""Placement: which models a report places.

A report written by a run places the models of the run's measuring plans (in a mini run none:
mini records are not evidence), so the report of a run does not depend on what else its store
holds (the committed REPORT.md: on any machine the same), unless the run asks for the store's
models too (``with_store``: a run of your own models keeps in its report what the store already
placed, e.g. EfficientNet-Lite0 from the plain run); a report written from a store alone places
every model of the store; models with externally known values are placed too. Study models are
left out (they are the population)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from repro.placement.values import store_models


def models_to_place(
    plans: Sequence[Any], store: Any, external: Mapping[str, Any], *, with_store: bool = False
) -> list[str]:
    """The models a report places (see the module docstring), in order.

    First the plans' (or the store's, sorted; with ``with_store`` the plans' and then the
    store's), then those with external values only, sorted."""
    stored = store_models(store) if store is not None else []
    if plans:
        measured = [m for p in plans if not p.mini for m in p.models]
        if with_store and not any(p.mini for p in plans):
            measured += stored
    else:
        measured = stored
    return list(dict.fromkeys([*measured, *sorted(external)]))
