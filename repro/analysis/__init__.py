"""Analysis: the generic statistics on a per-model table, and ``StatisticResult``.

An analysis definition as data (population and groups, categories, biases), Spearman correlations
with intervals, the benchmark correlation matrix, and ``StatisticResult``, what every claim
statistic returns. A study's own statistics live in its study folder.
"""
