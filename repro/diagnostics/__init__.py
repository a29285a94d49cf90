"""Diagnostics: what judges a claim's verdict after the fact, around the verdict core.

The verdict core is ``repro.claims``. The diagnostics are the count model and its redraws
(``counts``, ``count_grids``), replication, the gate's power, leave-one-out robustness,
quirk-corrected variants, the estimand's intervals, a null's equivalence test, the statements
beside a verdict, the strength grade, independent inputs, and the claims table and JSON document
that show them (``output``, ``terminal``).

Nothing in ``repro.claims`` imports this package: a verdict never depends on its diagnostics.
"""
