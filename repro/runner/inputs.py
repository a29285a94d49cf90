"""Runner: what a job depends on besides its measurement version, recorded with every record.

Recorded as ``provenance["inputs"]``, so that a job that failed is run again once one of them has
changed, and kept (not retried in a loop) while none has.

Four digests, each known without loading the model (None: not known now, e.g. the checkpoint is
missing or a custom environment cannot say):

- ``code``: every file of the ``repro`` package (its modules and its data files such as
  ``repro/zoo/models.toml``): a fix of the code or of a built-in model entry;
- ``model``: the model's zoo entry as resolved now (``repro.zoo.get_spec``: source, reference,
  ``arch``, ``remap``, normalization), so an ``arch`` or ``remap`` added to ``repro.toml`` counts;
- ``weights``: the identity its weights would load with (``repro.zoo.weights_identity``): a
  checkpoint that is there now, or another file;
- ``data``: the dataset's identity (fingerprint, item count, mini flag, subset): a dataset root
  configured now, or other data.

The measurement version (probe and spec) is the record's ``version`` and is compared before
(``repro.runner.jobs.job_state``: another version is re-measured in any state).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from repro.base.result_cache import digest, tree_digest

#: the packages whose files are the code a job ran
CODE_PACKAGES = ("repro",)

#: each input in words, for the line that says why a failed job runs again
WHAT = {
    "code": "the code (the repro package, models.toml included)",
    "model": "the model's entry (arch, remap, source)",
    "weights": "its checkpoint",
    "data": "the dataset",
}


def code_identity() -> str:
    """The digest of the code a job runs with (read once per process)."""
    return tree_digest(CODE_PACKAGES)


def identity_of(value: Any) -> str | None:
    """A digest of ``value`` (a spec, a data identity), None for None."""
    return None if value is None else digest(value)


def changed(then: Mapping[str, Any] | None, now: Mapping[str, Any]) -> list[str]:
    """What changed since a failed record was written, in words.

    Empty: nothing did; the job is kept. A record written before inputs were recorded is reported
    so, and run again once.
    """
    if not isinstance(then, Mapping):
        return ["its record does not say what it ran with (written by an older version)"]
    out = []
    for key, words in WHAT.items():
        before, after = then.get(key), now.get(key)
        if before == after:
            continue
        if before is None:
            out.append(f"{words} is available now (it was not)")
        elif after is None:
            out.append(f"{words} is not available now")
        else:
            out.append(f"{words} changed")
    return out
