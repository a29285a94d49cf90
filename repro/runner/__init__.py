"""Runner: resumable (model x measurement) jobs over the zoo and the datasets, locally, one worker per GPU, or on SLURM through submitit."""
