"""Docs: write the real command-line output into the pages of ``docs/``, between marker lines
that this script owns, so that the pages show what the code prints today and read right unbuilt
(on the repository host as in the built site). A generated block is two comment lines around the
fenced output this script writes::

    <!-- BEGIN generated example:claims -->
    ```text
    $ python -m repro claims
    ...
    ```
    <!-- END generated example:claims -->

Block names:

- ``help:<command>``: ``python -m repro <command> --help`` of the real parser
  (``repro.cli.build_parser``), the words joined by ``-`` (``help:data-fetch``; ``help:repro`` is
  ``python -m repro --help``), at 100 columns. Every command needs one in some page
  (``tests/unit/test_docs_complete.py``). The BEGIN line records the Python that wrote it
  (``python=3.11``): argparse lays help out differently across versions, so a check under another
  Python skips those blocks.
- ``example:<name>``: an example command of ``examples()`` below, run for real in a subprocess.
  The cheap ones (published data only, seconds each) are rerun every time, ``--check`` included;
  ``--expensive`` also reruns those that measure models (mini data, tiny random models, minutes
  on a CPU): their blocks name the machine they were captured on and are kept as they are until
  rerun. ``manual`` ones (``nox-real``: hours on a CPU) run only when named with ``--only``.
  An expensive example is not rerun by ``--check`` but checked by what it read: when it is
  captured, every Python process of its command records the repository files it imported or
  opened and the published data it read (``docs/capture_hook``), and their digests go to
  ``docs/captures.lock.json`` with the digest of the captured text (``docs/capture_inputs.py``);
  ``--check`` names each capture whose inputs changed since (with the changed files), whose text
  is not the one captured, or that has no recorded inputs; ``--only NAME`` refreshes both. A
  rerun that differs from its page only in timings (``TIMING``, an example's ``volatile``
  parts) keeps the page's text, so that a capture is not rewritten with figures of a loaded
  machine.
- ``file:<path>``: a file of the repository, as it is (``file:docs/examples/no_stylized.toml``).

To add a block, write its two marker lines (nothing between them) where the output belongs and run
this script: it fills every block of every page; text outside the markers is never touched. A new
example is one ``Example(...)`` line in ``examples()`` and its markers. ``--check`` compares
without writing anything and exits 1 naming every stale, empty, unknown or unmatched block and
every command without its help block (``nox -s docs`` runs it before the strict build). Old
``--8<--`` include lines (pymdownx.snippets) are converted to blocks when the script writes.

Paths of the machine that ran the command are written relative to the checkout: the checkout
as ``.``, the data directory as ``../shared/data``, the user cache as ``~/.cache/repro``, the
scratch folder of the expensive examples as ``.`` (they run in it). A command that exits
non-zero ends its block with ``[exit status N]``; one that exits with another status than its
``Example.exits`` (0 unless it shows an error on purpose) is an error, and its block is kept.

    python docs/gen_cli_output.py              # help texts, files and the cheap examples
    python docs/gen_cli_output.py --check      # the same compared, nothing written (exit 1: stale)
    python docs/gen_cli_output.py --expensive  # and the measuring ones (minutes)
    python docs/gen_cli_output.py --only claims models
                                               # just these examples (and every help text and file)
    python docs/gen_cli_output.py --only       # the help texts and files only (seconds)
    REPRO_STORE_DIR=STORE python docs/gen_cli_output.py --only nox-real
                                               # seconds when STORE holds the example's two
                                               # measurements of Lite0 (else it measures them)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capture_inputs  # noqa: E402  (docs/capture_inputs.py, beside this script)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HOOK = Path(__file__).resolve().parent / "capture_hook"
HELP_COLUMNS = "100"
MVH = "../shared/data/model-vs-human/cue-conflict"
PRED = "../shared/data/imagenetx/model_predictions/ResNet50.csv"
CBM = "../shared/data/critical-band-masking/network_data"
# two made-up shape-bias measurements (not published values)
MINE = "docs/examples/my_measurements.csv"
MINE_STORE = "/tmp/repro-docs-mine"
# the parts of reproduce's output that docs/reproduce.md does not need: below the claims table,
# what `claims` prints too, and the report's files one a line
REPORT_CUT = (
    (
        r"recomputed =$",
        r"wrote ",
        "what each number is, the evidence, flags and notes, as `python -m repro claims` "
        "prints them",
    ),
    (r"wrote \S*report_assets/", r"(?!wrote )", "the figures and tables in report_assets/"),
)
# what ruff reads (not a Python process: the inputs of nox -s lint are declared)
LINTED = (
    "repro",
    "tests",
    "conftest.py",
    "noxfile.py",
    "pyproject.toml",
    "docs/gen_cli_output.py",
    "docs/capture_inputs.py",
    "docs/capture_hook",
)


def command_paths() -> list[list[str]]:
    """Every command of ``python -m repro`` as its words (``["data",
    "fetch"]``), in parser order."""
    from repro.cli import build_parser

    out: list[list[str]] = []

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out.append(prefix + [name])
                    walk(sub, prefix + [name])

    walk(build_parser(), [])
    return out


def help_text(words: list[str]) -> str:
    """``python -m repro <words> --help`` as the parser prints it at ``HELP_COLUMNS`` columns."""
    from repro.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        parser = build_parser()
        for word in words:
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            parser = sub.choices[word]
        text = parser.format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return f"$ {' '.join(['python -m repro', *words, '--help'])}\n{text}"


def help_name(words: list[str]) -> str:
    """The block name of the help text of ``words`` (``help:data-fetch``;
    ``help:repro`` for none)."""
    return f"help:{'-'.join(words) or 'repro'}"


def python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


@dataclass
class Example:
    """One example command: ``shown`` is what the page prints after ``$``; ``argv`` what runs,
    written out only where it differs from the shown words (a pipeline, a comment)."""

    name: str
    shown: str
    argv: list[str] | None = None  # None: the words of ``shown`` (``argv_of``)
    env: dict[str, str] = field(default_factory=dict)
    expensive: bool = False
    max_lines: int | None = (
        None  # keep the first lines only (the snippet says how many were left out)
    )
    in_checkout: bool = (
        False  # an expensive example that runs in the checkout, not in the scratch folder
    )
    collapse: str | None = (
        None  # runs of more than 2 lines starting with this are shortened to 2 and a count
    )
    manual: bool = (
        False  # too long even for --expensive (hours on a CPU): run only when named with --only
    )
    exits: int = 0  # the exit status it shows: an example of an error exits non-zero on purpose
    # lines that differ from run to run (a timing): a rerun that differs from the page in these
    # lines only keeps the page's text (a regular expression, matched with re.search)
    volatile: str | None = None
    # parts the page does not need: (first line, line after the part, what it is), regular
    # expressions matched with re.match; the part becomes one line "... (N lines: what)"
    omit: tuple[tuple[str, str, str], ...] = ()
    # inputs of an expensive example that its Python processes do not open (files a tool that is
    # not Python reads, such as ruff): checkout paths, a folder meaning all its files
    inputs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.argv is None:
            self.argv = argv_of(self.shown)


def argv_of(shown: str) -> list[str]:
    """What a shown command runs, when it is written once: its words (shell quoting) without the
    leading ``NAME=value`` words (the example's ``env`` gives the real values), ``python`` as this
    interpreter and ``nox`` with this checkout's noxfile."""
    words = shlex.split(shown)
    while words and re.fullmatch(r"[A-Z][A-Z0-9_]*=\S*", words[0]):
        words.pop(0)
    if words[:1] == ["python"]:
        return [sys.executable, *words[1:]]
    if words[:1] == ["nox"]:
        return [*_nox(), *words[1:]]
    return words


def _nox() -> list[str]:
    return [str(Path(sys.executable).with_name("nox")), "--noxfile", str(ROOT / "noxfile.py")]


def examples() -> list[Example]:
    """The example commands of the pages, cheap ones first, then the expensive ones in the order
    they depend on each other (mini data -> probes -> measure -> compare -> reproduce)."""
    cheap = [
        Example("claims", "python -m repro claims"),
        # the table and the summing-up line only (docs/reproduce.md explains the table)
        Example(
            "claims-table",
            "python -m repro claims   # the table and the last line",
            [
                "sh",
                "-c",
                '"$0" -m repro claims | awk \'NR == 1, /^$/ {print; next} {n++; last = $0} END '
                '{printf "... (%d lines: what each number is, the details of every claim)\\n", '
                "n - 1; print last}'",
                sys.executable,
            ],
        ),
        Example(
            "claims-variant",
            "python -m repro claims --analysis docs/examples/no_stylized.toml",
            exits=1,
        ),
        Example(
            "claims-missing-data",
            "REPRO_DATA_DIR=/tmp/nodata python -m repro claims",
            env={"REPRO_DATA_DIR": "/tmp/nodata"},
            exits=2,
        ),
        Example("claims-census", "python -m repro claims --census --study imagenetx"),
        # the store named: the paired section reads the default store (runs/store) when one
        # exists, and the page shows what a checkout without measurements prints
        Example(
            "compare-independent",
            "REPRO_STORE_DIR=/tmp/no-store python -m repro compare --independent",
            env={"REPRO_STORE_DIR": "/tmp/no-store"},
        ),
        Example("claims-independent", "python -m repro claims --source independent"),
        Example("models", "python -m repro models"),
        Example("measure-list", "python -m repro measure --list"),
        Example("config", "python -m repro config"),
        Example("data-fetch", "python -m repro data fetch"),
        Example("data-verify", "python -m repro data verify"),
        Example("data-check", "python -m repro data check"),
        Example(
            "score-shape-bias",
            f"python -m repro score shape-bias {MVH}/cue-conflict_resnet50_session-1.csv --json",
        ),
        Example(
            "score-shape-bias-human",
            f"python -m repro score shape-bias {MVH}/cue-conflict_subject-01_session_1.csv",
        ),
        Example("score-critical-band", "python -m repro score critical-band 0,0,0,0,2,2,0 --json"),
        Example(
            "score-critical-band-flat", "python -m repro score critical-band 4,4,4,4,4,4,4 --json"
        ),
        Example(
            "score-critical-band-bad",
            "python -m repro score critical-band 0,0,0,0,2,2,5",
            exits=2,
        ),
        Example(
            "score-critical-band-grid",
            "python -m repro score critical-band --grid "
            f"{CBM}/solomon_resnet50_accuracies_2023-04-10T18:02:55.json",
        ),
        Example("claims-subramanian2023", "python -m repro claims --study subramanian2023"),
        Example(
            "score-benchmark",
            f"python -m repro score benchmark --predictions {PRED} --benchmark imagenet --json",
        ),
        Example(
            "score-benchmark-real",
            f"python -m repro score benchmark --predictions {PRED} --benchmark real",
        ),
        Example(
            "score-benchmark-real-last-batch",
            f"python -m repro score benchmark --predictions {PRED} --benchmark real_last_batch",
        ),
        Example("score-imagenet-x", f"python -m repro score imagenet-x --predictions {PRED}"),
        Example("plan", "python -m repro plan --device h200 --gpus 8"),
        Example("nox-list", "nox -l"),
        # bring your own measurements: import (into a fresh folder), then compare and claims on them
        Example(
            "store-import",
            f"python -m repro store import {MINE} --store {MINE_STORE}",
            [
                "sh",
                "-c",
                (
                    f'rm -rf {MINE_STORE} && exec "$0" -m repro store import {MINE} --store '
                    f"{MINE_STORE}"
                ),
                sys.executable,
            ],
        ),
        # the report of those measurements (a named store: the default one, runs/store, differs
        # from machine to machine)
        Example(
            "report",
            f"python -m repro report --store {MINE_STORE} --out /tmp/repro-docs-report/REPORT.md",
        ),
        Example(
            "compare-json",
            f"python -m repro compare --store {MINE_STORE} --json {MINE_STORE}/compare.json",
        ),
        Example(
            "claims-source-store",
            f"python -m repro claims --source store --store {MINE_STORE} --study gavrikov2024",
            max_lines=32,
            exits=1,
        ),
    ]
    mini_env = {"REPRO_CONFIG": "MINI/repro.toml"}
    expensive = [
        Example(
            "pytest-claims-shape-bias",
            "python -m pytest -m claims -k shape_bias -q -p no:cacheprovider",
            expensive=True,
            in_checkout=True,
        ),
        Example(
            "make-mini",
            "python -m repro data make-mini MINI --datasets imagenet_val cue_conflict "
            "--per-class 1",
            expensive=True,
        ),
        Example(
            "data-check-mini",
            "REPRO_CONFIG=MINI/repro.toml python -m repro data check imagenet_val cue_conflict",
            env=mini_env,
            expensive=True,
        ),
        Example(
            "probe-spectral",
            "python -m repro probe spectral --model tiny_random_a --data "
            "MINI/imagenet_val --device cpu",
            expensive=True,
        ),
        Example(
            "probe-critical-band",
            "python -m repro probe critical-band --model tiny_random_a "
            "--data MINI/imagenet_val --device cpu --seed 0 --out counts.csv",
            expensive=True,
        ),
        Example(
            "probe-wrong-data",
            "python -m repro probe spectral --model tiny_random_a --data MINI/cue_conflict",
            expensive=True,
            exits=2,
        ),
        Example(
            "measure-mini",
            "REPRO_CONFIG=MINI/repro.toml python -m repro measure --models tiny_random_a "
            "tiny_random_b --measurements imagenet imagenet_real shape_bias --store "
            "store --device cpu --no-progress",
            env=mini_env,
            expensive=True,
        ),
        Example(
            "measure-mini-again",
            "REPRO_CONFIG=MINI/repro.toml REPRO_IMAGENET_SKETCH_ROOT=/tmp/nowhere "
            "python -m repro measure --models tiny_random_a tiny_random_b --measurements "
            "imagenet imagenet_real "
            "shape_bias imagenet_sketch --store store --device cpu --no-progress",
            env={**mini_env, "REPRO_IMAGENET_SKETCH_ROOT": "/tmp/nowhere"},
            expensive=True,
            exits=1,
        ),
        # on a SLURM that answers (tests/cluster/slurm-up.sh starts a one-node one,
        # as root): only with --only
        Example(
            "measure-slurm",
            "REPRO_CONFIG=MINI/repro.toml python -m repro measure --models tiny_random_a "
            "tiny_random_b --measurements imagenet shape_bias --store slurm-store "
            "--device cpu --executor slurm "
            "--no-progress",
            env=mini_env,
            expensive=True,
            manual=True,
        ),
        Example(
            "measure-slurm-again",
            "REPRO_CONFIG=MINI/repro.toml python -m repro measure --models tiny_random_a "
            "tiny_random_b --measurements imagenet shape_bias --store slurm-store "
            "--device cpu --executor slurm "
            "--no-progress",
            env=mini_env,
            expensive=True,
            manual=True,
        ),
        Example(
            "measure-slurm-too-big",
            "REPRO_CONFIG=MINI/repro.toml python -m repro measure --models tiny_random_a "
            "--measurements imagenet --store slurm-store --device cpu --executor slurm "
            "--slurm-cpus-per-task 64",
            env=mini_env,
            expensive=True,
            manual=True,
            exits=2,
        ),
        Example(
            "compare",
            "python -m repro compare --store store --tidy tidy.csv",
            expensive=True,
        ),
        # the first run on a fresh clone (no dataset configured: what ships,
        # into runs/store), then place
        Example(
            "reproduce",
            "python -m repro reproduce --no-progress --out report/REPORT.md",
            expensive=True,
            omit=REPORT_CUT,
        ),
        Example(
            "place-lite0",
            "python -m repro place --model efficientnet_lite0",
            expensive=True,
        ),
        Example(
            "place-lite0-external",
            "REPRO_CONFIG=docs/examples/lite0_external.toml python -m repro place "
            "--model efficientnet_lite0",
            env={"REPRO_CONFIG": str(ROOT / "docs" / "examples" / "lite0_external.toml")},
            expensive=True,
        ),
        Example(
            "probe-critical-band-lite1",
            "python -m repro probe critical-band --model efficientnet_lite1 "
            "--data ../shared/data/critical-band-masking/CBMSplit --device cpu",
            expensive=True,
            in_checkout=True,
        ),
        Example(
            "probe-shape-bias-lite0",
            "python -m repro probe shape-bias --model efficientnet_lite0 "
            "--data ../shared/data/texture-vs-shape/cue-conflict --device cpu",
            expensive=True,
            in_checkout=True,
        ),
        Example("nox-lint", "nox -s lint", expensive=True, in_checkout=True, inputs=LINTED),
        Example(
            "nox-typecheck",
            "nox -s typecheck",
            expensive=True,
            in_checkout=True,
            inputs=("repro", "pyproject.toml"),  # mypy reads them itself
            # mypy does not pass today (docs/nox.md says so): the capture shows that
            exits=1,
            collapse="repro/",
        ),
        Example("nox-gpu", "nox -s gpu", expensive=True, in_checkout=True),
        Example(
            "nox-claims",
            "nox -s claims -- -q -p no:cacheprovider",
            expensive=True,
            in_checkout=True,
        ),
        Example(
            "nox-bench",
            "nox -s bench",
            expensive=True,
            in_checkout=True,
            volatile=NUMBERS,
            manual=True,  # its speed ratios need an idle machine: recorded only when named
        ),
        Example(
            "throughput-lite0",
            "nox -s throughput -- --model efficientnet_lite0 --device cpu --limit 16 "
            "--out /tmp/repro-docs-throughput.json",
            expensive=True,
            in_checkout=True,
            volatile=NUMBERS,
        ),
        Example(
            "claims-power",
            "python -m repro claims --power --study gavrikov2024   # below the claims table:",
            [
                "sh",
                "-c",
                '"$0" -m repro claims --power --study gavrikov2024 | sed -n '
                '"/^gavrikov2024: the smallest '
                'shift/,/claims as recorded/p"',
                sys.executable,
            ],
            expensive=True,
            in_checkout=True,
        ),
        Example(
            "plan-confidence",
            "python -m repro plan --confidence 0.99",
            expensive=True,
            in_checkout=True,
        ),
        Example(
            "plan-measured",
            "python -m repro plan --throughput /tmp/repro-docs-throughput.json",
            expensive=True,
            in_checkout=True,
            # every figure follows from the measured throughput, and so does the order of the
            # stages over the budget
            volatile=NUMBERS + r"|over it: .*",
        ),
        Example(
            "mkdocs-build",
            "python -m mkdocs build --strict --site-dir /tmp/repro-docs-site",
            expensive=True,
            in_checkout=True,
        ),
        Example(
            "nox-tests",
            "nox -s tests -- -q -p no:cacheprovider",
            expensive=True,
            in_checkout=True,
            manual=True,  # the whole suite (tens of minutes on 2 cores): recorded only when named
        ),
        Example(
            "nox-real",
            "REPRO_STORE_DIR=STORE nox -s real -- --models efficientnet_lite0 "
            "--measurements shape_bias critical_band_16_premade",
            expensive=True,
            in_checkout=True,
            manual=True,
        ),
        Example(
            "nox-mutants",
            "python -m tests.mutation report",
            expensive=True,
            in_checkout=True,
            manual=True,
            max_lines=40,
        ),
        Example(
            "reproduce-mini",
            "python -m repro reproduce --mini --no-progress --work-dir mini-run "
            "--out mini-run/REPORT.md",
            expensive=True,
            omit=REPORT_CUT,
            collapse="warning: ",
        ),
    ]
    return cheap + expensive


def machine() -> str:
    """The machine class an expensive snippet was captured on (cores, CUDA device or not); the
    wall time beside it is indicative only (a shared machine's load is not a property of the
    command, and the pages do not keep it)."""
    gpu = "a CUDA device" if shutil.which("nvidia-smi") else "no CUDA device"
    return f"{os.cpu_count()} CPU cores ({platform.machine()}), {gpu}"


def _sanitize(text: str, scratch: Path | None) -> str:
    from repro.base.settings import data_dir

    pairs = []
    if scratch is not None:
        pairs.append((str(scratch.resolve()), "."))
        pairs.append((str(scratch), "."))
    if os.environ.get("REPRO_STORE_DIR"):
        pairs.append((os.environ["REPRO_STORE_DIR"], "STORE"))
    pairs += [
        (str(data_dir()), "../shared/data"),
        (os.environ["REPRO_CACHE_DIR"], "~/.cache/repro"),
        (str(ROOT), "."),
        (str(Path(sys.executable).parents[1]), ".venv"),
    ]
    for old, new in pairs:
        text = text.replace(old + "/", new + "/").replace(old, new)
    return text


def omit(lines: list[str], first: str, after: str, what: str) -> list[str]:
    """``lines`` with the part from the first line matching ``first`` up to the next line
    matching ``after`` (or the end) replaced by one line saying how many lines it had and what
    they are; unchanged when no line matches ``first``."""
    start = next((i for i, line in enumerate(lines) if re.match(first, line)), None)
    if start is None:
        return lines
    end = next((i for i in range(start + 1, len(lines)) if re.match(after, lines[i])), len(lines))
    return [*lines[:start], f"... ({end - start} lines: {what})", *lines[end:]]


def collapse(lines: list[str], prefix: str, keep: int = 2) -> list[str]:
    """Runs of more than ``keep`` consecutive lines starting with ``prefix`` shortened to their
    first ``keep`` lines and one line saying how many were left out."""
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, None]:
        if line is not None and line.startswith(prefix):
            run.append(line)
            continue
        out += (
            run
            if len(run) <= keep
            else [*run[:keep], f"... ({len(run) - keep} more lines starting with {prefix!r})"]
        )
        run = []
        if line is not None:
            out.append(line)
    return out


