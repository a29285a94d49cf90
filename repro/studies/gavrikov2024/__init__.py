"""Gavrikov & Keuper, "Can Biases in ImageNet Models Explain Generalization?" (CVPR 2024).

One study folder: ``study.toml`` (pins, table, categories, report, quirks, mini stand-ins),
``claims.toml``, ``analysis.toml``, the statistics its claims name (``statistics``), the quirks of
its published numbers (``quirks``), its report sections (``bias_category``, ``benchmarks``,
``quirks_section``) and the generator of its critical-band expected file
(``critical_band_expected``)."""
