"""The generated blocks of the docs pages (``docs/gen_cli_output.py``): read, rewritten in place
with every line outside their markers kept, converted from the old include lines, and checked
without writing (``--check``: exit 1 naming the stale block, the page untouched)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.by_path import load_module

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    return load_module("gen_cli_output", ROOT / "docs" / "gen_cli_output.py")


GEN = _generator()

PAGE = """# A page

Prose before.

<!-- BEGIN generated example:claims -->
```text
$ python -m repro claims
old output
```
<!-- END generated example:claims -->

Prose between.

<!-- BEGIN generated help:models python=3.11 -->
<!-- END generated help:models -->
Prose after.
"""


def test_parse_reads_names_attributes_bodies_and_lines():
    first, second = GEN.parse(PAGE, "docs/p.md")
    assert (first.name, first.attrs, first.body, first.begin, first.end) == (
        "example:claims",
        {},
        "$ python -m repro claims\nold output\n",
        4,
        9,
    )
    assert (second.name, second.attrs, second.body, second.begin, second.end) == (
        "help:models",
        {"python": "3.11"},
        None,
        13,
        14,
    )


def test_render_then_parse_gives_the_block_back_and_the_fence_outgrows_the_body():
    body = "a line\n```\nfenced inside\n````python\n"
    lines = GEN.render("example:x", {"python": "3.12"}, body)
    assert lines[0] == "<!-- BEGIN generated example:x python=3.12 -->"
    assert (
        lines[1] == "`````text" and lines[-2] == "`````"
    )  # one longer than the longest run inside
    [block] = GEN.parse("\n".join(lines), "p.md")
    assert (block.name, block.attrs, block.body) == ("example:x", {"python": "3.12"}, body)


def test_splice_rewrites_the_named_blocks_only_and_keeps_every_other_line():
    blocks = GEN.parse(PAGE, "p.md")
    new = {"help:models": ("usage: models\n", {"python": "3.11"})}
    out = GEN.splice(PAGE, blocks, new)
    assert out == PAGE.replace(
        "<!-- BEGIN generated help:models python=3.11 -->\n",
        "<!-- BEGIN generated help:models python=3.11 -->\n```text\nusage: models\n```\n",
    )
    assert GEN.splice(out, GEN.parse(out, "p.md"), new) == out  # a second run changes nothing
    assert [b.name for b in GEN.stale(GEN.parse(out, "p.md"), new)] == []
    assert [b.name for b in GEN.stale(blocks, new)] == ["help:models"]


def test_stale_sees_a_changed_body_and_a_changed_python():
    [block] = GEN.parse("\n".join(GEN.render("help:models", {"python": "3.11"}, "usage\n")), "p.md")
    assert GEN.stale([block], {"help:models": ("usage\n", {"python": "3.11"})}) == []
    assert GEN.stale([block], {"help:models": ("usage\n", {"python": "3.12"})}) == [block]
    assert GEN.stale([block], {"help:models": ("usage!\n", {"python": "3.11"})}) == [block]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "<!-- END generated help:models -->\n",
            "p.md:1: END of help:models without its BEGIN line",
        ),
        (
            "<!-- BEGIN generated help:models -->\n<!-- END generated help:claims -->\n",
            "p.md:2: END of help:claims without its BEGIN line",
        ),
        ("x\n<!-- BEGIN generated help:models -->\n", "p.md:2: block help:models has no END line"),
        (
            "<!-- BEGIN generated help:a -->\n<!-- BEGIN generated help:b -->\n",
            "p.md:2: BEGIN of help:b inside the block help:a opened on line 1",
        ),
        (
            "<!-- BEGIN generated help:models -->\nhand-written\n"
            "<!-- END generated help:models -->\n",
            "p.md:1: block help:models: only the fenced output this script writes "
            "belongs between the markers",
        ),
        ("<!-- BEGIN generated -->\n", "p.md:1: malformed marker"),
    ],
)
def test_unreadable_markers_are_one_error_naming_page_and_line(text, message):
    with pytest.raises(GEN.DocsError) as err:
        GEN.parse(text, "p.md")
    assert str(err.value).startswith(message)


def test_old_include_lines_become_blocks_keeping_captured_output(tmp_path):
    docs = tmp_path / "docs"
    (docs / "snippets" / "examples").mkdir(parents=True)
    (docs / "snippets" / "help").mkdir()
    (docs / "examples").mkdir()
    (docs / "snippets" / "examples" / "measure-mini.txt").write_text(
        "# captured on a machine\n$ measure\n"
    )
    (docs / "snippets" / "help" / "data-fetch.txt").write_text(
        "$ python -m repro data fetch --help\n"
    )
    (docs / "examples" / "variant.toml").write_text("extends = 'x'\n")
    text = (
        'a\n\n```text\n--8<-- "examples/measure-mini.txt"\n```\n\n```text\n'
        '--8<-- "help/data-fetch.txt"\n```\n'
        '\n```toml\n--8<-- "examples/variant.toml"\n```\nb\n'
    )
    out = GEN.convert_includes(text, docs)
    assert out == (
        "a\n\n<!-- BEGIN generated example:measure-mini -->\n```text\n"
        "# captured on a machine\n$ measure\n"
        "```\n<!-- END generated example:measure-mini -->\n\n"
        "<!-- BEGIN generated help:data-fetch -->\n<!-- END generated help:data-fetch -->\n\n"
        "<!-- BEGIN generated file:docs/examples/variant.toml -->\n"
        "<!-- END generated file:docs/examples/variant.toml -->\nb\n"
    )
    assert [b.name for b in GEN.parse(out, "p.md")] == [
        "example:measure-mini",
        "help:data-fetch",
        "file:docs/examples/variant.toml",
    ]


def test_an_example_that_is_not_rerun_keeps_the_output_its_pages_agree_on():
    one = GEN.Block("a.md", "example:m", {}, "out\n", 0, 3)
    same = GEN.Block("b.md", "example:m", {}, "out\n", 5, 8)
    empty = GEN.Block("c.md", "example:m", {}, None, 0, 1)
    other = GEN.Block("d.md", "example:m", {}, "other\n", 0, 3)
    assert GEN.kept([one, same, empty], "example:m") == (("out\n", {}), None)
    output, why = GEN.kept([one, other], "example:m")
    assert output is None and why == (
        "example:m differs between a.md, d.md: rerun python docs/gen_cli_output.py --only m"
    )
    output, why = GEN.kept([empty], "example:m")
    assert output is None and "no output yet: run python docs/gen_cli_output.py --only m" in why


def test_known_names_commands_examples_and_files():
    commands, examples = {"help:models"}, {"claims"}
    assert GEN.known("help:models", commands, examples) is None
    assert GEN.known("example:claims", commands, examples) is None
    assert GEN.known("file:docs/examples/no_stylized.toml", commands, examples) is None
    assert GEN.known("help:modles", commands, examples).startswith("no command 'modles'")
    assert GEN.known("example:nope", commands, examples) == "no example 'nope' (see --list)"
    assert GEN.known("file:docs/nope.toml", commands, examples) == "no file docs/nope.toml"
    assert GEN.known("snippet:x", commands, examples).startswith("unknown kind 'snippet'")


def test_check_writes_nothing_and_names_the_stale_block_then_a_run_fills_it(
    tmp_path, monkeypatch, capsys
):
    """``--check`` on a stale page exits 1 naming page, line and block, and leaves the page as it
    was; the writing run makes the block what the parser prints; the next check finds it current."""
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "p.md"
    stale = (
        "# p\n\n<!-- BEGIN generated help:models python="
        + GEN.python_version()
        + " -->\n```text\nold\n```\n"
        "<!-- END generated help:models -->\n\n<!-- BEGIN generated file:docs/x.toml -->\n"
        "<!-- END generated file:docs/x.toml -->\n"
    )
    page.write_text(stale)
    (tmp_path / "docs" / "x.toml").write_text("a = 1\n")
    monkeypatch.setattr(GEN, "ROOT", tmp_path)
    monkeypatch.setattr(GEN, "DOCS", tmp_path / "docs")
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))

    assert GEN.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "error: docs/p.md:3: help:models is stale: run python docs/gen_cli_output.py" in err
    assert "error: docs/p.md:9: file:docs/x.toml is empty" in err
    assert "no page has the block help:claims" in err  # the tree has one command's help only
    assert page.read_text() == stale

    assert GEN.main([]) == 1  # written; the other commands' help blocks are still missing
    blocks = {b.name: b for b in GEN.parse(page.read_text(), "p.md")}
    assert blocks["help:models"].body == GEN.help_text(["models"])
    assert (
        blocks["file:docs/x.toml"].body == "a = 1\n" and blocks["file:docs/x.toml"].lang == "toml"
    )
    assert page.read_text().startswith("# p\n\n<!-- BEGIN generated help:models python=")
    capsys.readouterr()
    assert GEN.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "stale" not in err and "empty" not in err and "no page has the block help:claims" in err


def test_an_example_exiting_otherwise_than_its_page_shows_is_an_error_and_kept(
    tmp_path, monkeypatch, capsys
):
    """An example whose command exits with another status than ``Example.exits`` is not written:
    the run names it, its status and what it last printed, exits 1, and the page keeps its old
    output (a ``plan --throughput`` example once documented a missing-stage error this way)."""
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "p.md"
    text = (
        "<!-- BEGIN generated example:ok -->\n```text\n$ ok\nold\n```\n"
        "<!-- END generated example:ok -->\n"
        "<!-- BEGIN generated example:bad -->\n```text\n$ bad\nold\n```\n"
        "<!-- END generated example:bad -->\n"
    )
    page.write_text(text)
    fake = [GEN.Example("ok", "ok", ["ok"]), GEN.Example("bad", "bad", ["bad"], exits=2)]
    statuses = {"ok": 0, "bad": 1}
    monkeypatch.setattr(GEN, "ROOT", tmp_path)
    monkeypatch.setattr(GEN, "DOCS", tmp_path / "docs")
    monkeypatch.setattr(GEN, "examples", lambda: fake)
    monkeypatch.setattr(GEN, "command_paths", lambda: [])
    monkeypatch.setattr(
        GEN,
        "run_example",
        lambda ex, scratch: (f"$ {ex.shown}\nnew\n", statuses[ex.name]),
    )
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))

    assert GEN.main(["--only", "ok", "bad"]) == 1
    err = capsys.readouterr().err
    assert "example bad: `bad` exited 1, expected 2: its block is left as it was" in err
    blocks = {b.name: b.body for b in GEN.parse(page.read_text(), "p.md")}
    assert blocks == {"example:ok": "$ ok\nnew\n", "example:bad": "$ bad\nold\n"}
    assert GEN.exit_problem(fake[1], 2, "x") is None and GEN.exit_problem(fake[0], 0, "") is None


def test_a_prose_edit_made_while_an_example_runs_is_kept(tmp_path, monkeypatch, capsys):
    """The page is written as it is when the captures end, not as it was read at the start: a
    prose line added (above the block, so its lines move) while an example ran stays, and the
    block gets the new output."""
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "p.md"
    page.write_text(
        "# p\n\nold prose\n\n<!-- BEGIN generated example:ok -->\n```text\n$ ok\nold\n```\n"
        "<!-- END generated example:ok -->\n"
    )

    def run(ex, scratch):
        page.write_text(page.read_text().replace("old prose", "new prose\n\nmore prose"))
        return f"$ {ex.shown}\nnew\n", 0

    monkeypatch.setattr(GEN, "ROOT", tmp_path)
    monkeypatch.setattr(GEN, "DOCS", tmp_path / "docs")
    monkeypatch.setattr(GEN, "examples", lambda: [GEN.Example("ok", "ok", ["ok"])])
    monkeypatch.setattr(GEN, "command_paths", lambda: [])
    monkeypatch.setattr(GEN, "run_example", run)
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))

    assert GEN.main(["--only", "ok"]) == 1  # the one problem: the page has no help:repro block
    out, err = capsys.readouterr()
    assert err.count("error:") == 1 and "no page has the block help:repro" in err
    assert "updated docs/p.md (1 block(s))" in out
    assert page.read_text() == (
        "# p\n\nnew prose\n\nmore prose\n\n<!-- BEGIN generated example:ok -->\n```text\n"
        "$ ok\nnew\n```\n<!-- END generated example:ok -->\n"
    )


def test_a_shown_command_runs_as_its_words():
    """An example is written once: what runs is the shown words, without the leading variable
    assignments (the example's env has the real values), python as this interpreter, nox with
    this checkout's noxfile; quoting as the shell's."""
    assert GEN.argv_of(
        "REPRO_CONFIG=MINI/repro.toml A_1=x python -m repro claims --study 'a b'"
    ) == [
        sys.executable,
        "-m",
        "repro",
        "claims",
        "--study",
        "a b",
    ]
    nox = GEN.argv_of("nox -s claims -- -q")
    assert nox[1:] == ["--noxfile", str(GEN.ROOT / "noxfile.py"), "-s", "claims", "--", "-q"]
    assert Path(nox[0]).name == "nox" and Path(nox[0]).parent == Path(sys.executable).parent
    assert GEN.argv_of("sh -c 'x=1'") == ["sh", "-c", "x=1"]
    ex = GEN.Example("e", "python -m repro models")
    assert ex.argv == [sys.executable, "-m", "repro", "models"]
    assert GEN.Example("e", "shown", ["other"]).argv == ["other"]
