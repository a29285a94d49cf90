"""The committed mutation results (tests/mutation.py): what ``save`` writes from mutmut's meta
files, ``restore`` seeds a fresh ``mutants/`` with, in mutmut's own format, so that a run on
another machine keeps each unchanged function's results."""

from __future__ import annotations

import json

import pytest

from tests import mutation

pytestmark = pytest.mark.unit

META = {
    "exit_code_by_key": {
        "repro.scoring.spectral.x_radius__mutmut_1": 1,
        "repro.scoring.spectral.x_radius__mutmut_2": 0,
        "repro.scoring.spectral.x_radius__mutmut_3": None,
        "repro.scoring.spectral.xǁGridǁfit__mutmut_1": 33,
        "repro.scoring.spectral.xǁGridǁfit__mutmut_2": 36,
    },
    "hash_by_function_name": {"x_radius": "9a2112383aaf", "xǁGridǁfit": "0123456789ab"},
    "type_check_error_by_key": {},
    "durations_by_key": {"repro.scoring.spectral.x_radius__mutmut_1": 0.5},
    "estimated_durations_by_key": {},
}


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setattr(mutation, "MUTANTS", tmp_path / "mutants")
    monkeypatch.setattr(mutation, "SNAPSHOT", tmp_path / "tests" / "mutants_results.json")
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "scope", lambda: ["repro/scoring/spectral.py"])
    (tmp_path / "tests").mkdir()
    meta = tmp_path / "mutants" / "repro" / "scoring" / "spectral.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps(META))
    return tmp_path


def test_save_keeps_each_functions_hash_and_codes_in_mutant_order(tree):
    assert mutation.save_snapshot() == 5
    doc = json.loads((tree / "tests" / "mutants_results.json").read_text())
    assert doc == {
        "repro/scoring/spectral.py": {
            "x_radius": {"hash": "9a2112383aaf", "codes": [1, 0, None]},
            "xǁGridǁfit": {"hash": "0123456789ab", "codes": [33, 36]},
        }
    }


def test_restore_seeds_a_fresh_mutants_folder_in_mutmuts_format(tree):
    mutation.save_snapshot()
    before = mutation.results()
    (tree / "mutants" / "repro" / "scoring" / "spectral.py.meta").unlink()
    assert mutation.restore_snapshot() == ["repro/scoring/spectral.py"]
    seeded = json.loads((tree / "mutants" / "repro" / "scoring" / "spectral.py.meta").read_text())
    assert seeded["exit_code_by_key"] == META["exit_code_by_key"]
    assert seeded["hash_by_function_name"] == META["hash_by_function_name"]
    assert set(seeded) == set(META)  # every key mutmut's loader pops
    assert mutation.results() == before
    assert before["repro/scoring/spectral.py"]["repro.scoring.spectral.x_radius__mutmut_2"] == (
        "survived"
    )
    # results already there are never overwritten
    assert mutation.restore_snapshot() == []


def test_the_report_reads_the_snapshot_without_mutants(tree):
    mutation.save_snapshot()
    before = mutation.results()
    import shutil

    shutil.rmtree(tree / "mutants")
    assert mutation.results() == before


def test_a_foreign_mutant_name_is_refused(tree):
    meta = tree / "mutants" / "repro" / "scoring" / "spectral.py.meta"
    doc = dict(META, exit_code_by_key={"repro.other.x_f__mutmut_1": 1})
    meta.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="unexpected mutant name 'repro.other.x_f__mutmut_1'"):
        mutation.save_snapshot()


def test_a_module_new_to_the_scope_is_mutated_and_the_test_mapping_collected_again(
    tree, monkeypatch
):
    """mutmut left a plain copy of a module that was out of scope, and maps tests only for tests
    it has not seen: both go when the module joins the scope, and only then."""
    mutants = tree / "mutants"
    plain = mutants / "repro" / "store" / "validate.py"
    other = mutants / "repro" / "store" / "files.py"
    mutated = mutants / "repro" / "scoring" / "spectral.py"
    for path in (plain, other, mutated):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    mutated.write_text("def x_f__mutmut_1(): ...\n")  # mutmut's copy holds the mutants
    stats = mutants / "mutmut-stats.json"
    stats.write_text("{}")
    assert mutation.admit_new_modules() == []  # nothing new: everything stays
    assert plain.exists() and stats.exists()
    monkeypatch.setattr(
        mutation, "scope", lambda: ["repro/scoring/spectral.py", "repro/store/validate.py"]
    )
    assert mutation.admit_new_modules() == ["repro/store/validate.py"]
    assert not plain.exists() and not stats.exists()
    assert other.exists() and mutated.exists()  # out of scope / already mutated: kept
    assert mutation.admit_new_modules() == []


def test_a_module_admitted_again_after_leaving_the_scope_is_mutated_again(tree, monkeypatch):
    """Out of the scope, mutmut replaced its mutated copy by a plain one but kept its ``.meta``:
    admitted again, both go (else its mutants would be reported as having no tests)."""
    mutants = tree / "mutants"
    copy = mutants / "repro" / "scoring" / "spectral.py"
    meta = mutants / "repro" / "scoring" / "spectral.py.meta"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text("x = 1\n")
    assert json.loads(meta.read_text())["exit_code_by_key"]  # mutants recorded
    stats = mutants / "mutmut-stats.json"
    stats.write_text("{}")
    monkeypatch.setattr(mutation, "scope", lambda: ["repro/scoring/spectral.py"])
    assert mutation.admit_new_modules() == ["repro/scoring/spectral.py"]
    assert not copy.exists() and not meta.exists() and not stats.exists()
