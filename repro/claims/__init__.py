"""Claims: the published claims as data, one generic checker, named tolerance policies.

Public API: ``load_claims(studies)``, ``evaluate(claim, context)``, ``evaluate_all(context)``
(the claims of the context's study), ``published_context(study, data_dir)``,
``measured_context(study, store_dir, data_dir)`` (``repro.claims.context``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate", "evaluate_all", "load_claims", "measured_context", "published_context"]


def __getattr__(name: str) -> Any:  # lazy: importing repro.claims stays cheap
    if name in ("evaluate", "evaluate_all"):
        from repro.claims import check

        return getattr(check, name)
    if name == "load_claims":
        from repro.claims.loader import load_claims

        return load_claims
    if name in ("published_context", "measured_context"):
        from repro.claims import context

        return getattr(context, name)
    raise AttributeError(f"module 'repro.claims' has no attribute {name!r}")
