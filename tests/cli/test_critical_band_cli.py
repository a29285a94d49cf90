"""``python -m repro probe critical-band --noise``: the generator is selectable by name and the
result records the probe version it gives (philox: 4, pcg64: version 3's stimuli); the batch
size is autotuned per (model, device) by default and recorded."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.cli


@pytest.fixture(scope="module")
def mini_val(tmp_path_factory):
    from repro.datasets import make_mini

    return make_mini(tmp_path_factory.mktemp("mini"), per_class=1, datasets=["imagenet_val"])[
        "imagenet_val"
    ]


def test_noise_option_selects_the_generator_and_version(run_cli, mini_val, tmp_path):
    runs = {}
    env = {"REPRO_CACHE_DIR": str(tmp_path)}
    for noise in ("philox", "pcg64"):
        res = run_cli(
            "probe",
            "critical-band",
            "--model",
            "tiny_random_a",
            "--data",
            mini_val,
            "--device",
            "cpu",
            "--noise",
            noise,
            "--json",
            env=env,
        )
        assert res.returncode == 0, res.stderr
        runs[noise] = json.loads(res.stdout)
    assert runs["philox"]["version"] == "4" and runs["pcg64"]["version"] == "3"
    assert (
        runs["philox"]["conditions"][0] == runs["pcg64"]["conditions"][0]
    )  # sd=0: no noise either way
    # --batch-size auto (default): measured once, cached, the same choice the second time
    tuned = json.loads((tmp_path / "autotune.json").read_text())
    (choice,) = tuned.values()
    assert runs["philox"]["batch_size"] == runs["pcg64"]["batch_size"] == choice["batch_size"]
    assert runs["philox"]["memory_format"] == (
        "channels_last" if choice["channels_last"] else "contiguous"
    )
    bad = run_cli(
        "probe",
        "critical-band",
        "--model",
        "tiny_random_a",
        "--data",
        mini_val,
        "--batch-size",
        "0",
    )
    assert (
        bad.returncode == 2
        and "--batch-size must be a positive integer (at most 16384) or auto" in bad.stderr
    )
    bad = run_cli(
        "probe", "critical-band", "--model", "tiny_random_a", "--data", mini_val, "--noise", "mt"
    )
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
    bad = run_cli(
        "probe", "spectral", "--model", "tiny_random_a", "--data", mini_val, "--noise", "pcg64"
    )
    assert bad.returncode == 2 and "--noise: spectral draws no noise" in bad.stderr


def test_the_noise_choices_are_the_generators():
    """The command lists the generators without importing torch; they are the probe's."""
    from repro.cli.probe import NOISE_CHOICES
    from repro.probes import critical_band as cbp
    from repro.probes import noise as nz

    assert tuple(NOISE_CHOICES) == tuple(nz.NOISES) == tuple(cbp.VERSIONS)
