"""Every command first tells glibc to keep freed memory (``repro.base.allocator``): ``mallopt``
succeeds on glibc, fails cleanly elsewhere, and ``repro.cli.main`` calls it before anything else."""

from __future__ import annotations

import ctypes
import platform

import pytest

from repro.base import allocator

pytestmark = pytest.mark.unit


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_takes_the_thresholds():
    assert allocator.keep_freed_memory() is True


def test_a_c_library_without_mallopt_is_a_false_not_a_crash(monkeypatch):
    class NoMallopt:
        def __init__(self, name):
            pass

    monkeypatch.setattr(ctypes, "CDLL", NoMallopt)
    assert allocator.keep_freed_memory() is False


def test_every_command_starts_with_it(monkeypatch, capsys):
    import repro.cli

    calls = []
    monkeypatch.setattr(repro.cli, "keep_freed_memory", lambda: calls.append(1) or True)
    assert repro.cli.main([]) == 2  # no command: the help, exit 2
    assert calls == [1]
    assert "usage" in capsys.readouterr().out
