"""Named measuring sessions of a study (``[sessions.<name>]`` in study.toml; ``python -m repro
measure --session NAME``): parsed and checked field by field, found in exactly one study, and
refused with a one-line error naming the datasets it cannot find before anything runs."""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.base.study import get_study, read_study
from repro.runner.dispatch import MeasureRequest, apply_session, find_session

pytestmark = pytest.mark.unit

BASE = (
    'name = "s"\ntitle = "T"\ncitation = "C"\nclaims = "claims.toml"\n[table]\nfile = "table.csv"\n'
)


def _folder(tmp_path, sessions: str):
    (tmp_path / "study.toml").write_text(BASE + sessions)
    (tmp_path / "claims.toml").write_text("")
    (tmp_path / "table.csv").write_text("model,x\na,1\n")
    return tmp_path


def test_a_session_is_read_with_its_defaults(tmp_path):
    study = read_study(
        _folder(
            tmp_path,
            '[sessions.cpu]\ndescription = "d"\nmodels = ["m1", "m2"]\n'
            'measurements = ["shape_bias"]\n',
        )
    )
    s = study.sessions["cpu"]
    assert (s.name, s.models, s.measurements, s.device, s.batch_size) == (
        "cpu",
        ("m1", "m2"),
        ("shape_bias",),
        "cpu",
        16,
    )
    assert s.reproduce is None  # no part measured by `reproduce` unless declared


@pytest.mark.parametrize(
    "body, message",
    [
        (
            'description = "d"\nmodels = []\nmeasurements = ["x"]\n',
            "'models' and 'measurements' must be non-empty",
        ),
        (
            'description = "d"\nmodels = ["m"]\nmeasurements = ["x"]\nbatch_size = 0\n',
            "'batch_size' must be a positive",
        ),
        (
            'description = "d"\nmodels = ["m"]\nmeasurements = ["x"]\nworkers = 2\n',
            r"unknown field\(s\) workers",
        ),
        (
            'models = ["m"]\nmeasurements = ["x"]\n',
            "field 'description' must be a non-empty string",
        ),
        (
            'description = "d"\nmodels = "m"\nmeasurements = ["x"]\n',
            "field 'models' must be a list of strings",
        ),
        # the part `reproduce` measures with no dataset configured: a
        # non-empty subset of the session's
        (
            'description = "d"\nmodels = ["m"]\nmeasurements = ["x"]\n'
            'reproduce = { models = ["n"], measurements = ["x"] }\n',
            r"\[sessions.bad\] reproduce: models n not in the session's models \(m\)",
        ),
        (
            'description = "d"\nmodels = ["m"]\nmeasurements = ["x"]\n'
            'reproduce = { models = ["m"], measurements = [] }\n',
            r"\[sessions.bad\] reproduce: 'models' and 'measurements' must be non-empty",
        ),
        (
            'description = "d"\nmodels = ["m"]\nmeasurements = ["x"]\nreproduce = 3\n',
            r"\[sessions.bad\] reproduce: expected a table \{ models = \[...\], "
            r"measurements = \[...\] \}",
        ),
        (
            'description = "d"\nmodels = ["m"]\nmeasurements = ["x"]\n'
            'reproduce = { models = ["m"], measurements = ["x"], '
            'device = "cpu" }\n',
            r"\[sessions.bad\] reproduce: unknown field\(s\) device \(known: models, "
            r"measurements\)",
        ),
    ],
)
def test_a_bad_session_is_a_one_line_error_naming_file_and_field(tmp_path, body, message):
    with pytest.raises(ConfigError, match=message) as err:
        read_study(_folder(tmp_path, "[sessions.bad]\n" + body))
    assert "[sessions.bad]" in str(err.value) and "study.toml" in str(err.value)


def test_the_study_defines_the_real_session():
    s = get_study("gavrikov2024").sessions["real"]
    assert s.models == ("efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2")
    assert set(s.measurements) == {
        "shape_bias",
        "critical_band_16_premade",
        "critical_band_16",
        "spectral_16",
    }
    assert (s.device, s.batch_size) == ("cpu", 16)
    # what `reproduce` measures with no dataset configured (issue 22): Lite0 on the shipped stimuli
    assert tuple(s.reproduce) == (
        ("efficientnet_lite0",),
        ("shape_bias", "critical_band_16_premade"),
    )
    from repro.measurements.registry import get
    from repro.zoo import get_spec

    for m in s.models:
        get_spec(m)  # every model is a zoo entry
    for m in s.measurements:
        get(m)  # every measurement is registered


def test_an_unknown_session_names_the_known_ones():
    with pytest.raises(
        ConfigError,
        match=r"--session 'nope': no selected study defines it \(known sessions: real\)",
    ):
        find_session([get_study("gavrikov2024"), get_study("imagenetx")], "nope")


def test_session_fills_what_is_not_given_and_checks_its_datasets(tmp_path, monkeypatch):
    for name in ("CUE_CONFLICT", "GRAYSPLIT", "CBMSPLIT"):
        monkeypatch.delenv(f"REPRO_{name}_ROOT", raising=False)
    (tmp_path / "repro.toml").write_text(
        ""
    )  # no [datasets]: roots come from the data directory alone
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "repro.toml"))
    studies = [get_study("gavrikov2024")]
    req = MeasureRequest(models=[], measurements=[], studies=studies, session="real")
    (tmp_path / "texture-vs-shape" / "cue-conflict").mkdir(parents=True)
    with pytest.raises(
        ConfigError,
        match=r"session real: dataset\(s\) not found: cbmsplit \(for critical_band_16_premade\), "
        r"graysplit \(for critical_band_16\), graysplit \(for spectral_16\)",
    ):
        apply_session(req, tmp_path)
    for folder in ("GraySplit", "CBMSplit"):
        (tmp_path / "critical-band-masking" / folder).mkdir(parents=True)
    out = apply_session(req, tmp_path)
    assert (
        out.models == list(studies[0].sessions["real"].models)
        and out.device == "cpu"
        and out.batch_size == 16
    )
    given = apply_session(
        MeasureRequest(
            models=["efficientnet_lite0"],
            measurements=["shape_bias"],
            studies=studies,
            session="real",
            device="cuda",
            batch_size=8,
        ),
        tmp_path,
    )
    assert (given.models, given.measurements, given.device, given.batch_size) == (
        ["efficientnet_lite0"],
        ["shape_bias"],
        "cuda",
        8,
    )
