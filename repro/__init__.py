"""repro: a test-driven reproducibility and regression suite for published claims about
ImageNet models (Gavrikov & Keuper, CVPR 2024; ImageNet-X, Idrissi et al. 2022).

Pipeline, one subpackage per stage, bottom to top (the layers pyproject.toml's import-linter
contract checks; a package imports only those below it):
``base`` (errors, registry, settings, stats, results, the per-model table, the Study type) ->
model zoo (``zoo``), datasets (``datasets``), published reference data (``published``) ->
scoring (``scoring``: pure NumPy/SciPy) -> probes / benchmarks (``probes``, ``benchmarks``:
the torch work) -> measurement store (``store``) -> the measurement registry
(``measurements``) -> analysis (``analysis``) -> claims (``claims``) -> runner / report
(``runner``, ``report``) -> the studies (``studies``: one folder per published study) ->
command line (``cli``). The core names no study: it receives ``Study`` objects and reaches a
study's code through the lazy references of its study.toml.

Importing ``repro`` has no side effects and does not import torch.
"""

__version__ = "0.1.0"
