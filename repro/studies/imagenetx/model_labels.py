"""ImageNet-X: which group each published model belongs to, for the claims that compare groups.

- Learning paradigm: the ``imagenet-x`` package's own ``imagenet_x/model_types.py``
  (``model_types_map``: testbed model name -> ``ModelTypes``, e.g. ``Self-supervised``,
  ``Supervised on ImageNet-1K``; ``SELFSUPERVISED_MODELS``: the self-supervised models of the
  model-vs-human and base sets). The file is located through the installed distribution's
  metadata (the package is not imported: its ``__init__`` pulls in its plotting code), its
  sha256 checked against the distribution's RECORD, and only that file is executed (it imports
  nothing but ``enum``). Its version and checksum go with every result (``PackageFile.info``).
- Architecture: no file of the package or of the ImageNet-X repository classifies architectures,
  so a declared name rule, ``architecture_families.toml`` in this folder (a name pattern per
  family), labels the models; every match and every unmatched model is reported.

Every failure (package or file missing, file changed since install, an attribute or type the
claim names missing, a malformed rule table) is one error line naming the file and what was
expected.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError, DataError

DISTRIBUTION = "imagenet-x"
EXPECTED_VERSION = "0.0.7"  # requirements.lock pins it, with hashes
MODEL_TYPES_FILE = "imagenet_x/model_types.py"
ARCHITECTURE_RULES = "architecture_families.toml"
FOLDER = Path(__file__).parent


@dataclass(frozen=True)
class PackageFile:
    """The package's model-type table as read.

    Each listed model's type value, the self-supervised models of the other sets, the type values
    the package defines, and where they came from."""

    types: dict[str, str]
    selfsupervised: tuple[str, ...]
    type_values: tuple[str, ...]
    version: str
    sha256: str

    @property
    def info(self) -> dict[str, Any]:
        return {
            "package": DISTRIBUTION,
            "version": self.version,
            "file": MODEL_TYPES_FILE,
            "sha256": self.sha256,
            "models_listed": len(self.types),
        }

    def check_types(self, values: list[str], asker: str) -> None:
        """ConfigError unless every type value ``asker`` names is one the package defines."""
        unknown = [v for v in values if v not in self.type_values]
        if unknown:
            raise ConfigError(
                f"{asker}: model type(s) {', '.join(map(repr, unknown))} not defined by "
                f"{MODEL_TYPES_FILE} of {DISTRIBUTION} {self.version} (defined: "
                f"{', '.join(self.type_values)})"
            )


def _record_sha256(file: Any) -> str | None:
    """The RECORD's sha256 of a distribution file, as hex (None when the RECORD has none)."""
    h = getattr(file, "hash", None)
    if h is None or h.mode != "sha256":
        return None
    return base64.urlsafe_b64decode(h.value + "=" * (-len(h.value) % 4)).hex()


@lru_cache(maxsize=1)
def package_model_types() -> PackageFile:
    """``imagenet_x/model_types.py`` of the installed ``imagenet-x`` (see the module docstring).

    DataError when it cannot be read as expected."""
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise DataError(
            f"the {DISTRIBUTION} package ({DISTRIBUTION}=={EXPECTED_VERSION}) is not installed; "
            f"its {MODEL_TYPES_FILE} labels the models' learning paradigm"
        ) from None
    entry = next((f for f in dist.files or () if str(f) == MODEL_TYPES_FILE), None)
    path = Path(str(dist.locate_file(entry))) if entry is not None else None
    if entry is None or path is None or not path.is_file():
        raise DataError(
            f"{MODEL_TYPES_FILE}: missing from the installed {DISTRIBUTION} {dist.version} "
            f"(expected version {EXPECTED_VERSION}, which ships it)"
        )
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    recorded = _record_sha256(entry)
    if recorded is not None and recorded != sha:
        raise DataError(
            f"{path}: sha256 {sha} differs from the installed {DISTRIBUTION} {dist.version}'s "
            f"RECORD ({recorded}): the file was changed after installation"
        )
    spec = importlib.util.spec_from_file_location("_imagenet_x_model_types", path)
    if spec is None or spec.loader is None:
        raise DataError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # third-party code: any failure is the file's
        raise DataError(f"{path}: fails to load ({type(exc).__name__}: {exc})") from None
    missing = [
        a
        for a in ("model_types_map", "SELFSUPERVISED_MODELS", "ModelTypes")
        if not hasattr(module, a)
    ]
    if missing:
        raise DataError(
            f"{path}: no {', '.join(missing)} (expected the model-type table of "
            f"{DISTRIBUTION} {EXPECTED_VERSION})"
        )
    try:
        types = {str(k): str(v.value) for k, v in module.model_types_map.items()}
        values = tuple(str(t.value) for t in module.ModelTypes)
    except AttributeError:
        raise DataError(
            f"{path}: model_types_map values are not ModelTypes members (expected "
            "'model name': ModelTypes.X)"
        ) from None
    return PackageFile(
        types, tuple(map(str, module.SELFSUPERVISED_MODELS)), values, dist.version, sha
    )


