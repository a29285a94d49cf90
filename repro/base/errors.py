"""Error types shared by every pipeline stage.

Every error a user can cause (bad data, bad config, bad checkpoint) is a ``ReproError``
whose message names the file, the field and what was expected. The CLI prints the message
on one line and exits with status 2 instead of showing a traceback.
"""

from __future__ import annotations


class ReproError(Exception):
    """Base class for errors caused by input the user controls."""


class DataError(ReproError):
    """A data file or folder is missing, corrupt, or not in the expected layout."""


class ConfigError(ReproError):
    """A setting (CLI flag, environment variable, repro.toml) is invalid."""


class CheckpointError(ReproError):
    """Model weights are missing, truncated, of the wrong hash, or have wrong keys."""


class UnknownNameError(ReproError, KeyError):
    """A name is not in a registry; the message suggests close matches."""

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0]) if self.args else ""
