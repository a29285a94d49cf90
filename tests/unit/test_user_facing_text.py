"""What a user reads carries no internal tracker reference ("issue 14's figure"): no string the
package prints (every string constant of repro/ that is not a docstring, the docstrings that
become a command's --help, the TOML and text files of the package) names an issue by number.
And ``plan`` says which of its totals answers which question, with the numbers it printed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
INTERNAL = re.compile(r"\bissues? #?\d+|\bissue-\d+")


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def printed_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that can reach a user: all but docstrings, except a
    command module's own docstring (argparse's description: ``--help``)."""
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    if path.parent.name == "cli" and tree.body and isinstance(tree.body[0], ast.Expr):
        docs.discard(id(tree.body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_the_scan_sees_printed_strings_and_skips_docstrings(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text(
        '"""Doc (issue 3)."""\n\ndef f():\n    """Doc (issue 4)."""\n    return "issue 5"\n'
    )
    assert [s for _, s in printed_strings(mod)] == ["issue 5"]
    cli = tmp_path / "cli" / "c.py"
    cli.parent.mkdir()
    cli.write_text('"""``python -m repro c`` (issue 6)."""\n')
    assert [s for _, s in printed_strings(cli)] == ["``python -m repro c`` (issue 6)."]


def test_no_printed_string_names_an_internal_issue():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}"
        for path in sorted((ROOT / "repro").rglob("*.py"))
        for line, text in printed_strings(path)
        if INTERNAL.search(text)
    ]
    found += [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]!r}"
        for pattern in ("*.toml", "*.md", "*.txt", "*.csv")
        for path in sorted((ROOT / "repro").rglob(pattern))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if INTERNAL.search(line)
    ]
    assert found == []


def _totals(text: str, title: str) -> list[float]:
    """The numbers of the ``total`` row of the table under the line starting with ``title``."""
    part = text[text.index(title) :]
    row = next(line for line in part.splitlines() if line.startswith("total "))
    return [float(x) for x in re.findall(r"\d+\.\d\d(?!\d)", row)]


def test_plan_says_which_total_answers_which_question(capsys):
    from repro.cli import main

    assert main(["plan"]) == 0
    text = capsys.readouterr().out
    assert "issue" not in text
    guide = text[text.index("which total answers which question:") :].splitlines()
    compute, wall = guide[1], guide[2]
    first = _totals(text, "projected device hours")
    second = _totals(text, "wall hours of 48 models")
    # the second table: float32 and bfloat16, then bfloat16 with PGD under the early-stop
    # variant, each model-major and data-major
    assert len(first) == 3 and len(second) == 6
    assert compute.startswith("  how much computation: the first table's total (")
    assert [float(x) for x in re.findall(r"(\d+\.\d\d) ", compute)] == first
    assert "no decoding" in compute
    assert wall.startswith("  how long a run takes: the second table's total (")
    assert [float(x) for x in re.findall(r"(\d+\.\d\d) ", wall)] == second
    assert "decoding and the crop cache counted" in wall
    assert "bfloat16" in compute and "data-major bfloat16" in wall
    (variant,) = [line for line in guide if line.startswith("  the bf16 PGD-ES column(s)")]
    assert "--pgd-early-stop" in variant and "not the study's PGD-40 column" in variant
    goal = next(line for line in text.splitlines() if line.startswith("goal: "))
    assert "this suite's target" in goal and "not the paper's" in goal
