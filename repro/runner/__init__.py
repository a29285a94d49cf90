"""Runner: resumable (model x measurement) jobs over the zoo and the datasets, locally, one worker per GPU, or on SLURM through submitit.

``measurements`` (the registry), ``columns`` (results -> benchmark.csv columns), ``jobs``
(plan, lock, run, store), ``local`` (one worker per GPU), ``slurm`` (submitit), ``ensure``
(run what is missing, for tests and ``reproduce``). Importing this package does not import torch.
"""


def ensure_measured(*args, **kwargs):  # noqa: D103 - thin lazy re-export
    """See ``repro.runner.ensure.ensure_measured``."""
    from repro.runner.ensure import ensure_measured as _ensure

    return _ensure(*args, **kwargs)
