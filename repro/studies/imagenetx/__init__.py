"""ImageNet-X (Idrissi et al., ICLR 2023), as one study folder.

The folder holds ``study.toml`` (pins, table loader, report), ``claims.toml``, ``census.toml``,
the statistics its claims name (``statistics``; ``group_agreement`` for the comparisons of two
groups of models), the labels of those groups (``model_labels``: the ``imagenet-x`` package's
model types, and the declared architecture name rule ``architecture_families.toml``), the reader
of its published per-factor accuracy tables (``published``: the study's table) and its report
section (``report``)."""