# a timing, which differs from run to run and with the machine's load: ignored when a rerun of an
# expensive example is compared with its page (the page keeps the figures it was captured with)
TIMING = (
    r"\s*(?:\bin an? (?:second|minute|hour)\b"
    r"|(?:\bin )?\d+(?:\.\d+)? ?(?:ms|s|seconds?|minutes?|hours?)\b|\(\d+:\d\d:\d\d\))"
)
# the volatile part of an example that prints timings only (numbers, and the autotune ranking,
# which is ordered by speed)
NUMBERS = r"^autotune \(.*|\s*\d[\d.,]*"


def masked(text: str, ex: Example) -> list[str]:
    """The lines of a block's text with what differs from run to run blanked: the header of an
    expensive example (its machine and wall time), its timings, and the example's ``volatile``
    parts."""
    out = []
    for line in text.split("\n"):
        if ex.expensive and line.startswith("# captured with"):
            line = "# captured with ..."
        elif ex.expensive:
            line = re.sub(TIMING, "(time)", line)
        if ex.volatile:
            line = re.sub(ex.volatile, "(volatile)", line)
        out.append(line)
    return out


def inputs_problem(
    ex: Example, body: str, where: str, lock: dict[str, dict], digests: capture_inputs.Digests
) -> str | None:
    """Why the kept capture of an expensive example may no longer be what the code prints (None:
    its recorded inputs are as they were when it was captured, and so is its text)."""
    rerun = f"run python docs/gen_cli_output.py --only {ex.name}"
    recorded = lock.get(ex.name)
    if recorded is None:
        return (
            f"{where}: example:{ex.name} has no recorded inputs in {capture_inputs.LOCK}: {rerun}"
        )
    if capture_inputs.text_digest(body) != recorded.get("output"):
        return (
            f"{where}: example:{ex.name} is not the text that was captured (edited by hand, or "
            f"captured without recording its inputs): {rerun}"
        )
    diff = capture_inputs.changed(recorded, digests)
    if not diff:
        return None
    more = f" and {len(diff) - 6} more" if len(diff) > 6 else ""
    return (
        f"{where}: example:{ex.name} is stale: changed since it was captured: "
        f"{', '.join(diff[:6])}{more}: {rerun}"
    )


