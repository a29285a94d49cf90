"""Studies: one folder per published study (see ``repro.base.study``).

Each folder holds its study.toml, claims, analysis, statistics, quirks, report sections and the
readers of its own published files."""
