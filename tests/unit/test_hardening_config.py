"""Config mistakes are errors, not silence (issue 11, item 7): an unknown key, table or [paths]
key, an unknown model override and ``REPRO_CONFIG`` pointing nowhere name the key and the file
(with a did-you-mean); repro.toml is found from the working directory up to the repository
root; ``python -m repro config`` prints the config in use and the resolved settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repro.base.errors import ConfigError
from tests.unit import malformed

pytestmark = pytest.mark.unit


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A working directory under a fake repository root (``.git``), no REPRO_* overrides."""
    (tmp_path / ".git").mkdir()
    # every REPRO_* setting (a mini run earlier in this worker may have set REPRO_<NAME>_ROOT)
    for var in [v for v in os.environ if v.startswith("REPRO_") and v != "REPRO_CACHE_DIR"]:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "which,expect",
    [
        (
            "unknown_dataset_key",
            "[datasets]: unknown key 'imagenet_vall'; did you mean 'imagenet_val'?",
        ),
        ("unknown_table", ": unknown key 'dataset'; did you mean 'datasets'?"),
        ("unknown_paths_key", "[paths]: unknown key 'weight'; did you mean 'weights'?"),
        ("not_toml", "not valid TOML"),
    ],
)
def test_unknown_keys_name_the_key_and_the_file(isolated, which, expect):
    from repro.datasets.roots import dataset_root

    cfg = malformed.write_config(isolated, which)
    with pytest.raises(ConfigError) as err:
        dataset_root("imagenet_val")
    assert str(err.value).startswith(str(cfg)) and expect in str(err.value)


def test_an_override_of_an_unknown_model_is_an_error(isolated):
    import importlib

    specs = importlib.import_module("repro.zoo.specs")

    cfg = malformed.write_config(isolated, "unknown_model_override")
    with pytest.raises(
        ConfigError,
        match=r"\[models\] resnet50_prim: no built-in model of that name; did you mean "
        r"'resnet50_prime'\?",
    ) as err:
        specs.config_overrides()
    assert str(cfg) in str(err.value)


def test_an_unknown_field_of_a_new_model_is_an_error(isolated):
    import importlib

    specs = importlib.import_module("repro.zoo.specs")

    (isolated / "repro.toml").write_text(
        '[models.mine]\nsource = "local"\nreference = "/x.pth"\npickle_global = []\n'
    )
    with pytest.raises(
        ConfigError,
        match=r"\[models.mine\]: unknown key 'pickle_global'; did you mean 'pickle_globals'",
    ):
        specs.specs()


def test_the_studies_table_is_known_and_checked(isolated):
    """``[studies] paths`` (extra study folders, issue 12) is part of the schema: accepted as a list
    of folders, a misspelt key or a wrong type is an error naming it."""
    from repro.base.settings import load
    from repro.base.study import study_paths

    (isolated / "repro.toml").write_text(f'[studies]\npaths = ["{isolated / "mine"}"]\n')
    assert load().studies.paths == (str(isolated / "mine"),)
    assert study_paths() == [isolated / "mine"]
    (isolated / "repro.toml").write_text('[studies]\npath = ["x"]\n')
    with pytest.raises(
        ConfigError, match=r"\[studies\]: unknown key 'path'; did you mean 'paths'\?"
    ):
        load()
    (isolated / "repro.toml").write_text('[studies]\npaths = "x"\n')
    with pytest.raises(
        ConfigError, match=r"\[studies\] paths: expected a list of folders, got 'x'"
    ):
        load()