def exit_problem(ex: Example, returncode: int, text: str) -> str | None:
    """Why the output of ``ex`` is not written (None: it is): it exited with another status than
    the one its page shows (``Example.exits``), e.g. an example of ``plan --throughput`` that
    failed on a missing file would otherwise document an error instead of the command."""
    if returncode == ex.exits:
        return None
    last = " | ".join(line for line in text.rstrip("\n").splitlines()[-3:])
    return (
        f"example {ex.name}: `{ex.shown}` exited {returncode}, expected {ex.exits}: its block is "
        f"left as it was (last lines: {last})"
    )


def run_example(ex: Example, scratch: Path | None, record: Path | None = None) -> tuple[str, int]:
    """The block text of ``ex`` and its exit status; with ``record``, every Python process of the
    command writes there the files it imported and opened (``docs/capture_hook``)."""
    env = dict(os.environ)
    env.update({"PYTHONPATH": str(ROOT), "COLUMNS": HELP_COLUMNS, "MPLBACKEND": "Agg", **ex.env})
    if record is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(HOOK), env["PYTHONPATH"]])
        env["REPRO_DOCS_INPUTS"] = str(record)
    cwd = scratch if ex.expensive and not ex.in_checkout and scratch is not None else ROOT
    start = time.perf_counter()
    proc = subprocess.run(
        ex.argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=3600,
    )
    seconds = time.perf_counter() - start
    lines = _sanitize(proc.stdout, scratch).rstrip("\n").splitlines()
    if ex.collapse:
        lines = collapse(lines, ex.collapse)
    for first, after, what in ex.omit:
        lines = omit(lines, first, after, what)
    if ex.max_lines is not None and len(lines) > ex.max_lines:
        lines = lines[: ex.max_lines] + [f"... ({len(lines) - ex.max_lines} more lines)"]
    head = []
    if ex.expensive:
        head.append(
            f"# captured with `python docs/gen_cli_output.py --expensive` on {machine()}; "
            f"{seconds:.0f} s wall here"
        )
    tail = [f"[exit status {proc.returncode}]"] if proc.returncode else []
    return "\n".join([*head, f"$ {ex.shown}", *lines, *tail]) + "\n", proc.returncode


