"""Measurements: the one registry of what the suite can measure, and the column summarizers.

THE one registry of what the suite can measure on a model, and the summarizers that turn a
probe's or benchmark's ``ProbeResult`` into benchmark.csv columns.

``registry`` (``MEASUREMENTS``: dataset, run function, kwargs, summarizer, version, the columns
it produces; ``measurements_for_columns``; ``configured``: keep the ones whose dataset has a
root) and ``columns`` (the summarizers). The runner, the ``probe`` command and the claims'
needs all read this registry: adding a probe is one entry here, no runner edit. Importing
this package does not import torch.
"""
