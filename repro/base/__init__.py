"""Base: what every pipeline stage shares, and nothing that names a stage above it.

``errors`` (the ``ReproError`` family), ``registry`` (named entries, lazy ``module:attr``
references), ``settings`` (paths, resolved at call time; dataset roots are read by
``repro.datasets.roots``, which knows the dataset names), ``config_check`` (where repro.toml is
found, and its tables and keys checked), ``atomic`` (files published whole, with the umask's
mode, and our stale temp files cleaned), ``stats`` (``Count`` and binomial intervals),
``results`` (``ProbeResult``, ``ConditionCount``: what a probe returns), ``table``
(``ModelTable``: the per-model table every statistic reads) and ``study`` (``Study``: a study
folder's ``study.toml``, and the discovery of study folders).
"""
