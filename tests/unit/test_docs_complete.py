"""The documentation is complete and current: every command of the real parser and every nox
session of ``noxfile.py`` is documented in ``docs/`` with its real output, the generated ``--help``
blocks of the pages equal what the parser prints today, and every repository path and
``python -m`` module the README and the pages name exists. The fix for a failure here is
``python docs/gen_cli_output.py`` (it fills the blocks between ``<!-- BEGIN generated ... -->``
and ``<!-- END generated ... -->``) and a sentence in the page that names the new command or
session."""

from __future__ import annotations

import ast
import glob
import importlib.util
import re
from pathlib import Path

import pytest

from tests.by_path import load_module

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def _generator():
    return load_module("gen_cli_output", DOCS / "gen_cli_output.py")


GEN = _generator()
COMMANDS = [[], *GEN.command_paths()]
BLOCKS = [b for page in PAGES for b in GEN.parse(page.read_text(), str(page.relative_to(ROOT)))]


def _blocks(name: str) -> list:
    return [b for b in BLOCKS if b.name == name]


def nox_sessions() -> list[str]:
    """The sessions of noxfile.py: functions decorated with ``@nox.session`` (or
    ``nox.session(name=...)``)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            target = call.func if call else dec
            if isinstance(target, ast.Attribute) and target.attr == "session":
                names = [
                    k.value.value
                    for k in (call.keywords if call else [])
                    if k.arg == "name" and isinstance(k.value, ast.Constant)
                ]
                out.append(names[0] if names else node.name)
    return out


def test_the_parser_and_the_noxfile_are_enumerated():
    """The enumerations below see the real commands and sessions (so the
    tests cannot pass empty)."""
    assert (
        ["claims"] in COMMANDS
        and ["data", "fetch"] in COMMANDS
        and ["score", "imagenet-x"] in COMMANDS
    )
    assert {"tests", "claims", "reproduce", "docs"} <= set(nox_sessions())


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: " ".join(w) or "repro")
def test_every_command_has_its_help_in_the_docs(words):
    name = GEN.help_name(words)
    assert _blocks(name), (
        f"no page has the block {name}: add '<!-- BEGIN generated {name} -->' and "
        f"'<!-- END generated {name} -->' to docs/cli.md and run python docs/gen_cli_output.py"
    )


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: " ".join(w) or "repro")
def test_help_blocks_are_what_the_parser_prints(words):
    blocks = _blocks(GEN.help_name(words))
    if not blocks:
        pytest.skip("no block (the test above fails)")
    for block in blocks:
        made_with = block.attrs.get("python")
        if made_with != GEN.python_version():
            pytest.skip(
                f"{block.where}: help written with Python {made_with}; argparse formats "
                "help differently "
                "across Python versions"
            )
        assert block.body == GEN.help_text(words), (
            f"{block.where}:{block.begin + 1}: python -m repro {' '.join(words)} --help changed: "
            "run python docs/gen_cli_output.py"
        )


@pytest.mark.parametrize("session", nox_sessions())
def test_every_nox_session_is_documented(session):
    page = (DOCS / "nox.md").read_text()
    assert f"| `{session}`" in page, f"nox session {session!r} has no row in docs/nox.md's table"
    assert re.search(rf"^## {re.escape(session)}$", page, re.M), (
        f"nox session {session!r} has no section in docs/nox.md"
    )
    [listed] = {b.body for b in _blocks("example:nox-list")}
    assert re.search(rf"^[*-] {re.escape(session)}\b", listed, re.M), (
        f"nox session {session!r} is not in the example:nox-list block of docs/nox.md: "
        "run python docs/gen_cli_output.py"
    )


def test_every_block_is_known_filled_and_the_old_includes_are_gone():
    """Every generated block names a command, an example or a file and holds its output; every
    example is shown by some page; no page has an include line of the old format left."""
    commands = {GEN.help_name(words) for words in COMMANDS}
    examples = {ex.name for ex in GEN.examples()}
    problems = [
        f"{b.where}:{b.begin + 1}: {b.name}: {why}"
        for b in BLOCKS
        if (why := GEN.known(b.name, commands, examples))
    ]
    problems += [f"{b.where}:{b.begin + 1}: {b.name} is empty" for b in BLOCKS if b.body is None]
    problems += [
        f"example {name} is in no page" for name in sorted(examples - {b.name[8:] for b in BLOCKS})
    ]
    problems += [
        f"{page.relative_to(ROOT)}: an include line (--8<--)"
        for page in PAGES
        if GEN.LEFT_INCLUDE.search(page.read_text())
    ]
    assert not problems, "run python docs/gen_cli_output.py:\n  " + "\n  ".join(problems)
    assert len({b.name for b in BLOCKS}) >= len(commands) + 30  # the parse sees the real blocks


def shown_exit(body: str) -> int:
    """The exit status a captured example block shows: its ``[exit status N]`` last line, or 0."""
    lines = body.rstrip("\n").splitlines()
    last = lines[-2] if lines and lines[-1].startswith("```") and len(lines) > 1 else lines[-1]
    m = re.fullmatch(r"\[exit status (\d+)\]", last.strip())
    return int(m.group(1)) if m else 0


def test_shown_exit_reads_the_status_line():
    assert shown_exit("```text\n$ x\nerror: no\n[exit status 2]\n```\n") == 2
    assert shown_exit("```text\n$ x\nfine\n```\n") == 0


def test_every_example_shows_the_exit_status_it_is_declared_with():
    """A captured block ends as its example exits (``Example.exits``): a page never documents an
    error where the command is meant to work, nor a success where an error is meant."""
    exits = {f"example:{ex.name}": ex.exits for ex in GEN.examples()}
    wrong = [
        f"{b.where}:{b.begin + 1}: {b.name} shows exit {shown_exit(b.body)}, "
        f"declared {exits[b.name]}"
        for b in BLOCKS
        if b.name in exits and b.body is not None and shown_exit(b.body) != exits[b.name]
    ]
    assert not wrong, "rerun with python docs/gen_cli_output.py --only NAME:\n  " + "\n  ".join(
        wrong
    )
    assert sum(v != 0 for v in exits.values()) >= 5  # the error examples are seen


def test_file_blocks_show_the_file_as_it_is():
    files = [b for b in BLOCKS if b.name.startswith("file:")]
    assert files, "docs/claims.md shows docs/examples/no_stylized.toml"
    for block in files:
        assert block.body == (ROOT / block.name[5:]).read_text(), (
            f"{block.where}: {block.name} is stale"
        )


# a repository path as the pages write it: top-level folder or file, in backticks
PATH = re.compile(
    r"`((?:repro|tests|expected|docs|\.ci)/[^`\s]*|(?:pyproject\.toml|noxfile\.py|mkdocs\.yml|"
    r"conftest\.py|REPORT\.md|README\.md))`"
)
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
        return [
            p
            for alt in m.group(1).split(",")
            for p in _patterns(path[: m.start()] + alt + path[m.end() :])
        ]
    return [path]


def test_every_repository_path_the_docs_name_exists():
    missing = []
    for where, text in _texts():
        for path in set(PATH.findall(text)):
            if not any(glob.glob(str(ROOT / pat)) for pat in _patterns(path)):
                missing.append(f"{where}: {path}")
    assert not missing, "paths named in the docs that do not exist:\n  " + "\n  ".join(
        sorted(missing)
    )


def test_every_python_module_the_docs_run_exists():
    missing = []
    for where, text in _texts():
        for module in set(MODULE.findall(text)):
            module = module.rstrip(".")
            if importlib.util.find_spec(module) is None:
                missing.append(f"{where}: python -m {module}")
    assert not missing, "modules named in the docs that do not exist:\n  " + "\n  ".join(
        sorted(missing)
    )


def test_the_readme_links_into_docs_and_stays_short():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    assert links, "the README links into docs/"
    missing = sorted({link for link in links if not (ROOT / link).exists()})
    assert not missing, f"README links to missing files: {missing}"
    assert len(readme.splitlines()) <= 200
