"""Statistics for comparing systems: paired tests, CIs, effect sizes, corrections (stats.md).

Per-query scores are mappings ``query_id -> float``, aligned explicitly (:func:`align`). The
default test is the seeded paired randomization test; every test returns a :class:`TestResult`
(JSON-ready, never NaN). :func:`compare` compares N systems on several metrics with a
multiple-comparison correction; :func:`corpus_test` handles corpus-level metrics (micro F1) by
resampling documents. Splits and stratified sampling live in :mod:`ragmeter.stats.datasets`.

>>> from ragmeter import stats
>>> r = stats.randomization_test({"q1": .8, "q2": .6, "q3": .9}, {"q1": .7, "q2": .5, "q3": .6})
>>> r.p_value, r.method
(0.25, 'exact')
"""

from __future__ import annotations

from ragmeter.stats.bootstrap import CI_METHODS, bootstrap_ci, bootstrap_test
from ragmeter.stats.compare import (
    ComparisonReport,
    PairComparison,
    compare,
    compare_systems,
    scores_from_results,
    ultrarag_table,
)
from ragmeter.stats.corpus import AGGREGATES, corpus_test, micro_f1, micro_precision, micro_recall
from ragmeter.stats.corrections import (
    CORRECTIONS,
    Adjusted,
    adjust,
    benjamini_hochberg,
    benjamini_yekutieli,
    bonferroni,
    holm,
)
from ragmeter.stats.dispatch import TESTS, paired_test
from ragmeter.stats.effect import EffectSizes, effect_sizes
from ragmeter.stats.paired import (
    AlignmentReport,
    MissingQueriesError,
    Paired,
    align,
    align_positional,
)
from ragmeter.stats.randomization import randomization_test
from ragmeter.stats.result import ConfidenceInterval, TestResult
from ragmeter.stats.ttest import ttest
from ragmeter.stats.wilcoxon import wilcoxon

__all__ = [
    "AGGREGATES",
    "CI_METHODS",
    "CORRECTIONS",
    "TESTS",
    "Adjusted",
    "AlignmentReport",
    "ComparisonReport",
    "ConfidenceInterval",
    "EffectSizes",
    "MissingQueriesError",
    "PairComparison",
    "Paired",
    "TestResult",
    "adjust",
    "align",
    "align_positional",
    "benjamini_hochberg",
    "benjamini_yekutieli",
    "bonferroni",
    "bootstrap_ci",
    "bootstrap_test",
    "compare",
    "compare_systems",
    "corpus_test",
    "effect_sizes",
    "holm",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "paired_test",
    "randomization_test",
    "scores_from_results",
    "ttest",
    "ultrarag_table",
    "wilcoxon",
]
