"""Measurements, stimuli: what a measurement shows the model of each image, and what it costs.

What a measurement shows the model of each image, as data, and what that costs (forward and
backward passes per image). No torch or NumPy at import: the cost model
(``python -m repro plan``) and autotune read the passes from here without running anything.

A stimulus set names the throughput-harness stage whose rate it runs at (``stage``), the torch
function that makes the stimuli of a batch (``make``, a lazy ``"module:function"``; none: the
images as they are, one pass each), the names of the conditions it shows each image as, in order
(``conditions``, a lazy function or the names themselves), and what else each image costs: the
conditions after the first synthesised from noise (``noise``), an attack of ``kwargs[attack_steps]``
steps, one forward and one backward pass each (``attack_steps``), or one condition per part of a
multi-part dataset (``by_part``: ImageNet-C's corruption/severity folders).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from repro.base.registry import resolve_lazy


@dataclass(frozen=True)
class Passes:
    """Model passes per dataset image, and the stimuli synthesised from noise among them."""

    forward: int
    backward: int = 0
    synthesized: int = 0


@dataclass(frozen=True)
class Stimuli:
    stage: str  # the throughput harness's stage whose passes per second it runs at
    make: str = (
        ""  # lazy "module:function" (see repro.measurements.loop); "": the images as they are
    )
    conditions: (
        str | tuple[str, ...]
    ) = ()  # lazy "module:function" -> names, or the names; (): one, the image
    noise: bool = False  # every condition after the first is synthesised from noise
    attack_steps: str = ""  # the keyword argument that counts the attack's steps
    by_part: bool = False  # the parts of a multi-part dataset are the conditions

    def names(self) -> tuple[str, ...]:
        """The conditions each image is shown as, in order (empty: once, as it is)."""
        if isinstance(self.conditions, str):
            return tuple(resolve_lazy(self.conditions)())  # type: ignore[operator]
        return tuple(self.conditions)

    @property
    def derived(self) -> bool:
        """Whether the stimuli are made from each image alone before the model sees it.

        True for the spectral filters and the noise synthesis: their cost per batch is the
        maker's plus one pass per condition."""
        return bool(self.make) and not self.attack_steps

    def passes(self, kwargs: Mapping[str, Any]) -> Passes:
        shown = len(self.names()) if self.conditions else 1
        steps = int(kwargs[self.attack_steps]) if self.attack_steps else 0
        return Passes(shown + steps, steps, shown - 1 if self.noise else 0)


_P, _B, _S = "repro.probes", "repro.benchmarks", "repro.scoring"

#: each image once, as it is (classification, the pre-made critical-band stimuli)
IMAGES = Stimuli("classify")
#: each image of each part of a multi-part dataset once, its condition the part's name
PARTS = Stimuli("classify", by_part=True)
#: the cue-conflict images as they are (timed apart by the throughput harness)
CUE_CONFLICT = Stimuli("shape_bias")
#: clean, then 11 low-pass and 11 high-pass filtered versions
SPECTRAL = Stimuli(
    "spectral", make=f"{_P}.spectral:maker", conditions=f"{_S}.spectral:stimulus_conditions"
)
#: SD 0 once, then 7 bands x 4 noise SDs synthesised from noise keyed by (seed, image, condition)
CRITICAL_BAND = Stimuli(
    "critical_band",
    make=f"{_P}.critical_band:maker",
    conditions=f"{_S}.critical_band:condition_names",
    noise=True,
)
#: one named critical-band condition per batch, the batch's part (an image's own condition, e.g. its
#: CBMSplit file's: ``repro.measurements.loop.run_matched`` regroups the images by it)
CRITICAL_BAND_ONE = Stimuli("critical_band", make=f"{_P}.critical_band:one_condition_maker")
#: the clean image, then the L-inf PGD adversarial from a random start (``steps`` attack steps)
PGD = Stimuli(
    "pgd", make=f"{_B}.pgd:maker", conditions=("clean", "adversarial"), attack_steps="steps"
)
