"""Model zoo: tiny randomly initialised CNNs (1000 logits) for tests and mini runs.

Not models of any study: their numbers are not evidence. Cheap at 224 px (about 3 MFLOPs
per image), so a mini sweep runs on two CPU cores in seconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from repro.zoo.specs import ModelSpec


class TinyCNN(nn.Module):
    """conv5x5/4 -> ReLU -> conv3x3/2 -> ReLU -> global average pool -> linear(1000)."""

    def __init__(self, width: int = 8, num_classes: int = 1000) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, kernel_size=5, stride=4, padding=2),
            nn.ReLU(inplace=True),
            nn.Conv2d(width, 2 * width, kernel_size=3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.fc = nn.Linear(2 * width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


def seeded_tiny_cnn(width: int, seed: int) -> TinyCNN:
    """The same weights for the same (width, seed) on every machine.

    The global RNG is not touched."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyCNN(width)


def tiny_for(spec: ModelSpec) -> TinyCNN:
    """The network of a seeded random test model (``arch = "tiny:WIDTH"``, default width 8)."""
    _, _, width = spec.arch.partition(":")
    return seeded_tiny_cnn(int(width or 8), spec.seed or 0)
