"""The width a command's text is fitted to, and the wrapping of one line to it.

NumPy-free, so that a command answered from the cache (``repro.base.command_cache``) needs no
more."""

from __future__ import annotations

import shutil
import textwrap

#: the width when the output is no terminal and ``COLUMNS`` is not set
DEFAULT_WIDTH = 100


def terminal_width() -> int:
    """``COLUMNS``, else the terminal's width, else ``DEFAULT_WIDTH`` (output to a pipe or file)."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def wrap(text: str, width: int) -> list[str]:
    """``text`` (one line) wrapped to ``width``; a line that fits is kept as it is.

    Its continuation lines are indented two more than its own indent."""
    if len(text) <= width:
        return [text]
    indent = text[: len(text) - len(text.lstrip())]
    return textwrap.wrap(
        text.strip(),
        width,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
    ) or [text]
