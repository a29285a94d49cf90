"""Subramanian et al., NeurIPS 2023 (spatial-frequency channels), as one study folder.

Subramanian, Sizikova, Majaj and Pelli, "Spatial-frequency channels, shape bias, and adversarial
robustness" (NeurIPS 2023). The folder holds ``study.toml`` (pins of the published network data,
table loader, families, report), ``claims.toml``, ``population.toml`` (the 76 networks, the
adversarial-training sweep, the families, the files left out and why, the human channel) read by
``population``, the reader of the network data (``published``: every network file scored by
``repro.scoring.critical_band_grid``), the statistics its claims name (``statistics``) and its
report section (``report``)."""
