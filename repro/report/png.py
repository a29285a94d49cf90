"""Report: figures written deterministically.

The one place a figure of the report (or of any command that writes one) becomes a PNG file;
use it for every new figure.

The same figure gives the same bytes on every machine with the project's environment:

- ``style()``: a context in which figures are made and saved with matplotlib's built-in
  defaults (a user's matplotlibrc, a style sheet or an earlier ``rcParams`` change does not
  leak in) plus ``STYLE``: the DejaVu Sans font that matplotlib ships (never a system font),
  no TeX, fixed dpi. ``repro.report.write_report`` renders every section inside it.
- ``save_png(fig, path)``: the Agg renderer (whatever ``MPLBACKEND`` says), a fixed dpi, and no
  text chunks in the file (matplotlib writes its version as ``Software`` by default; a PNG has
  no date unless one is given, and none is).

What it cannot fix: another matplotlib or FreeType version draws other pixels; the report's
Provenance section lists the matplotlib version that made it.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DPI = 100
STYLE: dict[str, Any] = {
    "font.family": ["sans-serif"],
    "font.sans-serif": ["DejaVu Sans"],  # bundled with matplotlib
    "mathtext.fontset": "dejavusans",
    "text.usetex": False,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "svg.hashsalt": "repro",
}


@contextlib.contextmanager
def style() -> Iterator[None]:
    """matplotlib's defaults plus ``STYLE`` inside, the caller's settings restored after."""
    import matplotlib

    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(STYLE)
        yield


def save_png(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Write the matplotlib Figure ``fig`` to ``path`` as a PNG without metadata.

    See the module docstring. Returns the path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    with style():
        fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out


def text_chunks(data: bytes) -> list[bytes]:
    """The keys of a PNG's text chunks (tEXt, zTXt, iTXt): empty for a file ``save_png`` wrote."""
    keys, pos = [], 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if kind in (b"tEXt", b"zTXt", b"iTXt"):
            keys.append(data[pos + 8 : pos + 8 + length].split(b"\0", 1)[0])
        pos += 12 + length
    return keys