@contextlib.contextmanager
def _scratch(keep: str | None) -> Iterator[Path]:
    if keep:
        path = Path(keep)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="repro-docs-") as tmp:
        yield Path(tmp)


class DocsError(Exception):
    """A page whose markers cannot be read (unmatched, nested, or
    hand-written text between them)."""


BEGIN = re.compile(r"^<!-- BEGIN generated (?P<name>\S+)(?P<attrs>(?: [\w-]+=\S+)*) -->$")
END = re.compile(r"^<!-- END generated (?P<name>\S+) -->$")
MARKER = re.compile(r"^<!-- (BEGIN|END) generated\b")
FENCE = re.compile(r"^(?P<ticks>`{3,})(?P<lang>\S*)$")
INCLUDE = re.compile(r'^(?P<ticks>`{3,})(?P<lang>\w*)\n--8<-- "(?P<path>[^"]+)"\n(?P=ticks)$', re.M)
LEFT_INCLUDE = re.compile(r"^--8<--", re.M)


@dataclass
class Block:
    """One generated block of a page: its name, the attributes of its BEGIN line, the fenced text
    between its markers (None when there is none yet) and the line numbers of
    its markers (from 0)."""

    where: str
    name: str
    attrs: dict[str, str]
    body: str | None
    begin: int
    end: int
    lang: str | None = None  # the fence's language as found (None for an empty block)


