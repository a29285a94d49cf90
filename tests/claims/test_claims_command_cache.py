"""``python -m repro claims`` answered from the command cache (repro.base.command_cache): the
second call prints what the first printed without computing a claim; a changed published value,
or a file added to the data directory, makes it compute again and print what the data says."""

from __future__ import annotations

import shutil

import pytest

pytestmark = pytest.mark.claims


@pytest.fixture
def private(tmp_path, data_dir, monkeypatch):
    """A data directory whose Gavrikov table is a copy (the rest linked), a private user cache,
    and a counter of the claims computations."""
    import repro.cli.claims as cli_claims

    root = tmp_path / "data"
    root.mkdir()
    for entry in data_dir.iterdir():
        if entry.name != "gavrikov2024":
            (root / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    shutil.copytree(data_dir / "gavrikov2024", root / "gavrikov2024")
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("REPRO_RESULT_CACHE", raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    computed: list[int] = []
    real = cli_claims._computed

    def counting(args):
        computed.append(1)
        return real(args)

    monkeypatch.setattr(cli_claims, "_computed", counting)
    return root, computed


def _claims(root, capsys, *extra):
    from repro.cli import main

    code = main(["claims", "--study", "gavrikov2024", "--data-dir", str(root), *extra])
    return code, capsys.readouterr().out


def test_the_second_call_prints_the_first_without_computing(private, capsys, tmp_path):
    root, computed = private
    first = _claims(root, capsys, "--json", str(tmp_path / "a.json"))
    second = _claims(root, capsys, "--json", str(tmp_path / "b.json"))
    assert computed == [1]
    assert second[0] == first[0] == 0
    assert second[1].replace("b.json", "a.json") == first[1]
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    _claims(root, capsys, "--wide")  # another option: computed
    assert computed == [1, 1]


def test_a_changed_published_value_is_computed_again(private, capsys):
    """One model's row removed from the copied table: the recomputed values move (the study's
    table now holds 47 ResNet-50s), and the cache does not hide it."""
    root, computed = private
    code, before = _claims(root, capsys)
    table = root / "gavrikov2024" / "benchmark.csv"
    lines = table.read_text().splitlines(keepends=True)
    table.write_text("".join([lines[0], *lines[2:]]))
    _, after = _claims(root, capsys)
    assert computed == [1, 1] and after != before
    (root / "notes.txt").write_text("a file no claim reads\n")
    _, again = _claims(root, capsys)
    assert computed == [1, 1, 1] and again == after


def test_every_option_keys_the_cache_but_where_json_writes():
    """An option added to ``claims`` later keys the cache without anyone listing it: the key is
    every parsed option (the handler and the --json path aside)."""
    import argparse

    from repro.cli import build_parser
    from repro.cli.claims import cache_inputs

    parser = build_parser()
    base = parser.parse_args(["claims"])
    key = cache_inputs(base, [], 100)
    for argv in (["--wide"], ["--power"], ["--study", "imagenetx"], ["--source", "store"]):
        assert cache_inputs(parser.parse_args(["claims", *argv]), [], 100) != key, argv
    new = argparse.Namespace(**vars(base), a_future_option=1)
    assert cache_inputs(new, [], 100) != key
    # where the JSON document goes does not change what is computed; whether it is asked for does
    a = cache_inputs(parser.parse_args(["claims", "--json", "/tmp/a.json"]), [], 100)
    b = cache_inputs(parser.parse_args(["claims", "--json", "/tmp/b.json"]), [], 100)
    assert a == b != key
    assert cache_inputs(base, [], 80) != key  # the width the text was wrapped to
