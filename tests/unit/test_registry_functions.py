"""The measurement registry's functions (its data, every measurement's dataset and protocol
parameters, is checked against METHODS.md by ``test_measurement_contract.py``): versions, the
probe list, which measurements a run can make (configured datasets) and which produce a column.
Fast and torch-free, so mutation testing (``nox -s mutants``) runs them for every mutant."""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.measurements import registry as reg

pytestmark = pytest.mark.unit


def test_version_joins_the_probe_module_version_and_the_spec_version():
    from repro.probes import shape_bias

    assert shape_bias.VERSION == "1"
    assert reg.get("shape_bias").version() == "1+1"
    spec2 = reg.Measurement(
        "x", "cue_conflict", "m:f", "d", versioned_by="repro.probes.shape_bias", spec_version="3"
    )
    assert spec2.version() == "1+3"
    # a module without VERSION, or none named: "?" (a record made with it is never current); an
    # Environment's own run function versions its measurement by its module
    assert reg.Measurement("y", "d", "m:f", "d", versioned_by="json").version() == "?+1"
    assert reg.Measurement("y", "d", "m:f", "d").version() == "?+1"
    assert (
        reg.Measurement("y", "d", "m:f", "d", run="repro.probes.spectral:maker").version() == "1+1"
    )


def test_version_is_read_from_the_modules_source_without_importing_it(monkeypatch):
    """The interactive commands ask for versions without importing torch: a module's VERSION is
    read from its source (an import would fail here)."""
    import importlib

    def no_import(name, *args, **kwargs):
        raise AssertionError(f"imported {name}")

    monkeypatch.setattr(importlib, "import_module", no_import)
    assert reg.get("spectral").version() == "1+1"
    assert reg.get("critical_band").version() == "4+1"


def test_an_unknown_probe_is_named_with_the_known_ones():
    with pytest.raises(ConfigError) as bad:
        reg.probe_variants("shape-bais")
    assert str(bad.value) == f"unknown probe 'shape-bais' (known: {', '.join(reg.probes())})"
    assert ", " in str(bad.value) and "shape" in str(bad.value)


def test_current_versions_skip_a_measurement_whose_module_does_not_import(monkeypatch):
    broken = reg.Measurement("broken", "d", "m:f", "d", versioned_by="repro_no_such_module")
    real = reg.MEASUREMENTS.get

    monkeypatch.setattr(
        reg.MEASUREMENTS, "get", lambda name: broken if name == "broken" else real(name)
    )
    assert reg.current_versions(["broken", "shape_bias", "spectral"]) == {
        "shape_bias": "1+1",
        "spectral": "1+1",
    }
    from repro.probes import critical_band

    every = reg.current_versions()
    assert every["critical_band"] == f"{critical_band.VERSION}+1" and sorted(every) == sorted(
        reg.names()
    )


def test_the_probes_by_their_command_line_names():
    probes = reg.probes()
    assert sorted(probes) == ["critical-band", "shape-bias", "spectral"]
    assert probes["shape-bias"] is reg.get("shape_bias") and probes["critical-band"] is reg.get(
        "critical_band"
    )


def test_split_by_configured_dataset(monkeypatch):
    import repro.datasets.roots as roots

    seen = []

    def root(name, data_dir=None):
        seen.append(data_dir)
        return f"/data/{name}" if name == "cue_conflict" else None

    monkeypatch.setattr(roots, "dataset_root", root)
    assert reg.configured_roots(["cue_conflict", "imagenet_val", "cue_conflict"]) == {
        "cue_conflict": "/data/cue_conflict"
    }
    assert (
        reg.configured_roots(["cue_conflict"], "/d") == {"cue_conflict": "/data/cue_conflict"}
        and seen[-1] == "/d"
    )
    runnable, missing = reg.split_configured(["shape_bias", "spectral", "critical_band"])
    assert runnable == ["shape_bias"] and missing == {
        "spectral": "imagenet_val",
        "critical_band": "imagenet_val",
    }


def test_measurements_for_columns():
    assert reg.measurements_for_columns(["shape-bias", "top1_acc/imagenet-real"]) == [
        "imagenet_real",
        "shape_bias",
    ]
    assert reg.measurements_for_columns(["top1_acc/fog_3"]) == [
        "imagenet_c"
    ]  # a corruption x severity cell
    assert reg.measurements_for_columns(["top1_acc/imagenet-c"]) == ["imagenet_c"]
    assert reg.measurements_for_columns(
        ["metric/criticalband/cf_norm", "metric/bandpass/HFC/0.3"]
    ) == ["spectral", "critical_band"]
    assert reg.measurements_for_columns(["top1_acc/fog", "no-such-column"]) == []


def test_a_lazy_argument_resolves_to_what_it_names():
    from repro.datasets.class_subsets import IMAGENET_A_CLASSES

    assert reg.Lazy("repro.datasets.class_subsets:IMAGENET_A_CLASSES").resolve() is (
        IMAGENET_A_CLASSES
    )
    a = reg.get("imagenet_a")
    assert a.kwargs["class_subset"].resolve() is IMAGENET_A_CLASSES


def test_a_correlation_as_json_is_its_four_numbers():
    from repro.analysis.correlation import Correlation

    c = Correlation(0.5, 0.01, 48, (0.25, 0.7), "bootstrap", dropped=1)
    assert c.as_json() == {"rho": 0.5, "p": 0.01, "n": 48, "interval": [0.25, 0.7]}
