"""``python -m repro compare --independent``: other labs' values of the study's own checkpoints
beside the published ones (repro.diagnostics.independent), a lab added with a declaration and a CSV
only, and bad declarations refused in one line (exit 2, no JSON written)."""

from __future__ import annotations

import json

import pytest

from repro.diagnostics.independent import AGREES, DIFFERS, INCONCLUSIVE, compare_protocols, decide

pytestmark = pytest.mark.cli

LAB_CSV = "model,val,img_size\nmy_tv_r50,76.15,224\nmy_sin,60.00,224\nmy_l2_eps3,57.90,224\n"


def _lab(folder, *, csv_text=LAB_CSV, identity=None, columns=None, sha256=""):
    """A lab's declaration and CSV in ``folder``: what a user writes, no code."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mylab.csv").write_text(csv_text)
    identity = identity or [
        ("tv_resnet50", "my_tv_r50", "certain", "same torchvision enum"),
        ("resnet50_trained_on_SIN", "my_sin", "probable", "same bitbucket URL"),
        ("robust_resnet50_l2_eps3", "my_l2_eps3", "not_same", "Engstrom et al.'s, not Salman's"),
    ]
    columns = columns or [('column = "top1_acc/imagenet"', 'value = "val"')]
    text = [
        'name = "mylab"',
        'title = "My lab re-measurement"',
        'citation = "Doe et al. 2031"',
        'study = "gavrikov2024"',
        "[[files]]",
        'file = "mylab.csv"',
        'license = "CC BY 4.0"',
        f'sha256 = "{sha256}"' if sha256 else "",
        "[protocol]",
        'images = "ImageNet val (50,000)"',
        'classes = "1000"',
        'size = "224"',
        'crop_pct = "0.875"',
        'interpolation = "bilinear"',
    ]
    for study_model, source_model, level, evidence in identity:
        text += [
            "[[identity]]",
            f'study_model = "{study_model}"',
            f'source_model = "{source_model}"',
            f'level = "{level}"',
            f'evidence = "{evidence}"',
        ]
    for column, value in columns:
        text += ["[[columns]]", column, value, 'unit = "percent"', "images = 50000"]
    (folder / "mylab.toml").write_text("\n".join(text) + "\n")
    return folder / "mylab.toml"


def _run(run_cli, data_dir, tmp_path, env=None):
    out = tmp_path / "out" / "independent.json"
    res = run_cli(
        "compare", "--independent", "--data-dir", str(data_dir), "--json", str(out), env=env
    )
    return res, out


def _rows(doc, **where):
    (study,) = [s for s in doc["studies"] if s["study"] == "gavrikov2024"]
    return [r for r in study["rows"] if all(r[k] == v for k, v in where.items())]


# --------------------------------------------------------------------------- the rule
@pytest.mark.parametrize(
    ("diff", "half", "margin", "label"),
    [
        (-0.008, 0.05, 0.1, AGREES),  # MoCo v3 100ep: 68.9 printed to 1 decimal vs 68.908
        (0.094, 0.05, 0.1, INCONCLUSIVE),  # PRIME 77.0 vs 76.906: the interval crosses the margin
        (0.31, 0.0, 0.1, DIFFERS),  # a count on the same images, 31 of 10,000 apart
        (0.3067, 0.0, 0.31, AGREES),  # one image of the ReaL last batch (1/326)
        (0.0, 0.0, None, INCONCLUSIVE),  # no margin declared: never agrees
    ],
)
def test_the_rule_labels_the_interval_of_the_difference(diff, half, margin, label):
    assert decide(diff, half, margin)[0] == label


def test_protocol_fields_both_state_decide_and_unstated_ones_are_named():
    study = {"size": "224", "crop_pct": "0.875", "interpolation": "bilinear"}
    differ, unstated = compare_protocols(study, {"size": "224", "crop_pct": "0.950"})
    assert differ == ["crop_pct: 0.950 vs 0.875"]
    assert unstated == ["interpolation (not stated by the source)"]
    assert compare_protocols(study, {"crop_pct": "0.8750", "size": "224.0"})[0] == []


# --------------------------------------------------------------------------- the study's sources
def test_compare_independent_on_the_shared_data(run_cli, data_dir, tmp_path):
    res, out = _run(run_cli, data_dir, tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(out.read_text())
    fields = {"study_model", "source", "source_model", "identity", "column", "published"}
    fields |= {"independent", "difference", "label", "protocol_note"}
    (real,) = _rows(doc, source="imagenetx", column="top1_acc/imagenet-real")
    assert fields <= set(real)
    # ImageNet-X's per-image predictions of torchvision's ResNet-50 V1 on the study's last batch
    assert real["study_model"] == "tv_resnet50" and real["count"] == [283, 326]
    assert real["published"] == pytest.approx(100 * 282 / 326)
    assert real["difference"] == pytest.approx(100 / 326) and real["label"] == AGREES
    (val,) = _rows(doc, source="imagenetx", column="top1_acc/imagenet")
    assert val["count"] == [38065, 50000]
    # a name collision is kept and never judged
    (eps3,) = _rows(
        doc, source="testbed", study_model="robust_resnet50_l2_eps3", column="top1_acc/imagenet"
    )
    assert eps3["label"] == "not_same" and eps3["source_model"] == "resnet50_l2_eps3_robust"
    assert eps3["independent"] == pytest.approx(57.896, abs=0.01)  # other weights: 4.9 lower
    assert eps3["difference"] == pytest.approx(-4.934, abs=0.01)
    # timm at crop 0.95 bicubic: another protocol, its level never judged
    (a1,) = _rows(doc, source="timm", study_model="resnet50.a1_in1k", column="top1_acc/imagenet")
    assert a1["label"] == "other_protocol" and "crop_pct: 0.950 vs 0.875" in a1["protocol_note"]
    # a model the study measured at timm's bicubic (protocols.toml [[model]]): its clean top-1 is
    # compared on the level and agrees; its other columns keep the column's protocol
    bit = "resnetv2_50x1_bit_distilled"
    (bit_val,) = _rows(doc, source="timm", study_model=bit, column="top1_acc/imagenet")
    assert bit_val["label"] == AGREES and abs(bit_val["difference"]) < 1e-3
    assert "own protocol for this model: interpolation bicubic" in bit_val["protocol_note"]
    (bit_v2,) = _rows(doc, source="timm", study_model=bit, column="top1_acc/imagenet-v2")
    assert bit_v2["label"] == "other_protocol"
    # every differs names a cause
    for r in _rows(doc, label=DIFFERS):
        assert r["cause"], r
    (study,) = doc["studies"]
    summary = {(s["source"], s["column"]): s for s in study["summary"]}
    testbed_val = summary[("testbed", "top1_acc/imagenet")]
    assert (testbed_val["models"], testbed_val["agrees"], testbed_val["differs"]) == (11, 11, 0)
    assert testbed_val["largest_abs_difference_judged"] == pytest.approx(0.044, abs=1e-3)
    assert testbed_val["spearman_n"] == 11 and testbed_val["spearman"] == pytest.approx(1.0)
    c = summary[("testbed", "top1_acc/imagenet-c (mean of the 95 on-disk cells)")]
    assert c["other_protocol"] == 9 and c["agrees"] + c["differs"] + c["inconclusive"] == 0
    assert "summary per source x column" in res.stdout


# --------------------------------------------------------------------------- a user's lab
def test_a_lab_added_with_a_declaration_and_a_csv_shows_in_compare(run_cli, data_dir, tmp_path):
    decl = _lab(tmp_path / "lab")
    res, out = _run(run_cli, data_dir, tmp_path, env={"REPRO_INDEPENDENT_PATH": str(decl.parent)})
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(out.read_text())
    rows = {r["study_model"]: r for r in _rows(doc, source="mylab")}
    assert set(rows) == {"tv_resnet50", "resnet50_trained_on_SIN", "robust_resnet50_l2_eps3"}
    tv = rows["tv_resnet50"]  # 76.15 (2 decimals) vs 76.146: inside the 0.1 margin
    assert tv["label"] == AGREES and tv["difference"] == pytest.approx(0.004, abs=1e-6)
    sin = rows["resnet50_trained_on_SIN"]  # 60.00 vs the published 60.18: outside it
    assert sin["published"] == pytest.approx(60.18, abs=1e-4)
    assert sin["difference"] == pytest.approx(-0.18, abs=1e-4)
    assert sin["label"] == DIFFERS and sin["cause"].startswith("identity only probable")
    assert rows["robust_resnet50_l2_eps3"]["label"] == "not_same"
    assert "mylab" in res.stdout


# --------------------------------------------------------------------------- bad input
BAD = {
    "sha256": (
        dict(sha256="0" * 64),
        ["mylab.csv", "sha256", "0" * 64],
    ),
    "unknown column": (
        dict(columns=[('column = "top1_acc/imagenet-x"', 'value = "val"')]),
        ["mylab.toml", "[[columns]] #1", "top1_acc/imagenet-x"],
    ),
    "unknown field in a row": (
        dict(columns=[('column = "top1_acc/imagenet"\ncolour = "red"', 'value = "val"')]),
        ["mylab.toml", "[[columns]] #1", "unknown field(s) colour", "known:"],
    ),
    "unknown study model": (
        dict(identity=[("tv_resnet5O", "my_tv_r50", "certain", "typo")]),
        ["mylab.toml", "[[identity]] #1", "study_model", "tv_resnet5O"],
    ),
    "duplicate mapping": (
        dict(
            identity=[
                ("tv_resnet50", "my_tv_r50", "certain", "x"),
                ("tv2_resnet50", "my_tv_r50", "probable", "y"),
            ]
        ),
        ["mylab.toml", "[[identity]] #2", "duplicate mapping", "source_model"],
    ),
    "value outside its unit": (
        dict(csv_text="model,val,img_size\nmy_tv_r50,761.5,224\n"),
        ["mylab.csv", "row 2", "'val'", "percent"],
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_declaration_is_one_line_exit_2_and_nothing_written(
    case, run_cli, data_dir, tmp_path
):
    kwargs, expected = BAD[case]
    decl = _lab(tmp_path / "lab", **kwargs)
    res, out = _run(run_cli, data_dir, tmp_path, env={"REPRO_INDEPENDENT_PATH": str(decl)})
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    lines = [x for x in res.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    for text in expected:
        assert text in lines[0], (text, lines[0])
    assert not out.parent.exists() or not any(out.parent.iterdir())  # no JSON, no temp file


# --------------------------------------------------------------------------- models
def test_models_shows_each_models_names_in_other_sources(run_cli):
    res = run_cli("models", "--json", "--study")
    assert res.returncode == 0, res.stderr[-2000:]
    rows = {r["name"]: r for r in json.loads(res.stdout)["models"]}
    tv = {(a["source"], a["name"]): a["identity"] for a in rows["tv_resnet50"]["other_sources"]}
    assert tv[("testbed", "resnet50")] == "probable"
    assert tv[("timm", "resnet50.tv_in1k")] == "certain"
    assert tv[("imagenetx", "base/ResNet50")] == "certain"
    eps3 = {a["name"]: a["identity"] for a in rows["robust_resnet50_l2_eps3"]["other_sources"]}
    assert eps3["resnet50_l2_eps3_robust"] == "not_same"  # the name collision, listed as such
    text = run_cli("models", "--study").stdout
    (line,) = [x for x in text.splitlines() if x.startswith("robust_resnet50_l2_eps3 ")]
    assert "testbed:resnet50_l2_eps3_robust (not_same)" in line


def test_a_difference_carries_no_digits_below_the_values_precision():
    """54.53 - 54.53 is 0 at the printed decimals, and 0 against a float32 value printed in
    full (54.529999...), not a float residue such as 1.2e-09; a real difference is kept."""
    from repro.diagnostics.independent import exact_difference

    class Printed:
        decimals = 2

    class InFull:
        decimals = None

    assert exact_difference(54.53, 54.529999999, 2, Printed()) == 0.0
    assert exact_difference(76.9, 76.89, 1, Printed()) == 0.01  # the finer side's decimals
    float32_54_53 = 54.529998779296875  # float32(54.53), as benchmark.csv writes it
    assert 54.53 - float32_54_53 != 0.0
    assert exact_difference(54.53, float32_54_53, 2, InFull()) == 0.0
    assert exact_difference(76.15, 76.14599997314453, 2, InFull()) == 76.15 - 76.14599997314453
    assert exact_difference(1.0, 0.25, None, None) == 0.75
