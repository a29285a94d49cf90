"""The documentation is complete and current: every command of the real parser and every nox
session of ``noxfile.py`` is documented in ``docs/`` with its real output, the ``--help`` snippets
equal what the parser prints today, and every repository path and ``python -m`` module the README
and the pages name exists. The fix for a failure here is ``python docs/gen_cli_output.py`` (or
``nox -s docs``) and a sentence in the page that names the new command or session."""

from __future__ import annotations

import ast
import glob
import importlib.util
import re
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SNIPPETS = DOCS / "snippets"
PAGES = sorted(p for p in DOCS.rglob("*.md") if SNIPPETS not in p.parents)
INCLUDE = re.compile(r'^--8<-- "([^"]+)"\s*$', re.M)


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_output", DOCS / "gen_cli_output.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_cli_output", module)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
COMMANDS = [[], *GEN.command_paths()]


def _included() -> set[str]:
    return {m for page in PAGES for m in INCLUDE.findall(page.read_text())}


def nox_sessions() -> list[str]:
    """The sessions of noxfile.py: functions decorated with ``@nox.session`` (or ``nox.session(name=...)``)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            target = call.func if call else dec
            if isinstance(target, ast.Attribute) and target.attr == "session":
                names = [k.value.value for k in (call.keywords if call else [])
                         if k.arg == "name" and isinstance(k.value, ast.Constant)]
                out.append(names[0] if names else node.name)
    return out


def test_the_parser_and_the_noxfile_are_enumerated():
    """The enumerations below see the real commands and sessions (so the tests cannot pass empty)."""
    assert ["claims"] in COMMANDS and ["data", "fetch"] in COMMANDS and ["score", "imagenet-x"] in COMMANDS
    assert {"tests", "claims", "reproduce", "docs"} <= set(nox_sessions())


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: " ".join(w) or "repro")
def test_every_command_has_its_help_in_the_docs(words):
    snippet = GEN.help_snippet(words)
    rel = str(snippet.relative_to(SNIPPETS))
    assert snippet.is_file(), f"{rel} missing: run python docs/gen_cli_output.py"
    assert rel in _included(), f"no page includes {rel} (add it to docs/cli.md)"


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: " ".join(w) or "repro")
def test_help_snippets_are_what_the_parser_prints(words):
    made_with = (SNIPPETS / "help" / "_python.txt").read_text().strip()
    if made_with != f"{sys.version_info.major}.{sys.version_info.minor}":
        pytest.skip(f"help snippets were written with Python {made_with}; argparse formats help differently "
                    "across Python versions")
    assert GEN.help_snippet(words).read_text() == GEN.help_text(words), (
        f"python -m repro {' '.join(words)} --help changed: run python docs/gen_cli_output.py")


@pytest.mark.parametrize("session", nox_sessions())
def test_every_nox_session_is_documented(session):
    page = (DOCS / "nox.md").read_text()
    assert f"| `{session}`" in page, f"nox session {session!r} has no row in docs/nox.md's table"
    assert re.search(rf"^## {re.escape(session)}$", page, re.M), f"nox session {session!r} has no section in docs/nox.md"
    listed = (SNIPPETS / "examples" / "nox-list.txt").read_text()
    assert re.search(rf"^[*-] {re.escape(session)}\b", listed, re.M), (
        f"nox session {session!r} is not in docs/snippets/examples/nox-list.txt: run python docs/gen_cli_output.py")


def test_every_included_snippet_exists():
    missing = sorted(s for s in _included() if not (SNIPPETS / s).is_file() and not (DOCS / s).is_file())
    assert not missing, f"snippets included but not written: {missing}"


# a repository path as the pages write it: top-level folder or file, in backticks
PATH = re.compile(r"`((?:repro|tests|expected|docs|\.ci)/[^`\s]*|(?:pyproject\.toml|noxfile\.py|mkdocs\.yml|"
                  r"conftest\.py|REPORT\.md|README\.md))`")
MODULE = re.compile(r"python -m ((?:repro|tests)[\w.]*)")


def _texts() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text()) for p in [ROOT / "README.md", *PAGES]]


def _patterns(path: str) -> list[str]:
    """Glob patterns for a path as written: ``<placeholder>`` and ``*`` match anything, ``{a,b}``
    expands, a pytest node id (``::test``) names its file."""
    path = path.split("::")[0].rstrip(".,;:)")
    path = re.sub(r"<[^>]+>", "*", path)
    m = re.search(r"\{([^{}]*)\}", path)
    if m:
        return [p for alt in m.group(1).split(",") for p in _patterns(path[:m.start()] + alt + path[m.end():])]
    return [path]


def test_every_repository_path_the_docs_name_exists():
    missing = []
    for where, text in _texts():
        for path in set(PATH.findall(text)):
            if not any(glob.glob(str(ROOT / pat)) for pat in _patterns(path)):
                missing.append(f"{where}: {path}")
    assert not missing, "paths named in the docs that do not exist:\n  " + "\n  ".join(sorted(missing))


def test_every_python_module_the_docs_run_exists():
    missing = []
    for where, text in _texts():
        for module in set(MODULE.findall(text)):
            module = module.rstrip(".")
            if importlib.util.find_spec(module) is None:
                missing.append(f"{where}: python -m {module}")
    assert not missing, "modules named in the docs that do not exist:\n  " + "\n  ".join(sorted(missing))


def test_the_readme_links_into_docs_and_stays_short():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    assert links, "the README links into docs/"
    missing = sorted({link for link in links if not (ROOT / link).exists()})
    assert not missing, f"README links to missing files: {missing}"
    assert len(readme.splitlines()) <= 200
