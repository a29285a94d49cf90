"""ImageNet-X (Idrissi et al., ICLR 2023), as one study folder: ``study.toml`` (pins, table
loader, report), ``claims.toml``, the statistics its claims name (``statistics``), the reader of
its published per-factor accuracy tables (``published``: the study's table) and its report
section (``report``)."""
