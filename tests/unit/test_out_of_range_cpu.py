"""The compiled scan for out-of-range pixels (repro.probes.out_of_range_cpu) lists exactly the
positions torch's comparisons give, in the same order, on every kind of value; and the
synthesis's out-of-range step reads and writes the same pixels through it as through
three-index gathers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.probes import noise as nz
from repro.probes import out_of_range_cpu as oor

pytestmark = pytest.mark.unit

SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1e-45,
    1.0000001,
    0.99999994,
    float("nan"),
    -float("nan"),
    float("inf"),
    -float("inf"),
]


def _torch_positions(x: torch.Tensor) -> torch.Tensor:
    return ((x < 0) | (x > 1)).nonzero().flatten()


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 128, 1000, 16 * 224 * 224])
def test_positions_are_torchs_at_every_length_and_block_boundary(n):
    rng = np.random.default_rng(n)
    x = torch.from_numpy((rng.uniform(0.3, 0.6, n) + rng.normal(0, 0.16, n)).astype(np.float32))
    if n >= len(SPECIAL):
        x[: len(SPECIAL)] = torch.tensor(SPECIAL)
        x[-1] = -0.5  # the last value of the last (partial) block
    got = oor.indices(x)
    assert got.dtype == torch.int64 and torch.equal(got, _torch_positions(x))
    if n >= 1000:
        assert 0 < got.numel() < n  # both kinds of block were exercised


def test_special_values_nan_and_signed_zero_are_in_range():
    x = torch.tensor(SPECIAL, dtype=torch.float32)
    # out: -1e-45 (below 0), 1.0000001 (above 1), +inf, -inf; NaN, -0.0, 0, 1 are in range
    assert oor.indices(x).tolist() == [3, 4, 8, 9]


def test_other_tensors_take_torchs_comparisons():
    x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.float32)
    assert oor.indices(x.t().contiguous().view(-1)).tolist() == [1, 2]
    assert oor.indices(x.t().reshape(-1)[::1].double()).tolist() == [1, 2]  # float64: torch
    strided = torch.tensor([0.5, 9.0, -1.0, 9.0], dtype=torch.float32)[::2]
    assert not strided.is_contiguous() and oor.indices(strided).tolist() == [1]
    with pytest.raises(ValueError, match="1-D"):
        oor.indices(x)


def test_fix_chunk_on_a_non_contiguous_result_equals_the_contiguous_one():
    """``_fix_chunk`` writes through a flat view when the result is contiguous and through three
    indices when it is not (an ``out`` buffer may be a view): the same pixels either way."""
    g = torch.Generator().manual_seed(0)
    image = torch.rand(3, 20, 24, generator=g) * 0.9 + 0.05
    recon = torch.randn(3, 20, 24, generator=g)
    scale = torch.tensor([0.16, 0.12, 0.02]).view(-1, 1, 1)
    flat = torch.addcmul(image, recon, scale)
    strided = torch.empty(3, 24, 20).transpose(1, 2)
    strided.copy_(flat)
    assert not strided.is_contiguous()
    nz._fix_chunk(flat, image, recon, scale, 0.16, None, 0, 10)
    nz._fix_chunk(strided, image, recon, scale, 0.16, None, 0, 10)
    assert torch.equal(flat, strided)
    assert float(flat.min()) >= 0 and float(flat.max()) <= 1
    moved = (flat != torch.addcmul(image, recon, scale)).sum()
    assert int(moved) > 10  # the rule really moved pixels