def pages(docs: Path | None = None) -> list[Path]:
    docs = docs or DOCS
    return sorted(p for p in docs.rglob("*.md") if docs / "snippets" not in p.parents)


def parse(text: str, where: str) -> list[Block]:
    """The generated blocks of a page, in order."""
    lines = text.split("\n")
    blocks: list[Block] = []
    opened: tuple[str, int, dict[str, str]] | None = None
    for i, line in enumerate(lines):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if opened:
                raise DocsError(
                    f"{where}:{i + 1}: BEGIN of {begin['name']} inside the block {opened[0]} "
                    f"opened on line {opened[1] + 1} (END it first)"
                )
            opened = (begin["name"], i, dict(a.split("=", 1) for a in begin["attrs"].split()))
        elif end:
            if opened is None or end["name"] != opened[0]:
                raise DocsError(f"{where}:{i + 1}: END of {end['name']} without its BEGIN line")
            name, first, attrs = opened
            body, lang = _body(lines[first + 1 : i], f"{where}:{first + 1}: block {name}")
            blocks.append(Block(where, name, attrs, body, first, i, lang))
            opened = None
        elif MARKER.match(line):
            raise DocsError(
                f"{where}:{i + 1}: malformed marker {line!r} (expected "
                "'<!-- BEGIN generated KIND:NAME -->' or '<!-- END generated KIND:NAME -->')"
            )
    if opened:
        raise DocsError(
            f"{where}:{opened[1] + 1}: block {opened[0]} has no END line "
            f"('<!-- END generated {opened[0]} -->')"
        )
    return blocks


