"""repro: a test-driven reproducibility and regression suite for claims about ImageNet models.

The suite tests published claims about ImageNet models, their biases and their generalization. The
studies are data under ``repro/studies/`` (today Gavrikov & Keuper, CVPR 2024; ImageNet-X, Idrissi
et al., ICLR 2023; Subramanian et al., NeurIPS 2023); the core names none of them.

Pipeline, one subpackage per stage, bottom to top (the layers pyproject.toml's import-linter
contract checks; a package imports only those below it):
``base`` (errors, registry, settings, stats, results, the per-model table, the Study type, the
cache rule) -> model zoo (``zoo``), datasets (``datasets``), published reference data
(``published``) -> scoring (``scoring``: pure NumPy/SciPy) -> probes / benchmarks (``probes``,
``benchmarks``: the torch work) -> measurement store (``store``) -> the measurement registry
(``measurements``) -> analysis (``analysis``) -> the claims' verdict (``claims``) -> what is
said about a verdict after the fact (``diagnostics``: replication, power, robustness, strength,
the claims table and JSON) -> placement (``placement``) -> the planner (``planner``: cost,
plans, throughput) -> runner / report (``runner``, ``report``) -> the studies (``studies``: one
folder per published study) -> command line (``cli``) and the pytest plugin. A study's code is
reached through the lazy references of its study.toml.

Importing ``repro`` has no side effects and does not import torch.
"""

__version__ = "0.1.0"
