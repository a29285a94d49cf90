"""Markdown table rows, as every report section writes them."""

from __future__ import annotations


def cell(text: str) -> str:
    """A table cell's text with its pipes escaped and its line breaks made spaces."""
    return text.replace("|", "\\|").replace("\n", " ")


def row(*cells: str) -> str:
    """One table row of the cells as given (``cell`` escapes a cell that may hold a pipe)."""
    return "| " + " | ".join(cells) + " |"
