"""The root conftest's guard of the claim gate, run on small generated test suites in a
subprocess (the guard itself is the root ``conftest.py``, loaded there unchanged):

- a skipped ``claims``-marked test fails the run (exit 1) and is named in the summary; a skipped
  test of another tier does not; an xfail is not a skip;
- ``--require-claims`` fails a run in which no ``claims``-marked test passed;
- missing published data fails the tests that need it with the one-line data message, or skips
  them under ``--allow-missing-data`` (then exit 0 and the summary says the gate did not run).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.waiting import HANG_GUARD_S

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]

INI = """[pytest]
markers =
    claims: claim tests
    unit: unit tests
addopts = -p no:cacheprovider -p no:xdist -p no:benchmark
"""


def run_suite(
    tmp_path: Path, tests: str, *args: str, env: dict[str, str] | None = None, ini: str = INI
):
    (tmp_path / "pytest.ini").write_text(ini)
    # the root conftest, verbatim: the guard under test
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    (tmp_path / "test_gen.py").write_text(textwrap.dedent(tests))
    import os

    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        env=full_env,
    )
    return res.returncode, res.stdout + res.stderr


def test_a_skipped_claim_test_fails_the_run(tmp_path):
    rc, out = run_suite(
        tmp_path,
        """
        import pytest

        @pytest.mark.claims
        def test_gate():
            pytest.skip("no interval")

        @pytest.mark.claims
        def test_ok():
            assert 1 + 1 == 2

        @pytest.mark.unit
        def test_unit_skip():
            pytest.skip("optional dependency")
    """,
    )
    assert rc == 1, out
    assert "claim gate: FAILED" in out
    assert "claims-marked test skipped: test_gen.py::test_gate: no interval" in out
    assert "test_unit_skip" not in out.split("claim gate: FAILED")[1].split("short test summary")[0]


def test_an_xfail_and_a_clean_claims_run_pass(tmp_path):
    rc, out = run_suite(
        tmp_path,
        """
        import pytest

        @pytest.mark.claims
        @pytest.mark.xfail(strict=True, raises=AssertionError, reason="known not to reproduce")
        def test_known():
            assert False

        @pytest.mark.claims
        def test_ok():
            pass
    """,
        "--require-claims",
    )
    assert rc == 0, out
    assert "claim gate" not in out


def test_require_claims_fails_a_run_without_a_passing_claim_test(tmp_path):
    suite = """
        import pytest

        @pytest.mark.unit
        def test_unit():
            pass
    """
    rc, out = run_suite(tmp_path, suite, "--require-claims")
    assert rc == 1 and "--require-claims: no claims-marked test passed" in out, out
    rc, out = run_suite(tmp_path, suite)
    assert rc == 0, out


NAMED_CLAIMS = """
    import pytest

    @pytest.mark.unit
    @pytest.mark.parametrize("name", ["claims", "models"])
    def test_command(name):
        if name == "claims":
            pytest.skip("a benchmark, skipped")

    @pytest.mark.unit
    @pytest.mark.parametrize("name", ["claims"])
    def test_other(name):
        pass
"""


def test_a_parameter_named_claims_is_not_a_claim_test(tmp_path):
    """The gate reads the marker, not the keywords (a parameter id is a keyword): a skipped test of
    another tier whose parameter is called ``claims`` does not fail the run, and a passing one does
    not satisfy ``--require-claims``."""
    rc, out = run_suite(tmp_path, NAMED_CLAIMS)
    assert rc == 0 and "claim gate" not in out, out
    rc, out = run_suite(tmp_path, NAMED_CLAIMS, "--require-claims")
    assert rc == 1 and "--require-claims: no claims-marked test passed" in out, out


def test_the_gate_reads_the_marker_under_xdist_too(tmp_path):
    """With xdist the gate runs on the controller, which sees the workers' reports only: the
    marker reaches it with each report (a skipped claim test still fails the run; a parameter
    named ``claims`` still does not)."""
    ini = INI.replace(" -p no:xdist", "")
    suite = (
        NAMED_CLAIMS
        + """
    @pytest.mark.claims
    def test_gate():
        pytest.skip("no interval")
"""
    )
    rc, out = run_suite(tmp_path, suite, "-n", "2", ini=ini)
    assert rc == 1 and "claims-marked test skipped: test_gen.py::test_gate: no interval" in out, out
    assert "test_command" not in out.split("claim gate: FAILED")[1].split("short test summary")[0]
    rc, out = run_suite(tmp_path, NAMED_CLAIMS, "-n", "2", "--require-claims", ini=ini)
    assert rc == 1 and "--require-claims: no claims-marked test passed" in out, out


DATA_SUITE = """
    import pytest

    @pytest.mark.claims
    def test_reads_the_data(data_dir):
        assert (data_dir / "gavrikov2024" / "benchmark.csv").is_file()
"""


def test_missing_data_fails_with_the_data_message_unless_the_user_opts_out(tmp_path):
    env = {"REPRO_DATA_DIR": str(tmp_path / "nodata")}
    rc, out = run_suite(tmp_path, DATA_SUITE, env=env)
    assert rc == 1, out
    assert (
        (
            "published data file gavrikov2024/benchmark.csv not found in data directory "
            f"{tmp_path / 'nodata'}"
        )
        in out
    ) and "--allow-missing-data" in out
    assert "1 error" in out and "skipped" not in out
    rc, out = run_suite(tmp_path, DATA_SUITE, "--allow-missing-data", env=env)
    assert rc == 0, out
    assert "1 skipped" in out and "claim gate: NOT RUN" in out
    assert "1 claims-marked test(s) skipped because the published data is missing" in out


def test_the_data_fixture_passes_with_the_data(tmp_path, data_dir):
    rc, out = run_suite(
        tmp_path, DATA_SUITE, "--require-claims", env={"REPRO_DATA_DIR": str(data_dir)}
    )
    assert rc == 0 and "1 passed" in out, out
