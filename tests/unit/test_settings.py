"""Settings are read once per command (issue 23, item 2): ``python -m repro`` parses repro.toml
once, checks it whole, and every reader below (the config check, the zoo registry, the weights,
data and store directories, the dataset roots, the runner's defaults, the study paths) gets that
one object; the zoo registry is built once from it."""

from __future__ import annotations

import contextlib
import io
import os

import pytest

pytestmark = pytest.mark.unit


class NoCache(dict):
    """A parse cache that keeps nothing: only passing the settings down can
    make one parse enough."""

    def __setitem__(self, key, value) -> None:
        pass


@pytest.fixture
def config(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    for var in [v for v in os.environ if v.startswith("REPRO_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "repro.toml"
    path.write_text(
        f'[paths]\nstore = "{tmp_path / "st"}"\nweights = "{tmp_path / "w"}"\n'
        '[datasets]\ncue_conflict = "/d/cc"\n[runner]\nmodels = ["tiny_random_a"]\n'
        '[models]\ntv_resnet50 = "/x.pth"\n[models.mine]\nsource = "random"\nreference = "tiny:8"\n'
        'arch = "tiny:8"\nseed = 3\n'
    )
    return path


@pytest.mark.parametrize("argv", [["config"], ["models"], ["plan"]], ids=" ".join)
def test_a_command_parses_repro_toml_once(config, monkeypatch, argv):
    import importlib

    from repro.base import settings
    from repro.cli import main

    specs = importlib.import_module(
        "repro.zoo.specs"
    )  # (repro.zoo.specs is also a function of repro.zoo)
    parsed, built = [], []
    parse = settings._parse

    class Built(dict):  # the zoo registries built with the config's models
        def __setitem__(self, key, value) -> None:
            built.append(key)
            super().__setitem__(key, value)

    monkeypatch.setattr(settings, "_PARSED", NoCache())
    monkeypatch.setattr(settings, "_parse", lambda *a: parsed.append(a[1]) or parse(*a))
    monkeypatch.setattr(specs, "_CONFIGURED", Built())
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    assert rc == 0, err.getvalue()
    assert parsed == [config], parsed  # one parse of the one file, for the whole command
    assert len(built) == 1  # and one registry of its models


def test_outside_a_command_each_file_content_is_parsed_once(config, monkeypatch):
    from repro.base import settings

    parsed = []
    parse = settings._parse
    monkeypatch.setattr(settings, "_PARSED", {})
    monkeypatch.setattr(settings, "_parse", lambda *a: parsed.append(a[1]) or parse(*a))
    first = settings.current()
    assert settings.current() is first and settings.data_dir() is not None and len(parsed) == 1
    assert first.paths.weights == str(config.parent / "w") and first.runner.models == (
        "tiny_random_a",
    )
    config.write_text(config.read_text().replace('"tiny_random_a"', '"tiny_random_b"'))
    assert (
        settings.current().runner.models == ("tiny_random_b",) and len(parsed) == 2
    )  # a changed file is read again


def test_the_active_settings_are_what_every_reader_sees(config, tmp_path, monkeypatch):
    from repro.base.config_check import Settings
    from repro.base.settings import activated, store_dir, weights_dir
    from repro.base.study import study_paths
    from repro.runner.selection import configured_models

    mine = Settings(
        paths={"store": str(tmp_path / "other")},
        runner={"models": ["tv_resnet50"]},
        studies={"paths": [str(tmp_path / "s")]},
    )
    with activated(mine):
        assert store_dir() == tmp_path / "other" and configured_models(None) == ["tv_resnet50"]
        assert study_paths() == [tmp_path / "s"]
        assert weights_dir() == tmp_path / "cache" / "weights"  # this one sets no weights folder
    assert store_dir() == tmp_path / "st"  # the file's, once the block ends