def _body(inner: list[str], what: str) -> tuple[str | None, str | None]:
    while inner and not inner[0].strip():
        inner = inner[1:]
    while inner and not inner[-1].strip():
        inner = inner[:-1]
    if not inner:
        return None, None
    fence = FENCE.match(inner[0])
    if fence is None or len(inner) < 2 or inner[-1] != fence["ticks"]:
        raise DocsError(
            f"{what}: only the fenced output this script writes belongs between the markers "
            "(write text outside them; leave the block empty to have it filled)"
        )
    return "".join(line + "\n" for line in inner[1:-1]), fence["lang"] or "text"


def render(name: str, attrs: dict[str, str], body: str | None, lang: str = "text") -> list[str]:
    """The lines of a block from its BEGIN to its END line; the fence is longer than any run of
    backticks that starts a line of ``body``."""
    head = "".join(f" {k}={v}" for k, v in attrs.items())
    lines = [f"<!-- BEGIN generated {name}{head} -->"]
    if body is not None:
        text = body.rstrip("\n").split("\n")
        longest = max((len(m.group()) for line in text if (m := re.match(r"`+", line))), default=0)
        ticks = "`" * max(3, longest + 1)
        lines += [f"{ticks}{lang}", *text, ticks]
    return [*lines, f"<!-- END generated {name} -->"]


def default_lang(name: str) -> str:
    """The fence language of a new block: a file's suffix (``toml``), otherwise ``text``."""
    suffix = Path(name.partition(":")[2]).suffix.lstrip(".") if name.startswith("file:") else ""
    return suffix or "text"


def splice(text: str, blocks: list[Block], new: dict[str, tuple[str, dict[str, str]]]) -> str:
    """``text`` with the blocks named in ``new`` rewritten (``blocks``: the page's own, from
    ``parse``); every line outside the markers kept as it is."""
    lines = text.split("\n")
    for block in sorted(blocks, key=lambda b: b.begin, reverse=True):
        if block.name in new:
            body, attrs = new[block.name]
            lines[block.begin : block.end + 1] = render(
                block.name, attrs, body, block.lang or default_lang(block.name)
            )
    return "\n".join(lines)


