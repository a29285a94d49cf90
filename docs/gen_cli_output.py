"""Docs: write the real command-line output that the documentation includes (``docs/snippets/``),
so that the pages show what the code prints today and not what it printed once.

- ``snippets/help/<command>.txt``: ``python -m repro <command> --help`` for every command and
  subcommand of the real parser (``repro.txt``: ``python -m repro --help``) (``repro.cli.build_parser``), at 100 columns;
  ``tests/unit/test_docs_complete.py`` fails when one is missing, stale or not included by a page.
- ``snippets/examples/<name>.txt``: the cheap example commands (published data only, a few
  seconds each), run for real in a subprocess; the nox session ``docs`` reruns them.
- ``--expensive`` also runs the examples that measure models (mini data, tiny random models,
  minutes on a CPU); their snippets name the machine they were captured on and are kept until
  rerun with ``--expensive``. ``nox-real`` (the study's session ``real``, hours on a CPU) runs
  only when named with ``--only``; its snippet shows the store as ``STORE``.

Paths of the machine that ran the command are written relative to the checkout: the checkout
as ``.``, the data directory as ``../shared/data``, the user cache as ``~/.cache/repro``, the
scratch folder of the expensive examples as ``.`` (they run in it). A command that exits
non-zero ends its snippet with ``[exit status N]``.

    python docs/gen_cli_output.py                  # help texts and the cheap examples
    python docs/gen_cli_output.py --expensive      # and the measuring ones (minutes)
    python docs/gen_cli_output.py --only claims models   # just these examples
    REPRO_STORE_DIR=STORE python docs/gen_cli_output.py --only nox-real   # hours unless STORE is complete
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "docs" / "snippets"
HELP_COLUMNS = "100"
MVH = "../shared/data/model-vs-human/cue-conflict"
PRED = "../shared/data/imagenetx/model_predictions/ResNet50.csv"
CBM = "../shared/data/critical-band-masking/network_data"


def command_paths() -> list[list[str]]:
    """Every command of ``python -m repro`` as its words (``["data", "fetch"]``), in parser order."""
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


def help_snippet(words: list[str]) -> Path:
    """Where the help text of ``words`` is kept."""
    return SNIPPETS / "help" / f"{'-'.join(words) or 'repro'}.txt"


@dataclass
class Example:
    """One example command: ``shown`` is what the page prints after ``$``; ``argv`` what runs."""

    name: str
    shown: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    expensive: bool = False
    max_lines: int | None = None  # keep the first lines only (the snippet says how many were left out)
    in_checkout: bool = False  # an expensive example that runs in the checkout, not in the scratch folder
    collapse: str | None = None  # runs of more than 2 lines starting with this are shortened to 2 and a count
    manual: bool = False  # too long even for --expensive (hours on a CPU): run only when named with --only


def _repro(*args: str) -> list[str]:
    return [sys.executable, "-m", "repro", *args]


def examples() -> list[Example]:
    """The example commands of the pages, cheap ones first, then the expensive ones in the order
    they depend on each other (mini data -> probes -> measure -> compare -> reproduce)."""
    nox = [str(Path(sys.executable).with_name("nox")), "--noxfile", str(ROOT / "noxfile.py")]
    cheap = [
        Example("claims", "python -m repro claims", _repro("claims")),
        Example("claims-variant", "python -m repro claims --analysis docs/examples/no_stylized.toml",
                _repro("claims", "--analysis", "docs/examples/no_stylized.toml")),
        Example("claims-missing-data", "REPRO_DATA_DIR=/tmp/nodata python -m repro claims",
                _repro("claims"), env={"REPRO_DATA_DIR": "/tmp/nodata"}),
        Example("models", "python -m repro models", _repro("models")),
        Example("measure-list", "python -m repro measure --list", _repro("measure", "--list")),
        Example("config", "python -m repro config", _repro("config")),
        Example("data-fetch", "python -m repro data fetch", _repro("data", "fetch")),
        Example("data-verify", "python -m repro data verify", _repro("data", "verify")),
        Example("data-check", "python -m repro data check", _repro("data", "check")),
        Example("score-shape-bias", f"python -m repro score shape-bias {MVH}/cue-conflict_resnet50_session-1.csv --json",
                _repro("score", "shape-bias", f"{MVH}/cue-conflict_resnet50_session-1.csv", "--json")),
        Example("score-shape-bias-human", f"python -m repro score shape-bias {MVH}/cue-conflict_subject-01_session_1.csv",
                _repro("score", "shape-bias", f"{MVH}/cue-conflict_subject-01_session_1.csv")),
        Example("score-critical-band", "python -m repro score critical-band 0,0,0,0,2,2,0 --json",
                _repro("score", "critical-band", "0,0,0,0,2,2,0", "--json")),
        Example("score-critical-band-flat", "python -m repro score critical-band 4,4,4,4,4,4,4 --json",
                _repro("score", "critical-band", "4,4,4,4,4,4,4", "--json")),
        Example("score-critical-band-bad", "python -m repro score critical-band 0,0,0,0,2,2,5",
                _repro("score", "critical-band", "0,0,0,0,2,2,5")),
        Example("score-critical-band-grid",
                f"python -m repro score critical-band --grid {CBM}/solomon_resnet50_accuracies_2023-04-10T18:02:55.json",
                _repro("score", "critical-band", "--grid",
                       f"{CBM}/solomon_resnet50_accuracies_2023-04-10T18:02:55.json")),
        Example("claims-subramanian2023", "python -m repro claims --study subramanian2023",
                _repro("claims", "--study", "subramanian2023")),
        Example("score-benchmark", f"python -m repro score benchmark --predictions {PRED} --benchmark imagenet --json",
                _repro("score", "benchmark", "--predictions", PRED, "--benchmark", "imagenet", "--json")),
        Example("score-benchmark-real", f"python -m repro score benchmark --predictions {PRED} --benchmark real",
                _repro("score", "benchmark", "--predictions", PRED, "--benchmark", "real")),
        Example("score-benchmark-real-last-batch",
                f"python -m repro score benchmark --predictions {PRED} --benchmark real_last_batch",
                _repro("score", "benchmark", "--predictions", PRED, "--benchmark", "real_last_batch")),
        Example("score-imagenet-x", f"python -m repro score imagenet-x --predictions {PRED}",
                _repro("score", "imagenet-x", "--predictions", PRED)),
        Example("plan", "python -m repro plan --device h200 --gpus 8", _repro("plan", "--device", "h200", "--gpus", "8")),
        Example("report", "python -m repro report --out /tmp/repro-docs-report/REPORT.md",
                _repro("report", "--out", "/tmp/repro-docs-report/REPORT.md")),
        Example("nox-list", "nox -l", [*nox, "-l"]),
    ]
    mini_env = {"REPRO_CONFIG": "MINI/repro.toml"}
    expensive = [
        Example("pytest-claims-shape-bias", "python -m pytest -m claims -k shape_bias -q -p no:cacheprovider",
                [sys.executable, "-m", "pytest", "-m", "claims", "-k", "shape_bias", "-q", "-p", "no:cacheprovider"],
                expensive=True, in_checkout=True),
        Example("make-mini", "python -m repro data make-mini MINI --datasets imagenet_val cue_conflict --per-class 1",
                _repro("data", "make-mini", "MINI", "--datasets", "imagenet_val", "cue_conflict", "--per-class", "1"),
                expensive=True),
        Example("data-check-mini", "REPRO_CONFIG=MINI/repro.toml python -m repro data check imagenet_val cue_conflict",
                _repro("data", "check", "imagenet_val", "cue_conflict"), env=mini_env, expensive=True),
        Example("probe-spectral", "python -m repro probe spectral --model tiny_random_a --data MINI/imagenet_val --device cpu",
                _repro("probe", "spectral", "--model", "tiny_random_a", "--data", "MINI/imagenet_val", "--device", "cpu"),
                expensive=True),
        Example("probe-critical-band", "python -m repro probe critical-band --model tiny_random_a "
                "--data MINI/imagenet_val --device cpu --seed 0 --out counts.csv",
                _repro("probe", "critical-band", "--model", "tiny_random_a", "--data", "MINI/imagenet_val",
                       "--device", "cpu", "--seed", "0", "--out", "counts.csv"), expensive=True),
        Example("probe-wrong-data", "python -m repro probe spectral --model tiny_random_a --data MINI/cue_conflict",
                _repro("probe", "spectral", "--model", "tiny_random_a", "--data", "MINI/cue_conflict"), expensive=True),
        Example("measure-mini", "REPRO_CONFIG=MINI/repro.toml python -m repro measure --models tiny_random_a "
                "tiny_random_b --measurements imagenet imagenet_real shape_bias --store store --device cpu --no-progress",
                _repro("measure", "--models", "tiny_random_a", "tiny_random_b", "--measurements", "imagenet",
                       "imagenet_real", "shape_bias", "--store", "store", "--device", "cpu", "--no-progress"),
                env=mini_env, expensive=True),
        Example("measure-mini-again", "REPRO_CONFIG=MINI/repro.toml REPRO_IMAGENET_SKETCH_ROOT=/tmp/nowhere "
                "python -m repro measure --models tiny_random_a tiny_random_b --measurements imagenet imagenet_real "
                "shape_bias imagenet_sketch --store store --device cpu --no-progress",
                _repro("measure", "--models", "tiny_random_a", "tiny_random_b", "--measurements", "imagenet",
                       "imagenet_real", "shape_bias", "imagenet_sketch", "--store", "store", "--device", "cpu",
                       "--no-progress"), env={**mini_env, "REPRO_IMAGENET_SKETCH_ROOT": "/tmp/nowhere"},
                expensive=True),
        Example("compare", "python -m repro compare --store store --tidy tidy.csv",
                _repro("compare", "--store", "store", "--tidy", "tidy.csv"), expensive=True),
        Example("probe-shape-bias-lite0", "python -m repro probe shape-bias --model efficientnet_lite0 "
                "--data ../shared/data/texture-vs-shape/cue-conflict --device cpu",
                _repro("probe", "shape-bias", "--model", "efficientnet_lite0", "--data",
                       "../shared/data/texture-vs-shape/cue-conflict", "--device", "cpu"),
                expensive=True, in_checkout=True),
        Example("nox-lint", "nox -s lint", [*nox, "-s", "lint"], expensive=True, in_checkout=True),
        Example("nox-typecheck", "nox -s typecheck", [*nox, "-s", "typecheck"], expensive=True, in_checkout=True),
        Example("nox-gpu", "nox -s gpu", [*nox, "-s", "gpu"], expensive=True, in_checkout=True),
        Example("nox-claims", "nox -s claims -- -q -p no:cacheprovider", [*nox, "-s", "claims", "--", "-q", "-p",
                "no:cacheprovider"], expensive=True, in_checkout=True),
        Example("nox-bench", "nox -s bench", [*nox, "-s", "bench"], expensive=True, in_checkout=True),
        Example("throughput-lite0", "nox -s throughput -- --model efficientnet_lite0 --device cpu --limit 16 "
                "--out /tmp/repro-docs-throughput.json",
                [*nox, "-s", "throughput", "--", "--model", "efficientnet_lite0", "--device", "cpu", "--limit", "16",
                 "--out", "/tmp/repro-docs-throughput.json"], expensive=True, in_checkout=True),
        Example("plan-measured", "python -m repro plan --throughput /tmp/repro-docs-throughput.json",
                _repro("plan", "--throughput", "/tmp/repro-docs-throughput.json"),
                expensive=True, in_checkout=True),
        Example("mkdocs-build", "python -m mkdocs build --strict --site-dir /tmp/repro-docs-site",
                [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", "/tmp/repro-docs-site"],
                expensive=True, in_checkout=True),
        Example("nox-tests", "nox -s tests -- -q -p no:cacheprovider",
                [*nox, "-s", "tests", "--", "-q", "-p", "no:cacheprovider"], expensive=True, in_checkout=True),
        Example("nox-real", "REPRO_STORE_DIR=STORE nox -s real", [*nox, "-s", "real"], expensive=True,
                in_checkout=True, manual=True),
        Example("reproduce-mini", "python -m repro reproduce --mini --no-progress --work-dir mini-run "
                "--out mini-run/REPORT.md",
                _repro("reproduce", "--mini", "--no-progress", "--work-dir", "mini-run", "--out", "mini-run/REPORT.md"),
                expensive=True, collapse="warning: "),
    ]
    return cheap + expensive


def machine() -> str:
    """The machine class an expensive snippet was captured on (cores, CUDA device or not)."""
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
    pairs += [(str(data_dir()), "../shared/data"), (os.environ["REPRO_CACHE_DIR"], "~/.cache/repro"),
              (str(ROOT), "."), (str(Path(sys.executable).parents[1]), ".venv")]
    for old, new in pairs:
        text = text.replace(old + "/", new + "/").replace(old, new)
    return text


def collapse(lines: list[str], prefix: str, keep: int = 2) -> list[str]:
    """Runs of more than ``keep`` consecutive lines starting with ``prefix`` shortened to their
    first ``keep`` lines and one line saying how many were left out."""
    out: list[str] = []
    run: list[str] = []
    for line in [*lines, None]:
        if line is not None and line.startswith(prefix):
            run.append(line)
            continue
        out += run if len(run) <= keep else [*run[:keep], f"... ({len(run) - keep} more lines starting with {prefix!r})"]
        run = []
        if line is not None:
            out.append(line)
    return out


def run_example(ex: Example, scratch: Path | None) -> str:
    env = dict(os.environ)
    env.update({"PYTHONPATH": str(ROOT), "COLUMNS": HELP_COLUMNS, "MPLBACKEND": "Agg", **ex.env})
    cwd = scratch if ex.expensive and not ex.in_checkout and scratch is not None else ROOT
    start = time.perf_counter()
    proc = subprocess.run(ex.argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=3600)
    seconds = time.perf_counter() - start
    lines = _sanitize(proc.stdout, scratch).rstrip("\n").splitlines()
    if ex.collapse:
        lines = collapse(lines, ex.collapse)
    if ex.max_lines is not None and len(lines) > ex.max_lines:
        lines = lines[:ex.max_lines] + [f"... ({len(lines) - ex.max_lines} more lines)"]
    head = []
    if ex.expensive:
        head.append(f"# captured with `python docs/gen_cli_output.py --expensive` on {machine()}; "
                    f"{seconds:.0f} s wall here")
    tail = [f"[exit status {proc.returncode}]"] if proc.returncode else []
    return "\n".join([*head, f"$ {ex.shown}", *lines, *tail]) + "\n"


@contextlib.contextmanager
def _scratch(keep: str | None) -> Iterator[Path]:
    if keep:
        path = Path(keep)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="repro-docs-") as tmp:
        yield Path(tmp)


def write(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` if it differs; True when the file changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expensive", action="store_true", help="also the examples that measure models (minutes)")
    parser.add_argument("--only", nargs="*", metavar="NAME", help="only these examples (names: --list)")
    parser.add_argument("--list", action="store_true", help="list the examples and exit")
    parser.add_argument("--scratch", help="folder for the expensive examples (default: a temporary one)")
    args = parser.parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("REPRO_CACHE_DIR", tempfile.mkdtemp(prefix="repro-docs-cache-"))
    chosen = examples()
    if args.list:
        for ex in chosen:
            print(f"{ex.name:34s} {'expensive' if ex.expensive else 'cheap':9s} $ {ex.shown}")
        return 0
    changed = []
    if not args.only:
        for words in [[], *command_paths()]:
            if write(help_snippet(words), help_text(words)):
                changed.append(help_snippet(words))
        made_with = SNIPPETS / "help" / "_python.txt"  # argparse's layout differs between Python versions
        if write(made_with, f"{sys.version_info.major}.{sys.version_info.minor}\n"):
            changed.append(made_with)
    if args.only:
        unknown = sorted(set(args.only) - {ex.name for ex in chosen})
        if unknown:
            parser.error(f"unknown example(s) {', '.join(unknown)} (see --list)")
        chosen = [ex for ex in chosen if ex.name in args.only]
    elif not args.expensive:
        chosen = [ex for ex in chosen if not ex.expensive]
    else:
        chosen = [ex for ex in chosen if not ex.manual]
    with _scratch(args.scratch) as scratch:
        for ex in chosen:
            print(f"running {ex.name}: $ {ex.shown}", flush=True)
            path = SNIPPETS / "examples" / f"{ex.name}.txt"
            if write(path, run_example(ex, scratch)):
                changed.append(path)
    for path in changed:
        print(f"updated {path.relative_to(ROOT)}")
    print(f"{len(changed)} snippet(s) changed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
