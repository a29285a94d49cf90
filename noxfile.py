"""nox sessions. All sessions run in the ONE project environment (.venv, see README): a torch
environment is several GB, so no session builds its own. Run as ``.venv/bin/nox -s <name>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox
import nox.virtualenv
from packaging.version import Version

nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "none"
# Every session runs in the project environment (backend "none"), so nox never needs uv; but
# choosing a backend, it asks whether uv is there (nox.virtualenv's lazy HAS_UV / UV / UV_VERSION,
# computed by running `uv self version`) and logs "nox > uv binary not found." at the start of
# every run where it is not. Set here, they are read as set (nox reads them from the module), and
# no line is printed (tests/cli/test_nox_quiet.py).
nox.virtualenv.HAS_UV, nox.virtualenv.UV, nox.virtualenv.UV_VERSION = False, "uv", Version("0")

PY = sys.executable  # the interpreter nox runs under: the project's .venv


def _pytest(session: nox.Session, *args: str) -> None:
    session.run(PY, "-m", "pytest", *args, *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The default run: every tier that needs no GPU, weights or ImageNet, as CI runs it (--require-claims)."""  # noqa: E501 (nox -l prints this line)
    _pytest(session, "-n", "2", "--require-claims")


@nox.session
def unit(session: nox.Session) -> None:
    """Pure functions on synthetic inputs: no published data, no process (tests/tier_guard.py)."""
    _pytest(session, "-m", "unit", "-n", "2")


@nox.session
def data(session: nox.Session) -> None:
    """Single stages on the published data directory's files."""
    _pytest(session, "-m", "data")


@nox.session
def cli(session: nox.Session) -> None:
    """Tests that start processes: python -m repro in fresh interpreters, pytest, runner workers."""
    _pytest(session, "-m", "cli", "-n", "2")


@nox.session
def claims(session: nox.Session) -> None:
    """The claim gate (published claims recomputed; snapshot regression; quirks)."""
    _pytest(session, "-m", "claims")


@nox.session
def integration(session: nox.Session) -> None:
    """Pipeline stages together on generated mini data with tiny models."""
    _pytest(session, "-m", "integration")


@nox.session
def gpu(session: nox.Session) -> None:
    """Tests that need a CUDA device (device parity, throughput)."""
    _pytest(session, "-m", "gpu")


@nox.session
def full(session: nox.Session) -> None:
    """Tests that need real weights or datasets (skip with a reason when absent)."""
    _pytest(session, "-m", "full")


@nox.session
def bench(session: nox.Session) -> None:
    """
    Speed benchmarks (pytest-benchmark), reported as ratios against a baseline of the same run.
    """
    session.run(
        PY,
        "-m",
        "pytest",
        "tests/bench",
        "--benchmark-only",
        "-p",
        "no:xdist",
        "--benchmark-columns=min,mean,stddev,rounds",
        *session.posargs,
    )


@nox.session
def reproduce(session: nox.Session) -> None:
    """Measure what is configured (with no dataset configured: what ships, EfficientNet-Lite0 on the
    cue-conflict and CBMSplit stimuli, on the CPU, into runs/store), recompute the claims, write
    REPORT.md, report/ and report_assets/ (on a fresh clone: the committed ones)."""
    session.run(PY, "-m", "repro", "reproduce", *session.posargs)


@nox.session
def smoke(session: nox.Session) -> None:
    """
    The generated-mini pipeline end to end (tiny random CNNs on generated data, CPU; NOT evidence):
    data, store and report under runs/smoke only (never REPORT.md or report_assets/).
    """
    session.run(
        PY,
        "-m",
        "repro",
        "reproduce",
        "--mini",
        "--work-dir",
        "runs/smoke",
        "--out",
        "runs/smoke/REPORT.md",
        *session.posargs,
    )


