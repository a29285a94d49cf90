"""Placement: where a model that is not a study model lands among a study's population.

The placement is on the columns the study declares to be on its own scale (``[placement]`` of
its study.toml; docs/howto/add-study.md, "Placement"). One mechanism for every study and every
model of the store, or with externally known values (``repro.zoo.external``):
``python -m repro place`` and the report's section "Placement" read it.

A layer between the report and the claims: it reads the store, the studies' published tables
and the externally known values, ranks, fits residuals (``repro.placement.rank``,
``repro.placement.fit``) and recomputes claims with n + 1 models for a model inside a study's
population.
"""