def convert_includes(text: str, docs: Path | None = None) -> str:
    """The old format of the pages (a fence around one ``--8<-- "path"`` line, pymdownx.snippets
    with base paths ``docs/snippets`` then ``docs``) as generated blocks: ``help/X.txt`` becomes
    ``help:X``, ``examples/X.txt`` ``example:X`` (keeping the old file's text, so that an expensive
    example is not lost), any other file ``file:docs/<path>``."""
    docs = docs or DOCS
    legacy = docs / "snippets"

    def block(m: re.Match[str]) -> str:
        path = m["path"]
        if (legacy / path).is_file() and path.startswith("help/"):
            name, body = f"help:{Path(path).stem}", None
        elif (legacy / path).is_file():
            name, body = f"example:{Path(path).stem}", (legacy / path).read_text()
        else:
            name, body = f"file:{(docs / path).relative_to(docs.parent)}", None
        return "\n".join(render(name, {}, body, m["lang"] or "text"))

    return INCLUDE.sub(block, text)


def known(name: str, commands: set[str], example_names: set[str]) -> str | None:
    """Why a block name means nothing, or None."""
    kind, _, rest = name.partition(":")
    if kind == "help":
        return (
            None
            if name in commands
            else f"no command {rest!r} (help names: {', '.join(sorted(commands))})"
        )
    if kind == "example":
        return None if rest in example_names else f"no example {rest!r} (see --list)"
    if kind == "file":
        return None if (ROOT / rest).is_file() else f"no file {rest}"
    return f"unknown kind {kind!r} (help:, example: or file:)"


def kept(blocks: list[Block], name: str) -> tuple[tuple[str, dict[str, str]] | None, str | None]:
    """The output that the blocks named ``name`` already hold, for an example that is not rerun:
    (output, None), or (None, why not) when none has one or two pages disagree."""
    filled = [b for b in blocks if b.name == name and b.body is not None]
    short = name.partition(":")[2]
    if not filled:
        return None, f"{name} has no output yet: run python docs/gen_cli_output.py --only {short}"
    if len({(b.body, tuple(b.attrs.items())) for b in filled}) > 1:
        return None, (
            f"{name} differs between {', '.join(sorted({b.where for b in filled}))}: "
            f"rerun python docs/gen_cli_output.py --only {short}"
        )
    return (filled[0].body or "", filled[0].attrs), None