@dataclass(frozen=True)
class NameRules:
    """The declared architecture rule.

    It maps family -> compiled name pattern (``re.match``), and names the package model types whose
    models it is applied to."""

    families: dict[str, re.Pattern[str]]
    population_types: tuple[str, ...]
    sha256: str

    def family(self, name: str) -> str | None:
        """The family whose pattern matches ``name``, None when none does.

        DataError when more than one does (the rule must be unambiguous)."""
        hits = [f for f, pattern in self.families.items() if pattern.match(name)]
        if len(hits) > 1:
            raise DataError(
                f"{FOLDER / ARCHITECTURE_RULES}: model {name!r} matches the patterns of "
                f"{' and '.join(hits)} (expected one family per model)"
            )
        return hits[0] if hits else None


#: the model set whose models the package's model types label
TYPED_SET = "imagenet_testbed"


def model_type_categories(data_dir: Any, known_models: Any = None) -> dict[str, list[str]]:
    """The study's model categories: the testbed rows of each model type the package defines.

    The rows (``imagenet_testbed/<model>``) are in the package's order (a type with no row left out;
    a row the package does not list is in none). What the strength grade's leave-one-category-out
    removes (``repro.diagnostics.strength``); ``data_dir`` is not read (the labels ship with the
    package)."""
    pf = package_model_types()
    rows = [m for m in known_models or () if m.startswith(f"{TYPED_SET}/")]
    out: dict[str, list[str]] = {}
    for value in pf.type_values:
        members = [r for r in rows if pf.types.get(r[len(TYPED_SET) + 1 :]) == value]
        if members:
            out[value] = members
    return out


def architecture_rules(path: Path | None = None) -> NameRules:
    """The rule table ``architecture_families.toml``, checked.

    It holds ``population_types``, and a ``[[family]]`` per family with ``name`` and ``pattern``."""
    path = path or FOLDER / ARCHITECTURE_RULES
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode())
    except FileNotFoundError:
        raise DataError(f"{path}: missing (the declared architecture name rule)") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not valid TOML ({exc})") from None
    families: dict[str, re.Pattern[str]] = {}
    for i, row in enumerate(data.get("family", [])):
        name, pattern = row.get("name"), row.get("pattern")
        if not isinstance(name, str) or not isinstance(pattern, str):
            raise DataError(f"{path}: [[family]] {i + 1}: expected string fields name and pattern")
        if name in families:
            raise DataError(f"{path}: [[family]] {i + 1}: family {name!r} listed twice")
        try:
            families[name] = re.compile(pattern)
        except re.error as exc:
            raise DataError(f"{path}: family {name!r}: pattern {pattern!r}: {exc}") from None
    types = data.get("population_types")
    if not families or not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise DataError(
            f"{path}: expected population_types (a list of model-type names) and at least one "
            "[[family]]"
        )
    return NameRules(families, tuple(types), hashlib.sha256(raw).hexdigest())
