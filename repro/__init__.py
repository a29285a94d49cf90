"""repro: a test-driven reproducibility and regression suite for published claims about
ImageNet models (Gavrikov & Keuper, CVPR 2024; ImageNet-X, Idrissi et al. 2022).

Pipeline, one subpackage per stage:
model zoo (``zoo``) -> datasets (``datasets``) -> probes / benchmarks (``probes``,
``benchmarks``: the torch work) -> scoring (``scoring``: pure NumPy/SciPy) -> measurement
store (``store``, driven by ``runner``) -> analysis / claims (``analysis``, ``claims``) ->
report (``report``). Published reference data is read by ``published``.

Importing ``repro`` has no side effects and does not import torch.
"""

__version__ = "0.1.0"
