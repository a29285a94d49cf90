"""Base: what every pipeline stage shares, and nothing that names a stage above it.

``errors`` (the ``ReproError`` family), ``registry`` (named entries, lazy ``module:attr``
references), ``settings`` (paths and dataset roots, resolved at call time), ``stats``
(``Count`` and binomial intervals), ``results`` (``ProbeResult``, ``ConditionCount``: what a
probe returns), ``table`` (``ModelTable``: the per-model table every statistic reads) and
``study`` (``Study``: a study folder's ``study.toml``, and the discovery of study folders).
"""
