"""A module's ``VERSION`` read from its source, without importing the module.

Every stored record carries the version of the module that made it (``Measurement.version``), and
the interactive commands (``compare``, ``place``) read the version of every measurement to tell a
current record from a stale one. The probe modules import torch, which alone takes seconds on 2
cores; their ``VERSION`` is a literal, or an f-string of literals and of other probe modules'
``VERSION`` (``repro.probes.sixteen_class``), so it can be read from the source. ``read_version``
evaluates exactly these forms and returns ``None`` for anything else; the caller then imports the
module (``tests/unit/test_source_version.py`` checks every registered measurement gives the same
version both ways).
"""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path


class _Unresolved(Exception):
    pass


def _module_source(name: str) -> ast.Module | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"), filename=spec.origin)


def _aliases(tree: ast.Module, module: str) -> dict[str, str]:
    """The local names bound by top-level module imports, to the absolute names they bind.

    Top-level ``import a.b as x`` / ``from a import b as x`` / ``from . import b as x``: the
    local name -> the absolute name of the module (or attribute) it binds."""
    package = module.rpartition(".")[0]
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{parent}.{base}" if base else parent
            for a in node.names:
                out[a.asname or a.name] = f"{base}.{a.name}"
    return out


def _assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """The top-level assignments of ``tree``: each name to its value.

    Top-level ``NAME = value`` (and ``NAME: type = value``); a name assigned twice is left out."""
    out: dict[str, ast.expr] = {}
    twice: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for t in targets:
            if isinstance(t, ast.Name):
                if t.id in out:
                    twice.add(t.id)
                out[t.id] = value
    return {k: v for k, v in out.items() if k not in twice}


def _evaluate(expr: ast.expr, module: str, stack: tuple[str, ...]) -> str:
    tree = _tree(module)
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.Name):
        value = _assignments(tree).get(expr.id)
        if value is None:
            raise _Unresolved(expr.id)
        return _evaluate(value, module, stack)
    if isinstance(expr, ast.JoinedStr):
        parts = []
        for v in expr.values:
            if isinstance(v, ast.FormattedValue):
                if v.conversion != -1 or v.format_spec is not None:
                    raise _Unresolved("formatted")
                parts.append(_evaluate(v.value, module, stack))
            else:
                parts.append(_evaluate(v, module, stack))
        return "".join(parts)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        other = _aliases(tree, module).get(expr.value.id)
        if other is None or other in stack:
            raise _Unresolved(expr.value.id)
        return _version_of(other, expr.attr, (*stack, other))
    raise _Unresolved(type(expr).__name__)


@cache
def _tree(module: str) -> ast.Module:
    tree = _module_source(module)
    if tree is None:
        raise _Unresolved(module)
    return tree


def _version_of(module: str, attr: str, stack: tuple[str, ...]) -> str:
    value = _assignments(_tree(module)).get(attr)
    if value is None:
        raise _Unresolved(attr)
    return _evaluate(value, module, stack)


@cache
def read_version(module: str) -> str | None:
    """The string ``module.VERSION`` has once imported, read from the source.

    ``None`` where the source does not say it in the forms above (then import the module to
    know)."""
    try:
        return _version_of(module, "VERSION", (module,))
    except (_Unresolved, SyntaxError, OSError, UnicodeDecodeError):
        return None
