"""Layout validation: check a dataset root against its spec and return the ordered items.

A dataset root is listed and its folders, file names and image counts are checked against its
spec (or against the manifest of a generated mini copy) BEFORE anything is decoded.

Pipeline stage: datasets. Every problem is a one-line ``DataError`` naming the dataset, the
root, what was expected and what was found. Item order is torchvision ``ImageFolder`` order
(class folders by label, files sorted by name), except ImageNetV2, whose folders ``0..999``
are ordered and labelled by their integer value, never lexicographically.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from repro.base.errors import DataError
from repro.datasets.classes import class_folders, wnid_to_index
from repro.datasets.specs import CATEGORIES16, DatasetSpec

MINI_MARKER = ".repro-mini.json"
MINI_FORMAT = "repro-mini/1"


@dataclass(frozen=True, slots=True)
class Item:
    path: str  # absolute file path
    label: int
    name: str


@dataclass
class Expectation:
    """What a root must contain: class folders (label order), images per class, total."""

    folders: list[str]
    per_class: int | None
    total: int
    mini: bool = False
    labels: dict[str, int] = field(default_factory=dict)  # folder (or category) -> label


def _short(names: list[str], k: int = 5) -> str:
    shown = ", ".join(names[:k])
    return shown + (f", ... ({len(names)} in all)" if len(names) > k else "")


def _fail(spec: DatasetSpec, root: Path, msg: str) -> DataError:
    return DataError(f"{spec.name} at {root}: {msg}")


def read_mini_marker(root: Path) -> dict | None:
    path = root / MINI_MARKER
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text())
    except ValueError as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from None
    for key in ("format", "dataset", "classes", "per_class"):
        if key not in raw:
            raise DataError(
                f"{path}: missing field {key!r} (expected a manifest written by `python -m repro "
                "data make-mini`)"
            )
    if raw["format"] != MINI_FORMAT:
        raise DataError(f"{path}: field 'format' is {raw['format']!r}, expected {MINI_FORMAT!r}")
    return raw


def _labels_for(spec: DatasetSpec, folders: list[str]) -> dict[str, int]:
    if spec.classes == "index1k":
        return {f: int(f) for f in folders}
    if spec.classes == "categories16":
        return {f: CATEGORIES16.index(f) for f in folders}

    idx = wnid_to_index()
    return {f: idx[f] for f in folders}


def expectation(spec: DatasetSpec, root: Path, *, mini: bool = False) -> Expectation:
    """The expected content of ``root``: the spec's counts, or a mini manifest's."""
    real = class_folders(spec.classes)
    marker = read_mini_marker(root)
    if marker is None:
        if mini:
            raise _fail(
                spec,
                root,
                f"not a generated mini copy (no {MINI_MARKER}); "
                "generate one with `python -m repro data make-mini DIR`",
            )
        return Expectation(real, spec.per_class, spec.total, False, _labels_for(spec, real))
    where = root / MINI_MARKER
    if marker["dataset"] != spec.name:
        raise DataError(
            f"{where}: field 'dataset' is {marker['dataset']!r}, expected {spec.name!r}"
        )
    folders = [str(f) for f in marker["classes"]]
    bad = [f for f in folders if f not in set(real)]
    if bad or not folders:
        raise DataError(
            f"{where}: field 'classes' must list real {spec.classes} class folders; not valid: "
            f"{_short(bad)}"
        )
    per = int(marker["per_class"])
    if per < 1:
        raise DataError(f"{where}: field 'per_class' must be >= 1, got {per}")
    return Expectation(folders, per, per * len(folders), True, _labels_for(spec, folders))


def _describe(spec: DatasetSpec, exp: Expectation) -> str:
    kind = {"category_folders": "category folders", "sessions": "categories"}.get(
        spec.layout, "class folders"
    )
    if exp.per_class is not None:
        return f"{len(exp.folders)} {kind} with {exp.per_class} images each"
    return f"{len(exp.folders)} {kind} with {exp.total} images in all"


def _subdirs(path: Path) -> list[str]:
    with os.scandir(path) as it:
        return sorted(e.name for e in it if e.is_dir() and not e.name.startswith("."))


def _files(path: Path) -> tuple[list[str], list[str]]:
    """(files, sub-folders) of ``path``, hidden entries skipped, sorted."""
    files: list[str] = []
    dirs: list[str] = []
    with os.scandir(path) as it:
        for e in it:
            if e.name.startswith("."):
                continue
            try:
                is_dir = e.is_dir()
            except OSError as exc:  # a symlink loop
                raise DataError(
                    f"{path / e.name}: cannot be read ({exc.strerror}); replace or remove it"
                ) from None
            (dirs if is_dir else files).append(e.name)
    return sorted(files), sorted(dirs)


def _folder_key(spec: DatasetSpec, name: str) -> str | None:
    """Normalize a class-folder name (ImageNetV2 folders may be zero-padded: 7 or 007)."""
    if spec.classes == "index1k":
        return str(int(name)) if name.isdigit() else None
    return name


def scan_condition(spec: DatasetSpec, root: Path, condition: str, exp: Expectation) -> list[Item]:
    """Validate one folder of class folders (the root, or ``root/<corruption>/<severity>``)."""
    base = root / condition if condition else root
    where = f"{condition}: " if condition else ""
    if spec.layout == "sessions":
        return _scan_sessions(spec, root, exp)
    present = _subdirs(base)
    by_key: dict[str, str] = {}
    unexpected: list[str] = []
    expected = set(exp.folders)
    for name in present:
        key = _folder_key(spec, name)
        if key is None or key not in expected:
            unexpected.append(name)
        elif key in by_key:
            raise _fail(
                spec, root, f"{where}folders {by_key[key]!r} and {name!r} both name class {key}"
            )
        else:
            by_key[key] = name
    missing = [f for f in exp.folders if f not in by_key]
    if missing or unexpected:
        found = f"found {len(present)} folders"
        parts = [f"missing {_short(missing)}"] if missing else []
        if unexpected:
            parts.append(f"unexpected {_short(unexpected)}")
        raise _fail(
            spec, root, f"{where}expected {_describe(spec, exp)}, {found}; {'; '.join(parts)}"
        )
    regex = spec.file_regex()
    items: list[Item] = []
    wrong_counts: list[str] = []
    for folder in exp.folders:
        real_name = by_key[folder]
        files, dirs = _files(base / real_name)
        if dirs:
            raise _fail(
                spec,
                root,
                f"{where}{real_name}/{dirs[0]}: unexpected sub-folder inside a class folder",
            )
        for f in files:
            m = regex.fullmatch(f)
            if not m:
                raise _fail(
                    spec,
                    root,
                    f"{where}{real_name}/{f}: file name does not match {spec.pattern_help}",
                )
            if spec.layout == "category_folders" and m.group("shape") != folder:
                raise _fail(
                    spec,
                    root,
                    f"{real_name}/{f}: shape class {m.group('shape')!r} in the file name "
                    f"does not match its folder {real_name!r}",
                )
        if exp.per_class is not None and len(files) != exp.per_class:
            wrong_counts.append(f"{len(files)} images in {real_name}")
        elif not files:
            wrong_counts.append(f"0 images in {real_name}")
        label = exp.labels[folder]
        prefix = f"{condition}/{real_name}" if condition else real_name
        for f in files:
            name = f if spec.name_style == "file" else f"{prefix}/{f}"
            items.append(Item(str(base / real_name / f), label, name))
    if wrong_counts:
        raise _fail(
            spec, root, f"{where}expected {_describe(spec, exp)}, found {_short(wrong_counts, 3)}"
        )
    if len(items) != exp.total:
        raise _fail(
            spec, root, f"{where}expected {_describe(spec, exp)}, found {len(items)} images"
        )
    return items


def _scan_sessions(spec: DatasetSpec, root: Path, exp: Expectation) -> list[Item]:
    dnn = root / "dnn"
    if not dnn.is_dir():
        raise _fail(
            spec, root, "expected a dnn/session-1/ folder (model-vs-human layout), found no dnn/"
        )
    sessions = _subdirs(dnn)
    if sessions != ["session-1"]:
        raise _fail(
            spec, root, f"expected exactly one folder dnn/session-1, found {sessions or 'none'}"
        )
    files, dirs = _files(dnn / "session-1")
    if dirs:
        raise _fail(spec, root, f"dnn/session-1/{dirs[0]}: unexpected sub-folder")
    regex = spec.file_regex()
    counts = {c: 0 for c in exp.folders}
    items: list[Item] = []
    for f in files:
        m = regex.fullmatch(f)
        if not m:
            raise _fail(
                spec, root, f"dnn/session-1/{f}: file name does not match {spec.pattern_help}"
            )
        cat = m.group("shape")
        if cat not in counts:
            raise _fail(
                spec, root, f"dnn/session-1/{f}: category {cat!r} is not in the expected categories"
            )
        counts[cat] += 1
        items.append(Item(str(dnn / "session-1" / f), exp.labels[cat], f))
    wrong = [
        f"{n} images of {c}"
        for c, n in counts.items()
        if exp.per_class is not None and n != exp.per_class
    ]
    if wrong or len(items) != exp.total:
        found = _short(wrong, 3) if wrong else f"{len(items)} images"
        raise _fail(
            spec, root, f"expected {_describe(spec, exp)} ({exp.total} in all), found {found}"
        )
    return items


def check_conditions(spec: DatasetSpec, root: Path) -> None:
    """Corruption datasets: every ``<corruption>/<severity>`` folder must exist."""
    if spec.layout != "corruptions":
        return
    missing = [c for c in spec.conditions if not (root / c).is_dir()]
    present = _subdirs(root)
    unexpected = [p for p in present if p not in spec.corruptions]
    if missing or unexpected:
        parts = [f"missing {_short(missing)}"] if missing else []
        if unexpected:
            parts.append(f"unexpected {_short(unexpected)}")
        raise _fail(
            spec,
            root,
            f"expected {len(spec.corruptions)} corruptions x {len(spec.severities)} severities "
            f"(<corruption>/<severity>/<wnid>/), found {len(present)} corruption folders; "
            f"{'; '.join(parts)}",
        )


def require_root(spec: DatasetSpec, root: Path | None) -> Path:
    if root is None:
        env = f"REPRO_{spec.name.upper()}_ROOT"
        other = (
            f"or put it in the data directory as {spec.data_folder}"
            if spec.data_folder
            else "or generate mini data with `python -m repro data make-mini DIR`"
        )
        raise DataError(
            f'{spec.name}: no root configured (set {env} or [datasets] {spec.name} = "..." in '
            f"repro.toml, {other})"
        )
    root = Path(root).expanduser()
    if not root.is_dir():
        raise DataError(
            f"{spec.name} at {root}: folder not found (expected {spec.title}: {_layout_help(spec)})"
        )
    return root


def _layout_help(spec: DatasetSpec) -> str:
    return {
        "wnid_folders": "<wnid>/<image>",
        "index_folders": "<0..999>/<image>",
        "corruptions": "<corruption>/<severity>/<wnid>/<image>",
        "category_folders": "<category>/<shape><n>-<texture><n>.png",
        "sessions": "dnn/session-1/<image>.png",
        "splits": f"<split>/{spec.pattern_help}, splits 0, 1, 2, 3, 4, train",
    }[spec.layout]
