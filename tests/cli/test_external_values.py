"""The tests of tests/unit/test_external_values.py that start a process (`python -m repro` or
another), in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import pytest

from repro.zoo.external import external_values
from tests.unit.test_external_values import GOOD, LITE0, _config

pytestmark = pytest.mark.cli


def test_external_table_does_not_disturb_the_zoo_and_every_command_checks_it(
    tmp_path, monkeypatch, run_cli
):
    from repro.zoo import get_spec

    cfg = _config(
        tmp_path,
        monkeypatch,
        GOOD + '\n[models.my_r50]\nsource = "local"\nreference = "/x.pth"\n'
        '[models.my_r50.external]\n"top1_acc/imagenet" = { value = 76.0, protocol = "p", '
        'source = "s" }\n',
    )
    assert get_spec(LITE0).source == "package" and get_spec("my_r50").arch == "timm:resnet50"
    assert external_values()["my_r50"]["top1_acc/imagenet"].value == 76.0
    cfg.write_text(f'[models.{LITE0}.external]\n"c" = {{ value = 1.0, source = "s" }}\n')
    res = run_cli("models", env={"REPRO_CONFIG": str(cfg)})
    assert (
        res.returncode == 2
        and res.stderr.startswith("error: ")
        and "field 'protocol'" in res.stderr
    )


def test_a_value_outside_its_unit_is_one_line_and_exit_2(tmp_path, monkeypatch, run_cli):
    """A shape bias given in percent (24 for 0.24): every command refuses it before running."""
    cfg = _config(
        tmp_path,
        monkeypatch,
        f'[models.{LITE0}.external]\n"shape-bias" = {{ value = 24, protocol = "p", '
        'source = "s" }\n',
    )
    for argv in (("models",), ("place", "--model", LITE0)):
        res = run_cli(*argv, env={"REPRO_CONFIG": str(cfg)})
        assert res.returncode == 2, res.stdout + res.stderr
        err = res.stderr.strip().splitlines()
        assert err == [
            f"error: {cfg} [models.{LITE0}.external] 'shape-bias': value 24 is outside 0 to 1, "
            "the range of fraction (a fraction: 0.21, not 21)"
        ], err
        assert res.stdout == ""
