"""``repro.measurements.source_version``: a module's VERSION read from its source gives exactly the
string the imported module has, for every registered measurement (so ``compare`` and ``place`` can
tell current records from stale ones without importing torch), and ``None`` for a form it cannot
read, where ``Measurement.version`` then imports the module."""

from __future__ import annotations

import importlib
import textwrap

import pytest

from repro.measurements import registry as ms
from repro.measurements.source_version import read_version

pytestmark = pytest.mark.unit


def test_every_registered_version_reads_from_source_as_imported():
    refs = {m.versioned_by or m.run.partition(":")[0] for m in ms.MEASUREMENTS.values()} - {""}
    assert {"repro.probes.sixteen_class", "repro.benchmarks.classify"} <= refs
    for ref in sorted(refs):
        assert read_version(ref) is not None, ref  # no import needed for any of them
        assert read_version(ref) == importlib.import_module(ref).VERSION, ref
    # the f-string form joins other modules' versions
    assert read_version("repro.probes.sixteen_class").startswith("16c")


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A throwaway package ``svpkg`` of the given modules on sys.path."""

    def make(**modules: str) -> str:
        pkg = tmp_path / "svpkg"
        pkg.mkdir(exist_ok=True)
        (pkg / "__init__.py").write_text("")
        for name, source in modules.items():
            (pkg / f"{name}.py").write_text(textwrap.dedent(source))
        monkeypatch.syspath_prepend(str(tmp_path))
        read_version.cache_clear()
        importlib.invalidate_caches()
        return "svpkg"

    yield make
    read_version.cache_clear()


def test_the_forms_it_reads(package):
    package(
        base='VERSION = "7"\n',
        literal='VERSION: str = "3"\n',
        joined='from . import base as b\nOWN = "2"\nVERSION = f"x{OWN}.b{b.VERSION}"\n',
        absolute='import svpkg.base as bb\nVERSION = f"{bb.VERSION}-a"\n',
    )
    assert read_version("svpkg.literal") == "3"
    assert read_version("svpkg.joined") == "x2.b7"
    assert read_version("svpkg.absolute") == "7-a"


def test_forms_it_cannot_read_give_none(package):
    package(
        called="VERSION = str(3)\n",
        twice='VERSION = "1"\nVERSION = "2"\n',
        missing='OTHER = "1"\n',
        spec='X = 3\nVERSION = f"{X:03d}"\n',
        cycle='from . import cycle as c\nVERSION = f"{c.VERSION}"\n',
    )
    for name in ("called", "twice", "missing", "spec", "cycle", "absent"):
        assert read_version(f"svpkg.{name}") is None, name
    assert read_version("no_such_package_here.mod") is None
