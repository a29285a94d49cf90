"""The float64 kernels pinned (repro.base.blas): ``python -m repro`` and the test suite set
``OPENBLAS_CORETYPE=Haswell`` and NumPy's AVX-512 paths off on an x86-64 CPU with AVX2 and FMA,
unless the environment says otherwise, before NumPy is loaded; so an ill-conditioned critical-band
fit (alexnet's thresholds 4,4,2,4,4,4,4) gives the same digits on an AVX-512 CPU as on an AVX2
one, and another kernel family gives others (the check can see a change of kernel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repro.base import blas
from tests.waiting import HANG_GUARD_S

pytestmark = pytest.mark.cli

ROOT = str(Path(__file__).resolve().parents[2])
AVX2 = {"avx2", "fma", "sse4_2"}
FRAGILE = "4,4,2,4,4,4,4"  # a near-flat valley: its fit's end point moves with the kernels


def test_pinned_on_x86_64_with_avx2_unless_already_set():
    env: dict[str, str] = {}
    got = blas.pin_kernels(env, machine="x86_64", flags=AVX2)
    assert (
        got
        == env
        == {
            "OPENBLAS_CORETYPE": "Haswell",
            "NPY_DISABLE_CPU_FEATURES": blas.NUMPY_AVX512,
        }
    )
    env = {"OPENBLAS_CORETYPE": "Prescott"}
    assert blas.pin_kernels(env, machine="x86_64", flags=AVX2)["OPENBLAS_CORETYPE"] == "Prescott"
    assert env["OPENBLAS_CORETYPE"] == "Prescott" and "NPY_DISABLE_CPU_FEATURES" in env


@pytest.mark.parametrize(
    "machine,flags", [("aarch64", AVX2), ("x86_64", {"sse4_2", "avx"}), ("x86_64", {"avx2"})]
)
def test_left_alone_elsewhere(machine, flags):
    """aarch64, and an x86-64 CPU that could not run the forced kernels (no AVX2 or no FMA)."""
    env: dict[str, str] = {}
    assert blas.pin_kernels(env, machine=machine, flags=flags) == {} and env == {}


def test_cpu_flags_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: X\nflags\t\t: fpu sse2 avx2 fma\n\n")
    assert blas.cpu_flags(info) == {"fpu", "sse2", "avx2", "fma"}
    assert blas.cpu_flags(tmp_path / "missing") == set()


def _fit(**env: str) -> dict[str, float]:
    clean = {k: v for k, v in os.environ.items() if k not in (blas.OPENBLAS, blas.NUMPY)}
    clean["PYTHONPATH"] = ROOT + os.pathsep + clean.get("PYTHONPATH", "")
    res = subprocess.run(
        [sys.executable, "-m", "repro", "score", "critical-band", FRAGILE, "--json"],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=HANG_GUARD_S,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


@pytest.mark.skipif(
    not blas.pin_kernels({}),
    reason="not an x86-64 CPU with AVX2 and FMA: repro.base.blas pins nothing here",
)
def test_the_entry_point_pins_them_before_numpy_loads():
    pinned = _fit()
    assert pinned == _fit(
        OPENBLAS_CORETYPE="Haswell", NPY_DISABLE_CPU_FEATURES=blas.NUMPY_AVX512
    )  # what an AVX2 CPU computes unpinned
    other = _fit(OPENBLAS_CORETYPE="Prescott", NPY_DISABLE_CPU_FEATURES=blas.NUMPY_AVX512)
    assert other["bandwidth"] != pinned["bandwidth"]  # another kernel family: other digits
    assert other["bandwidth"] == pytest.approx(pinned["bandwidth"], rel=1e-5)  # the same fit
