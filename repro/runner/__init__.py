"""Runner: resumable (model x measurement) jobs, locally or on SLURM, and ``reproduce``.

Jobs over the zoo and the datasets, run locally, one worker per GPU, or on SLURM through submitit.

``selection`` (canonical model names; which models and measurements), ``jobs`` (plan, lock,
run, store), ``dispatch`` (``python -m repro measure``: device, executor), ``local`` (one worker
per GPU), ``slurm`` (submitit), ``ensure`` (run what is missing, for ``pytest --source
measure``), ``pipeline`` (a study's measuring plan, mini runs), ``reproduce`` (measure, then
the claims of every study). The measurements themselves are ``repro.measurements``. Importing
this package does not import torch.
"""
