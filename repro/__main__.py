"""Entry point for ``python -m repro``."""

from repro.base.openmp import prefer_passive_waiting

prefer_passive_waiting()  # before anything loads torch's OpenMP runtime (repro.base.openmp)

from repro.cli import main  # noqa: E402

raise SystemExit(main())
