"""Write REPORT.md as ``python -m repro reproduce`` writes it, from a store that holds every job
(the `real` tier's ``shipped`` store), in this process's kernels: ``python -m
tests.real.kernel_report STORE OUT`` (``tests/real/test_kernel_matrix.py`` runs it under each
OpenBLAS kernel family). Exit status 1 when the run would measure anything or a job failed."""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from repro.base.settings import data_dir
    from repro.base.study import select
    from repro.report import write_report
    from repro.runner.reproduce import reproduce

    store, out = Path(argv[0]), Path(argv[1])
    logged: list[str] = []
    done = reproduce(
        select(),
        data_dir=data_dir(None),
        store=store,
        progress=False,
        log=logged.append,
        warn=logged.append,
    )
    measured = [line for line in logged if " measured (" in line]
    if done.failed_jobs or done.exit_status != 0 or not measured[0].startswith("0 measured"):
        print(f"kernel_report: the run measured or failed: {measured[:1]} {done.failed_jobs}")
        return 1
    write_report(out, done.contexts, done.outcomes, plans=done.plans, store=store)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
