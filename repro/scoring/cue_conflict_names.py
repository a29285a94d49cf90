"""Scoring stage, shape bias: the shape and texture class of a cue-conflict image's file name.

Parsed from the file name as model-vs-human does (``airplane1-bicycle2.png``: shape ``airplane``,
texture ``bicycle``; human trial names carry a prefix, ``0002_s5n_s01_0_bird_00_bird2-clock3.png``).
Shared by the shape-bias score (``repro.scoring.shape_bias``) and the checks across the rows of a
decisions file (``repro.scoring.decisions_check``).
"""

from __future__ import annotations

import os


def image_stem(imagename: str) -> str:
    """The stem of a cue-conflict image name, as model-vs-human parses it.

    ``0001_s5n_s01_0_bird_00_bird3-clock2.png`` -> ``bird3-clock2``."""
    return os.path.basename(str(imagename)).split("_")[-1].split(".")[0]


def _strip_digits(token: str) -> str:
    return "".join(ch for ch in token if not ch.isdigit())


def texture_class(imagename: str) -> str:
    """Texture class of a cue-conflict image: last ``-`` token without digits and extension.

    ``airplane1-bicycle2.png`` -> ``bicycle``; human trial names with a prefix
    (``0002_s5n_s01_0_bird_00_bird2-clock3.png``) parse the same way.
    """
    return _strip_digits(image_stem(imagename).split("-")[-1])


def shape_class(imagename: str) -> str:
    """Shape class of a cue-conflict image: first ``-`` token without digits.

    ``airplane1-bicycle2.png`` -> ``airplane``."""
    return _strip_digits(image_stem(imagename).split("-")[0])
