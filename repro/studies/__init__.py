"""Studies: one folder per published study (its study.toml, claims, analysis, statistics,
quirks, report sections and the readers of its own published files). See ``repro.base.study``."""