def stale(blocks: list[Block], new: dict[str, tuple[str, dict[str, str]]]) -> list[Block]:
    """The blocks whose text or attributes differ from ``new``."""
    return [b for b in blocks if b.name in new and (b.body, b.attrs) != new[b.name]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--expensive", action="store_true", help="also the examples that measure models (minutes)"
    )
    parser.add_argument(
        "--only",
        nargs="*",
        metavar="NAME",
        help="only these examples (names: --list; none: the help texts and files only)",
    )
    parser.add_argument("--list", action="store_true", help="list the examples and exit")
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare the blocks with what they would be, write nothing; exit 1 when one is stale",
    )
    parser.add_argument(
        "--scratch", help="folder for the expensive examples (default: a temporary one)"
    )
    args = parser.parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("REPRO_CACHE_DIR", tempfile.mkdtemp(prefix="repro-docs-cache-"))
    everything = examples()
    if args.list:
        for ex in everything:
            print(f"{ex.name:34s} {'expensive' if ex.expensive else 'cheap':9s} $ {ex.shown}")
        return 0
    by_name = {ex.name: ex for ex in everything}
    unknown = sorted(set(args.only or []) - set(by_name))
    if unknown:
        parser.error(f"unknown example(s) {', '.join(unknown)} (see --list)")
    if args.check and (args.expensive or any(by_name[n].expensive for n in args.only or [])):
        parser.error(
            "--check reruns only the cheap examples (an expensive one names its wall "
            "time and machine)"
        )

    texts = {str(page.relative_to(ROOT)): page.read_text() for page in pages()}
    problems: list[str] = []
    if args.check:
        for where, text in texts.items():
            for m in LEFT_INCLUDE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                problems.append(
                    f"{where}:{line}: an include line of the old format: run python "
                    "docs/gen_cli_output.py "
                    "to make it a generated block"
                )
    else:
        texts = {where: convert_includes(text) for where, text in texts.items()}
    try:
        blocks = [b for where, text in texts.items() for b in parse(text, where)]
    except DocsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    names = {b.name for b in blocks}
    commands = {help_name(words): words for words in [[], *command_paths()]}
    for block in blocks:
        why = known(block.name, set(commands), set(by_name))
        if why:
            problems.append(f"{block.where}:{block.begin + 1}: {block.name}: {why}")
    for name in sorted(set(commands) - names):
        problems.append(
            f"no page has the block {name}: add '<!-- BEGIN generated {name} -->' and "
            f"'<!-- END generated {name} -->' to docs/cli.md and run python docs/gen_cli_output.py"
        )
    for ex in everything:
        if f"example:{ex.name}" not in names:
            problems.append(
                f"the example {ex.name} is in no page: add its block "
                f"'<!-- BEGIN generated example:{ex.name} -->' ... or remove it from examples()"
            )

    new: dict[str, tuple[str, dict[str, str]]] = {}
    for name in sorted(n for n in names if n.startswith("file:") and (ROOT / n[5:]).is_file()):
        new[name] = ((ROOT / name[5:]).read_text(), {})
    for name in sorted(names & set(commands)):
        written_with = {b.attrs.get("python") for b in blocks if b.name == name} - {None}
        if args.check and written_with and written_with != {python_version()}:
            print(
                f"skipped {name}: written with Python {', '.join(sorted(written_with))}, this is "
                f"{python_version()} (argparse lays help out differently across versions)"
            )
            continue
        new[name] = (help_text(commands[name]), {"python": python_version()})
    if args.only is not None:  # `--only` with no names: the help texts and files only
        chosen = [by_name[n] for n in args.only]
    elif args.expensive:
        chosen = [ex for ex in everything if not ex.manual]
    else:
        chosen = [ex for ex in everything if not ex.expensive]
    chosen = [ex for ex in chosen if f"example:{ex.name}" in names]
    from repro.base.settings import data_dir

    lock = capture_inputs.load(ROOT)
    digests = capture_inputs.Digests(ROOT, data_dir())
    captured: dict[str, dict] = {}  # the lock entries of the expensive examples rerun
    files = capture_inputs.versioned(ROOT) if any(ex.expensive for ex in chosen) else None
    with _scratch(args.scratch) as scratch:
        for ex in chosen:
            print(f"running {ex.name}: $ {ex.shown}", flush=True)
            with contextlib.ExitStack() as stack:
                record = None
                if ex.expensive:
                    record = Path(stack.enter_context(tempfile.TemporaryDirectory()))
                    text, returncode = run_example(ex, scratch, record)
                else:
                    text, returncode = run_example(ex, scratch)
                why = exit_problem(ex, returncode, text)
                if why is not None:
                    problems.append(why)
                    continue
                before, _ = kept(blocks, f"example:{ex.name}")
                if before is not None and masked(before[0], ex) == masked(text, ex):
                    # the same output: the page keeps its text (its timings), less a load average
                    # an older header carried (a shared machine's load is no fact of the command)
                    text = re.sub(r", load \d+(?:\.\d+)?(?=;)", "", before[0], count=1)
                new[f"example:{ex.name}"] = (text, {})
                if record is not None:
                    paths = capture_inputs.recorded(record)
                    if not paths:
                        problems.append(
                            f"example {ex.name}: its inputs were not recorded (docs/capture_hook "
                            "did not run in its Python processes)"
                        )
                        continue
                    keys = capture_inputs.keys_of(paths, ROOT, data_dir(), files) | set(ex.inputs)
                    captured[ex.name] = capture_inputs.entry(text, keys, digests)
    for name in sorted(
        n for n in names if n.startswith("example:") and n not in new and n[8:] in by_name
    ):
        output, why = kept(blocks, name)
        if output is None:
            problems.append(str(why))
        else:
            new[name] = output
    # the expensive captures not rerun: their recorded inputs as they were when captured
    unchecked, inputs_changed = [], []
    for ex in everything:
        name = f"example:{ex.name}"
        if not ex.expensive or ex.name in captured or name not in new:
            continue
        first = min((b for b in blocks if b.name == name), key=lambda b: (b.where, b.begin))
        why = inputs_problem(ex, new[name][0], f"{first.where}:{first.begin + 1}", lock, digests)
        if why and ex.manual and ex.name not in lock:
            unchecked.append(ex.name)
        elif why:
            inputs_changed.append(why)

    out_of_date = stale(blocks, new)
    if unchecked:
        print(
            f"not checked (run only when named with --only, no recorded inputs yet): "
            f"{', '.join(unchecked)}"
        )
    if args.check:
        problems += inputs_changed
        for block in out_of_date:
            what = "empty" if block.body is None else "stale"
            problems.append(
                (
                    f"{block.where}:{block.begin + 1}: {block.name} is {what}: run python "
                    "docs/gen_cli_output.py"
                )
                + (f" --only {block.name[8:]}" if block.name.startswith("example:") else "")
            )
    else:
        for where in texts:
            # the page as it is now, not as it was read at the start: a prose edit made while a
            # long capture ran is kept (only the generated blocks are replaced)
            before = (ROOT / where).read_text()
            current = convert_includes(before)
            try:
                own = parse(current, where)
            except DocsError as err:
                print(f"error: {where} changed while capturing: {err}", file=sys.stderr)
                return 2
            updated = splice(current, own, new)
            if updated != before:
                (ROOT / where).write_text(updated)
                converted = ", include lines converted" if LEFT_INCLUDE.search(before) else ""
                rewritten = {b.name for b in out_of_date if b.where == where}
                print(
                    f"updated {where} ({sum(b.name in rewritten for b in own)} block(s){converted})"
                )
        print(f"{len(out_of_date)} block(s) changed")
        lock.update(captured)
        known_names = {ex.name for ex in everything}
        if capture_inputs.save(ROOT, {k: v for k, v in lock.items() if k in known_names}):
            print(f"updated {capture_inputs.LOCK} ({len(captured)} capture(s) recorded)")
        for why in inputs_changed:
            print(f"warning: {why}", file=sys.stderr)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if args.check and not problems:
        rerun = sum(1 for ex in chosen if not ex.expensive)
        checked = sum(1 for ex in everything if ex.expensive and ex.name in lock)
        print(
            f"{len(blocks)} generated block(s) in {len(texts)} page(s) are current "
            f"({rerun} example(s) rerun, {checked} checked by their recorded inputs)"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
