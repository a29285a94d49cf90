"""Mutation testing (``nox -s mutants``): run mutmut 3 over the modules of ``[tool.mutmut]`` in
pyproject.toml and report the kill rate per module and every surviving mutant.

    python -m tests.mutation run [--children N] [--survivors | --recheck | NAME ...]
    python -m tests.mutation report [--all]
    python -m tests.mutation save

``run`` calls ``mutmut run`` (resumable: results live in ``mutants/``, so an interrupted run
continues where it stopped; a changed function's mutants are tested again), with its progress
output written to ``mutants/mutmut-run.log``, then prints the report. ``--survivors`` tests the
surviving mutants again (after tests were added to kill them: mutmut keeps a result until the
mutated function changes). ``report`` prints the report only.

Across machines and sessions: ``run`` writes the results to ``tests/mutants_results.json``
(committed; ``save`` writes it from ``mutants/`` alone), per module and function the function's
source hash and its mutants' exit codes; a run on a checkout without ``mutants/`` seeds it from
that file, and mutmut keeps the result of every function whose hash is unchanged. ``report``
reads ``mutants/``, else that file.

Kill rate = detected / tested, detected = killed + timeout + segfault (a mutant that makes the
tests fail, hang or crash), tested = detected + survived; mutants that no selected test runs
("no tests") are counted apart and listed with the survivors: they are not killed.

Survivors explained as equivalent (behaviour identical to the original for every input the
code can receive), or as outside the decision paths (error-message text, file handling, device
placement), are listed with a one-line reason in ``tests/mutants_equivalent.md`` (lines
``- `<mutant name or glob>`: <reason>``); the report marks them and counts the rest as
unexplained.

Scope: the modules of ``only_mutate`` (mutmut mutates code inside functions only: module-level
data such as the measurement registry's protocol parameters is checked by
``tests/unit/test_measurement_contract.py`` instead). Results of modules dropped from the scope
are ignored by the report.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
EQUIVALENT = ROOT / "tests" / "mutants_equivalent.md"
#: the results, committed: per module, each function's source hash and its mutants' exit codes
SNAPSHOT = ROOT / "tests" / "mutants_results.json"
MUTANT_NAME = re.compile(r"^(?P<module>.+?)\.(?P<function>x[^.]*?)__mutmut_(?P<n>\d+)$")

DETECTED = {"killed", "timeout", "segfault"}
STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "segfault",
    -9: "segfault",
    37: "caught by type check",
    2: "interrupted",
    None: "not checked",
}


def status(code: int | None) -> str:
    return STATUS.get(code, "suspicious")


def scope() -> list[str]:
    """The ``only_mutate`` patterns of ``[tool.mutmut]`` in pyproject.toml."""
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]


def _in_scope(module: str, patterns: list[str] | None = None) -> bool:
    from fnmatch import fnmatch

    return any(fnmatch(module, p) for p in (scope() if patterns is None else patterns))


def _metas() -> dict[str, dict]:
    """{module: mutmut's meta document} of ``mutants/**/*.py.meta``, for the scope's modules."""
    out = {}
    patterns = scope()
    for meta in sorted(MUTANTS.rglob("*.py.meta")):
        module = str(meta.relative_to(MUTANTS))[: -len(".meta")]
        if _in_scope(module, patterns):
            out[module] = json.loads(meta.read_text())
    return out


def results() -> dict[str, dict[str, str]]:
    """{module: {mutant name: status}} from mutmut's ``mutants/**/*.py.meta`` files, else from
    the committed snapshot, for the modules in the current scope only (results of modules
    dropped from it are ignored)."""
    patterns = scope()
    metas = _metas() or {
        m: _meta_of(m, fns) for m, fns in _snapshot().items() if _in_scope(m, patterns)
    }
    out: dict[str, dict[str, str]] = {}
    for module, meta in metas.items():
        codes = meta.get("exit_code_by_key", {})
        if codes:
            out[module] = {name: status(code) for name, code in codes.items()}
    return out


def _snapshot() -> dict[str, dict[str, dict]]:
    return json.loads(SNAPSHOT.read_text()) if SNAPSHOT.is_file() else {}


def _dotted(module: str) -> str:
    return module[: -len(".py")].replace("/", ".")


def _meta_of(module: str, functions: dict[str, dict]) -> dict:
    """mutmut's meta document of ``module`` from its snapshot entry."""
    dotted = _dotted(module)
    return {
        "exit_code_by_key": {
            f"{dotted}.{fn}__mutmut_{i}": code
            for fn, entry in functions.items()
            for i, code in enumerate(entry["codes"], start=1)
        },
        "hash_by_function_name": {fn: entry["hash"] for fn, entry in functions.items()},
        "type_check_error_by_key": {},
        "durations_by_key": {},
        "estimated_durations_by_key": {},
    }


def save_snapshot() -> int:
    """Write the scope's results to ``tests/mutants_results.json`` (committed, so that a later run
    on another machine resumes): per module and function, the function's source hash (mutmut's)
    and its mutants' exit codes in mutant order. Returns the number of mutants written."""
    doc: dict[str, dict[str, dict]] = {}
    for module, meta in _metas().items():
        by_function: dict[str, dict[int, int | None]] = {}
        for name, code in meta.get("exit_code_by_key", {}).items():
            m = MUTANT_NAME.match(name)
            if m is None or m["module"] != _dotted(module):
                raise ValueError(f"{module}: unexpected mutant name {name!r}")
            by_function.setdefault(m["function"], {})[int(m["n"])] = code
        hashes = meta.get("hash_by_function_name", {})
        doc[module] = {
            fn: {"hash": hashes.get(fn), "codes": [codes.get(i) for i in range(1, max(codes) + 1)]}
            for fn, codes in sorted(by_function.items())
        }
    if not doc:
        return 0
    SNAPSHOT.write_text(json.dumps(doc, indent=0, sort_keys=True, ensure_ascii=False) + "\n")
    return sum(len(e["codes"]) for fns in doc.values() for e in fns.values())


def restore_snapshot() -> list[str]:
    """Seed ``mutants/`` with the committed results of the modules it has no results of.

    mutmut then regenerates those modules' mutants and keeps each unchanged function's results
    (it compares the function hashes); the changed functions' mutants are tested again. Returns
    the modules seeded."""
    seeded = []
    patterns = scope()
    for module, functions in _snapshot().items():
        meta = MUTANTS / (module + ".meta")
        if not _in_scope(module, patterns) or meta.exists() or (MUTANTS / module).exists():
            continue
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(json.dumps(_meta_of(module, functions), indent=4))
        seeded.append(module)
    return seeded


def admit_new_modules() -> list[str]:
    """Make mutmut mutate the modules that joined ``only_mutate`` since ``mutants/`` was made.

    mutmut copied such a module unmutated and regenerates a file only when its source is newer
    than the copy, so the copy is removed; and it maps tests to functions only for tests it has
    not seen, so its test mapping (``mutmut-stats.json``) is removed too and collected again in
    full (about 4 minutes on 2 cores). Returns the modules admitted."""
    if not (MUTANTS / "repro").is_dir():
        return []
    patterns = scope()
    added = []
    for path in sorted((MUTANTS / "repro").rglob("*.py")):
        module = str(path.relative_to(MUTANTS))
        meta = MUTANTS / (module + ".meta")
        if _in_scope(module, patterns) and (not meta.exists() or _unmutated_copy(path, meta)):
            path.unlink()
            meta.unlink(missing_ok=True)
            added.append(module)
    stats = MUTANTS / "mutmut-stats.json"
    if added and stats.exists():
        stats.unlink()
    return added


def _unmutated_copy(path: Path, meta: Path) -> bool:
    """A module with mutants recorded whose copy holds none of them.

    A module dropped from the scope and admitted again: mutmut copied it unmutated while it was
    out, kept its old ``.meta``, and would report its mutants as having no tests."""
    try:
        recorded = json.loads(meta.read_text()).get("exit_code_by_key", {})
    except (OSError, ValueError):
        return True
    return bool(recorded) and "__mutmut_" not in path.read_text()


OUTSIDE_HEADING = "## Outside the decision paths"


def equivalent() -> dict[str, str]:
    """{mutant name or glob: reason} from ``tests/mutants_equivalent.md``: lines
    ``- `<name or glob>`: <reason>``. Under the heading "## Outside the decision paths" the
    reason is prefixed ``outside the decision paths:`` (error-message text, file I/O, device
    placement: reported, not counted as unexplained decision-path survivors)."""
    if not EQUIVALENT.is_file():
        return {}
    pattern = re.compile(r"^- `([^`]+)`: (.+)$")
    out: dict[str, str] = {}
    outside = False
    for line in EQUIVALENT.read_text().splitlines():
        if line.startswith("## "):
            outside = line.strip() == OUTSIDE_HEADING
        elif m := pattern.match(line):
            out[m.group(1)] = (
                "outside the decision paths: " if outside else "equivalent: "
            ) + m.group(2).strip()
    return out


def explained(name: str, eq: dict[str, str]) -> str | None:
    """The reason ``name`` survives (exact entry first, then the first matching glob), or None."""
    from fnmatch import fnmatchcase

    if name in eq:
        return eq[name]
    return next((reason for pattern, reason in eq.items() if fnmatchcase(name, pattern)), None)


def rate(counts: Counter) -> tuple[int, int, float]:
    detected = sum(counts[s] for s in DETECTED)
    tested = detected + counts["survived"]
    return detected, tested, (detected / tested if tested else float("nan"))


def report(show_all: bool = False) -> int:
    """Print the kill rate per module and overall, and the survivors; returns the number of
    survivors (and untested mutants) not explained as equivalent."""
    res = results()
    if not res:
        print("no mutation results yet: run `nox -s mutants`")
        return 0
    eq = equivalent()
    total: Counter = Counter()
    print(
        f"{'module':42s} {'mutants':>7s} {'killed':>7s} {'timeout':>7s} {'survived':>8s} "
        f"{'no tests':>8s} "
        f"{'pending':>7s}  kill rate"
    )
    for module, by_name in res.items():
        counts = Counter(by_name.values())
        total.update(counts)
        detected, tested, r = rate(counts)
        print(
            f"{module:42s} {len(by_name):7d} {counts['killed']:7d} "
            f"{counts['timeout']:7d} {counts['survived']:8d} "
            f"{counts['no tests']:8d} {counts['not checked']:7d}  "
            + ("-" if not tested else f"{r:.1%} ({detected}/{tested})")
        )
    detected, tested, r = rate(total)
    print(
        f"{'TOTAL':42s} {sum(total.values()):7d} {total['killed']:7d} "
        f"{total['timeout']:7d} {total['survived']:8d} "
        f"{total['no tests']:8d} {total['not checked']:7d}  "
        + ("-" if not tested else f"{r:.1%} ({detected}/{tested})")
    )
    if total["timeout"]:
        strict = (
            total["killed"] / (total["killed"] + total["survived"])
            if total["killed"] + total["survived"]
            else 0
        )
        print(f"kill rate counting only killed vs survived (timeouts left out): {strict:.1%}")
    if sum(total.values()):
        print(
            "detected of ALL mutants (untested and pending count as not detected): "
            f"{detected / sum(total.values()):.1%}"
        )
    others = {
        s: n
        for s, n in total.items()
        if s not in DETECTED | {"survived", "no tests", "not checked"}
    }
    if others:
        print("other outcomes: " + ", ".join(f"{s} {n}" for s, n in sorted(others.items())))
    unexplained = outside = equivalent_survivors = 0
    shown = ("survived", "no tests", "suspicious") if not show_all else tuple(set(STATUS.values()))
    print("\nsurvivors (with their reason where tests/mutants_equivalent.md gives one):")
    for by_name in res.values():
        for name, st in by_name.items():
            if st not in shown:
                continue
            reason = explained(name, eq)
            if reason is None:
                unexplained += 1
            elif reason.startswith("outside"):
                outside += 1
            elif st == "survived":
                equivalent_survivors += 1
            where, change = describe(name)
            print(f"  {st:9s} {name}  {where}  {change}" + (f"  [{reason}]" if reason else ""))
    print(
        f"\nsurvivors outside the decision paths: {outside}; unexplained survivors: {unexplained} "
        "(show one: .venv/bin/python -m mutmut show NAME)"
    )
    detected, tested, _ = rate(total)
    if tested > equivalent_survivors:
        print(
            f"mutation score, the {equivalent_survivors} survivors explained as equivalent left "
            f"out (no test can kill them): {detected / (tested - equivalent_survivors):.1%} "
            f"({detected}/{tested - equivalent_survivors})"
        )
    return unexplained


_TREES: dict[Path, tuple[list[str], dict[str, ast.FunctionDef | ast.AsyncFunctionDef]]] = {}


def _functions(path: Path) -> tuple[list[str], dict[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The lines of ``path`` and its function definitions by qualified name (``C.f`` and the
    bare name ``f`` for methods too, for mutmut's generated ``xǁCǁf`` functions)."""
    if path not in _TREES:
        text = path.read_text()
        defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

        def visit(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    defs.setdefault(f"{prefix}{child.name}", child)
                    defs.setdefault(child.name, child)

        visit(ast.parse(text), "")
        _TREES[path] = (text.splitlines(), defs)
    return _TREES[path]


def describe(name: str) -> tuple[str, str]:
    """``(module:line, change)`` of a mutant: the first source line it changes, as ``old -> new``
    (read from mutmut's generated ``mutants/`` copy, against the original function)."""
    m = re.match(r"^(.*)\.(x(?:ǁ([^ǁ]+)ǁ)?(\w+?))__mutmut_(\d+)$", name)
    if not m:
        return "?", "?"
    module, generated, cls, func = m.group(1), m.group(2), m.group(3), m.group(4)
    func = func if cls else func[1:]  # x_<name> for a function, xǁ<class>ǁ<name> for a method
    rel = Path(*module.split(".")).with_suffix(".py")
    try:
        lines, defs = _functions(MUTANTS / rel)
        orig, mutant = defs[f"{generated}__mutmut_orig"], defs[name.rsplit(".", 1)[1]]
    except (OSError, KeyError, SyntaxError):
        return str(rel), "?"
    a = lines[orig.lineno - 1 : orig.end_lineno]
    b = lines[mutant.lineno - 1 : mutant.end_lineno]
    a[0], b[0] = (
        a[0].replace(f"{generated}__mutmut_orig", ""),
        b[0].replace(name.rsplit(".", 1)[1], ""),
    )
    diff = [(i, x, y) for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    if not diff and len(a) == len(b):
        return str(rel), "(no textual change)"
    i, old, new = diff[0] if diff else (min(len(a), len(b)), "", "")
    try:
        src_lines, src_defs = _functions(ROOT / rel)
        start = src_defs[f"{cls}.{func}" if cls else func].lineno
    except (OSError, KeyError, SyntaxError):
        start = orig.lineno
    return f"{rel}:{start + i}", f"{old.strip()}  ->  {new.strip()}"


def survivors(statuses: tuple[str, ...] = ("survived",)) -> list[str]:
    return [
        name for by_name in results().values() for name, st in by_name.items() if st in statuses
    ]


def run(children: int, names: list[str]) -> int:
    """``mutmut run`` (its spinner output to mutants/mutmut-run.log), then the report."""
    env = dict(os.environ)
    env.setdefault("MPLBACKEND", "Agg")
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env.setdefault(var, "1")
    if (
        "REPRO_DATA_DIR" not in env
    ):  # mutmut runs the tests inside mutants/: point at this checkout's data
        from repro.base.settings import data_dir

        env["REPRO_DATA_DIR"] = str(data_dir())
    added = admit_new_modules()
    if added:
        print(f"new in the scope (mutated now, test mapping collected again): {', '.join(added)}")
    MUTANTS.mkdir(exist_ok=True)
    seeded = restore_snapshot()
    if seeded:
        print(f"results of {len(seeded)} module(s) taken from {SNAPSHOT.name}: {', '.join(seeded)}")
    log = MUTANTS / "mutmut-run.log"
    cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", str(children), *names]
    print(
        f"running: {' '.join(cmd[2:5])} ... ({len(names)} named mutant(s)); progress in {log}",
        flush=True,
    )
    try:
        with log.open("a") as fh:
            rc = subprocess.call(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
    finally:  # what was tested is kept, also when the run is interrupted
        print(f"{save_snapshot()} mutant result(s) written to {SNAPSHOT.relative_to(ROOT)}")
    tail = [
        line
        for line in log.read_text(errors="replace").replace("\r", "\n").splitlines()
        if line.strip() and "⠋" not in line and "⠙" not in line
    ][-5:]
    print("\n".join(tail))
    if rc != 0:
        print(f"mutmut exited with status {rc} (see {log})")
        return rc
    report()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.mutation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run mutmut (resumable), then report")
    r.add_argument(
        "--children",
        type=int,
        default=int(os.environ.get("REPRO_MUTANTS_CHILDREN", "1")),
        help="parallel mutant workers (default 1, or REPRO_MUTANTS_CHILDREN)",
    )
    r.add_argument("--survivors", action="store_true", help="test the surviving mutants again")
    r.add_argument(
        "--recheck",
        action="store_true",
        help="test the survivors, the untested ('no tests') and the timed-out mutants again",
    )
    r.add_argument("names", nargs="*", help="only these mutants (glob patterns allowed)")
    p = sub.add_parser("report", help="print the kill rate and the survivors")
    p.add_argument("--all", action="store_true", help="list every mutant, not only survivors")
    sub.add_parser("save", help=f"write mutants/'s results to tests/{SNAPSHOT.name} (committed)")
    args = parser.parse_args(argv)
    if args.command == "report":
        report(args.all)
        return 0
    if args.command == "save":
        print(f"{save_snapshot()} mutant result(s) written to {SNAPSHOT.relative_to(ROOT)}")
        return 0
    names = list(args.names)
    if args.survivors or args.recheck:
        names += survivors(("survived", "no tests", "timeout") if args.recheck else ("survived",))
        if not names:
            print("no surviving mutants to test again")
            report()
            return 0
    return run(args.children, names)


if __name__ == "__main__":
    raise SystemExit(main())
