"""Records what a captured docs example reads, for ``docs/gen_cli_output.py``: when
``REPRO_DOCS_INPUTS`` names a folder, every Python process of the example (the command, and the
ones it starts: nox, pytest and its workers, mypy) writes there, as it exits, the files of the
modules it imported and the files it opened, one path a line. The generator puts this folder
first on ``PYTHONPATH`` of the example only; without the variable this does nothing."""

from __future__ import annotations

import os

_FOLDER = os.environ.get("REPRO_DOCS_INPUTS")

if _FOLDER:
    import atexit
    import sys

    _opened: set[str] = set()

    def _audit(event: str, args: tuple) -> None:
        if event == "open" and args and isinstance(args[0], (str, bytes)):
            path = args[0] if isinstance(args[0], str) else os.fsdecode(args[0])
            _opened.add(os.path.abspath(path))

    def _write() -> None:
        files = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
        lines = sorted({os.path.abspath(f) for f in files if isinstance(f, str)} | _opened)
        with open(os.path.join(_FOLDER, f"{os.getpid()}.txt"), "a") as out:
            out.write("".join(line + "\n" for line in lines))

    sys.addaudithook(_audit)
    atexit.register(_write)
