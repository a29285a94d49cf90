"""Entry point for ``python -m repro``."""

from repro.base.blas import pin_kernels
from repro.base.openmp import prefer_passive_waiting

prefer_passive_waiting()  # before anything loads torch's OpenMP runtime (repro.base.openmp)
pin_kernels()  # before anything loads NumPy's OpenBLAS (repro.base.blas)

from repro.cli import main  # noqa: E402

raise SystemExit(main())
