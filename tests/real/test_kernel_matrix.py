"""The same verdicts, snapshots and REPORT.md under every float64 kernel family this CPU runs.

The suite pins no kernels (``repro.base.numerics``): each stored statistic is compared at the
precision it has (``tests/snapshot_ext.py``: ill-conditioned critical-band fits at their
measured conditioning, ``repro.scoring.fit_conditioning``) and printed to stable digits. This
proves it: for each OpenBLAS kernel family the CPU can run (``OPENBLAS_CORETYPE``: Sandybridge,
Haswell, SkylakeX, Zen; a family whose instructions the CPU lacks is skipped, naming the flag),
with NumPy's AVX-512 dispatch on and off (``NPY_DISABLE_CPU_FEATURES``), in a fresh process
with an empty result cache:

- every claim test of ``tests/claims/test_claims.py`` passes (verdicts, intervals, and the
  regression snapshots in expected/claims/);
- REPORT.md and every figure, written as ``reproduce`` writes them from the tier's store
  (``tests.real.kernel_report``), are byte-identical to the committed ones (or, where this CPU's
  float32 torch kernels decide a fragile measured decision otherwise, as test_report_md.py
  allows, to this CPU's own default run).

Marked ``kernels`` (and ``real``: it needs the tier's measured store); it runs in CI's test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repro.report import full_text

pytestmark = [pytest.mark.real, pytest.mark.kernels]
ROOT = Path(__file__).resolve().parents[2]

#: OpenBLAS kernel family -> the CPU flags it needs
FAMILIES = {
    "Sandybridge": ("avx",),
    "Haswell": ("avx2", "fma"),
    "SkylakeX": ("avx512f", "avx512bw", "avx512vl"),
    "Zen": ("avx2", "fma"),
}
NUMPY_AVX512_OFF = "X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512CD AVX512_SKX"
SETTINGS = [(f, npy) for f in FAMILIES for npy in ("on", "off")]


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def _env(family: str, npy: str, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS",)}
    env["OPENBLAS_CORETYPE"] = family
    env["NPY_DISABLE_CPU_FEATURES"] = NUMPY_AVX512_OFF if npy == "off" else ""
    env["REPRO_CACHE_DIR"] = str(cache)  # nothing computed under other kernels is read back
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)


@pytest.mark.parametrize(
    ("family", "npy"), SETTINGS, ids=[f"{f}-numpy-avx512-{n}" for f, n in SETTINGS]
)
def test_same_claims_and_report_under_kernels(family, npy, shipped, real_data, snapshot, tmp_path):
    if sys.platform != "linux" or os.uname().machine not in ("x86_64", "amd64"):
        pytest.skip("OpenBLAS kernel families are x86-64 ones (docs/testing.md: aarch64 run)")
    missing = [f for f in FAMILIES[family] if f not in _cpu_flags()]
    if missing:
        pytest.skip(f"this CPU lacks {', '.join(missing)}: cannot run {family} kernels")
    env = _env(family, npy, tmp_path / "cache")
    env["REPRO_DATA_DIR"] = str(real_data)

    claims = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "tests/claims/test_claims.py",
            f"--data-dir={real_data}",
        ],
        env,
    )
    assert claims.returncode == 0, (
        f"{family}, NumPy AVX-512 {npy}: claim tests failed\n{claims.stdout[-4000:]}"
    )

    out = tmp_path / "report" / "REPORT.md"
    out.parent.mkdir()
    made = _run(
        [sys.executable, "-m", "tests.real.kernel_report", str(shipped.store), str(out)], env
    )
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    from tests.real.test_report_md import _flipped

    reference = ROOT
    if _flipped(shipped, snapshot):  # this CPU's torch decided a fragile decision otherwise
        ref = tmp_path / "reference" / "REPORT.md"
        ref.parent.mkdir()
        base = _env("Haswell", "off", tmp_path / "cache-ref")
        base["REPRO_DATA_DIR"] = str(real_data)
        assert (
            _run(
                [sys.executable, "-m", "tests.real.kernel_report", str(shipped.store), str(ref)],
                base,
            ).returncode
            == 0
        )
        reference = ref.parent
    ours, theirs = full_text(out), full_text(reference / "REPORT.md")
    differ = [
        f"line {i}: {a!r} != {b!r}"
        for i, (a, b) in enumerate(zip(ours.splitlines(), theirs.splitlines(), strict=False), 1)
        if a != b
    ]
    assert ours == theirs, f"{family}, NumPy AVX-512 {npy}: REPORT.md differs: {differ[:5]}"
    for fig in sorted((reference / "report_assets").iterdir()):
        assert (out.parent / "report_assets" / fig.name).read_bytes() == fig.read_bytes(), (
            f"{family}, NumPy AVX-512 {npy}: report_assets/{fig.name} differs"
        )