@nox.session
def real(session: nox.Session) -> None:
    """The models measured here (the study's session ``real``: EfficientNet-Lite0/1/2 from their
    wheels on the real stimuli of the data directory, on the CPU) into the configured store, with
    progress bars and resumable (finished jobs are skipped; an interrupted job is run again), then
    their report, runs/real/REPORT.md (sections "Placement" and "Models measured here"; the
    committed REPORT.md is `reproduce`'s). First the cheap measurements of every model (shape bias,
    the pre-made grid), then the rest; measurements named by ``--measurements`` in one pass. Extra
    arguments go to ``measure``, e.g. ``nox -s real -- --models efficientnet_lite0``."""
    if "--measurements" not in session.posargs:
        cheap = ["--measurements", "shape_bias", "critical_band_16_premade"]
        session.run(PY, "-m", "repro", "measure", "--session", "real", *cheap, *session.posargs)
    session.run(PY, "-m", "repro", "measure", "--session", "real", *session.posargs)
    session.run(PY, "-m", "repro", "report", "--out", "runs/real/REPORT.md")


@nox.session
def lock(session: nox.Session) -> None:
    """Refresh requirements.lock (pip-compile --generate-hashes, Linux x86-64, this Python); `-- --upgrade` moves every pin."""  # noqa: E501 (nox -l prints this line)
    root = Path(__file__).resolve().parent
    out = root / "requirements.lock"
    session.run(
        str(Path(PY).with_name("pip-compile")),
        "--quiet",
        "pyproject.toml",
        "--extra=dev",
        "--extra=real",
        "--generate-hashes",
        "--allow-unsafe",
        "--strip-extras",
        "--no-emit-index-url",
        "--no-emit-find-links",
        f"--output-file={out.name}",
        *session.posargs,
    )
    from repro.base.environment import dependencies_digest, finish_lock

    digest = dependencies_digest(root / "pyproject.toml")
    out.write_text(finish_lock(out.read_text(encoding="utf-8"), digest), encoding="utf-8")
    session.log(f"{out.name}: resolved from pyproject.toml dependencies sha256 {digest[:12]}")


@nox.session
def mutants(session: nox.Session) -> None:
    """Mutation testing (mutmut 3) of the modules that produce published quantities; resumable; prints the kill rate and the survivors."""  # noqa: E501 (nox -l prints this line)
    # `nox -s mutants` resumes (results in mutants/); `-- --survivors` re-tests the survivors after
    # new tests; `-- --children 2` runs two mutant workers; `-- NAME...` only those mutants
    args = list(session.posargs)
    session.run(
        PY,
        "-m",
        "tests.mutation",
        "run",
        *args,
        env={"PYTHONPATH": str(Path(__file__).resolve().parent)},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, and the layer contract (import-linter: layers, independent studies, no cycles)."""
    session.run(PY, "-m", "ruff", "check", "repro", "tests", "conftest.py", "noxfile.py", "docs")
    session.run(
        PY, "-m", "ruff", "format", "--check", "repro", "tests", "conftest.py", "noxfile.py", "docs"
    )
    session.run(str(Path(PY).with_name("lint-imports")))


@nox.session
def typecheck(session: nox.Session) -> None:
    session.run(PY, "-m", "mypy", "repro")


@nox.session
def docs(session: nox.Session) -> None:
    """The user documentation: check that the generated blocks of the pages are current (reruns the
    --help texts and the cheap examples, writes nothing: `python docs/gen_cli_output.py` updates
    them), then build docs/ with mkdocs --strict into runs/site (a broken link or anchor or a page
    missing from the nav fails). ``-- --only NAME...`` checks only those examples."""
    session.run(PY, "docs/gen_cli_output.py", "--check", *session.posargs)
    session.run(PY, "-m", "mkdocs", "build", "--strict")


@nox.session
def throughput(session: nox.Session) -> None:
    """Images/s per probe and benchmark in float32 and bfloat16 autocast (channels_last) with their
    agreement on real stimuli: ``nox -s throughput -- --model NAME_OR_FILE --device cpu [--limit N]``."""  # noqa: E501 (nox --usage prints it as is)
    session.run(PY, "-m", "repro", "throughput", *session.posargs)