def test_the_runner_slurm_table_is_known_and_checked(isolated):
    """``[runner.slurm]`` (the resources of a SLURM job, issue 24) is part of the schema: each key
    read as given, an absent one None (the partition's default); a misspelt key, a wrong type or
    an out-of-range value is an error naming the key and what was expected."""
    from repro.base.settings import load

    (isolated / "repro.toml").write_text(
        '[runner.slurm]\npartition = "gpu"\ncpus_per_task = 4\nmem_gb = 16\n'
        "gpus = 1\ntimeout_min = 90\n"
    )
    slurm = load().runner.slurm
    assert (slurm.partition, slurm.cpus_per_task, slurm.mem_gb, slurm.gpus, slurm.timeout_min) == (
        "gpu",
        4,
        16.0,
        1,
        90,
    )
    (isolated / "repro.toml").write_text('[runner]\nmodels = ["tiny_random_a"]\n')
    assert load().runner.slurm.cpus_per_task is None and load().runner.slurm.partition is None
    cfg = isolated / "repro.toml"
    for text, message in [
        (
            "[runner.slurm]\npartiton = 'gpu'\n",
            "[runner.slurm]: unknown key 'partiton'; did you mean 'partition'? (known: "
            "partition, cpus_per_task, mem_gb, gpus, timeout_min)",
        ),
        (
            "[runner.slurm]\ncpus_per_task = 0\n",
            "[runner.slurm] cpus_per_task: expected a whole number of CPUs >= 1, got 0",
        ),
        (
            "[runner.slurm]\ncpus_per_task = 2.5\n",
            "[runner.slurm] cpus_per_task: expected a whole number of CPUs >= 1, got 2.5",
        ),
        (
            "[runner.slurm]\nmem_gb = '16G'\n",
            "[runner.slurm] mem_gb: expected a memory size in GB > 0 (a number), got '16G'",
        ),
        (
            "[runner.slurm]\ngpus = -1\n",
            "[runner.slurm] gpus: expected a whole number of GPUs >= 0, got -1",
        ),
        (
            "[runner.slurm]\ntimeout_min = 0\n",
            "[runner.slurm] timeout_min: expected a time limit in minutes, 1..43200, got 0",
        ),
        (
            "[runner.slurm]\npartition = ''\n",
            "[runner.slurm] partition: expected a partition name, got an empty string",
        ),
        (
            "[runner]\nslurm = 'debug'\n",
            ": [runner] slurm must be a table ([runner.slurm]), got 'debug'",
        ),
    ]:
        cfg.write_text(text)
        with pytest.raises(ConfigError) as err:
            load()
        assert str(err.value) == f"{cfg}{'' if message.startswith(':') else ' '}{message}"


def test_dataset_names_are_checked_by_the_dataset_layer(isolated):
    """The base layer does not know the dataset names (it may not import repro.datasets): it
    checks that a [datasets] value is a path; the names are checked where roots are read."""
    from repro.base.settings import load
    from repro.datasets.roots import check_dataset_keys, dataset_root

    (isolated / "repro.toml").write_text('[datasets]\nimagenet_vall = "/x"\n')
    assert load().datasets == {"imagenet_vall": "/x"}
    with pytest.raises(
        ConfigError, match=r"\[datasets\]: unknown key 'imagenet_vall'; did you mean 'imagenet_val'"
    ):
        check_dataset_keys()
    with pytest.raises(ConfigError, match="imagenet_vall"):
        dataset_root("cue_conflict")  # any root read sees the misspelt name
    (isolated / "repro.toml").write_text("[datasets]\nimagenet_val = 3\n")
    with pytest.raises(
        ConfigError, match=r"\[datasets\] imagenet_val: expected a path \(a string\), got 3"
    ):
        load()


def test_repro_config_pointing_nowhere(isolated, monkeypatch):
    from repro.base.settings import load

    monkeypatch.setenv("REPRO_CONFIG", str(isolated / "nope.toml"))
    with pytest.raises(ConfigError, match=r"REPRO_CONFIG=.*nope\.toml: file not found"):
        load()
    monkeypatch.setenv("REPRO_CONFIG", str(isolated))
    with pytest.raises(ConfigError, match="is a folder"):
        load()


def test_config_is_found_walking_up_to_the_repository_root(isolated):
    from repro.base.config_check import find_config
    from repro.datasets.roots import dataset_root

    deep = isolated / "a" / "b"
    deep.mkdir(parents=True)
    (isolated / "repro.toml").write_text('[datasets]\nimagenet_val = "/from/root"\n')
    assert find_config(deep)[0] == isolated / "repro.toml"
    (isolated / "a" / "repro.toml").write_text('[datasets]\nimagenet_val = "/from/a"\n')
    assert find_config(deep)[0] == isolated / "a" / "repro.toml"  # the nearest one wins

    os.chdir(deep)
    assert dataset_root("imagenet_val") == Path("/from/a")


def test_the_walk_stops_at_the_repository_root(tmp_path, monkeypatch):
    from repro.base.config_check import find_config

    monkeypatch.delenv("REPRO_CONFIG", raising=False)
    (tmp_path / "repro.toml").write_text("")  # above the repository: not used
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    path, how = find_config(repo / "sub")
    assert path is None and "repository root" in how
