"""Analysis: the study's statistics on a per-model table (population and groups, categories, Spearman correlations with intervals, the benchmark correlation matrix)."""
