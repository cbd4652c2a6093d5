"""The built-in task metrics and aggregations (lm-eval 0.4.13's registry, its v0.5 additions,
ROUGE and the diversity metrics).

Imported by ``TASK_METRICS``/``TASK_AGGREGATIONS`` on their first lookup. Directions follow
0.4.13 (``ter`` is lower-is-better there; main still says higher, a bug). Deliberate
differences from lm-eval, each because lm-eval's choice cannot give a number:

* ``acc_all`` aggregates with the ``acc_all`` aggregation (lm-eval registers ``mean``,
  which cannot average its (prediction, doc) items);
* ``likelihood`` keeps lm-eval's ``mean`` default, which needs a custom aggregation for its
  (gold, lls) items; the mean raises a clear error if it is not given one.
"""

from __future__ import annotations

from typing import Any

from assay.tasks.metrics import aggregations as agg
from assay.tasks.metrics import diversity, generation
from assay.tasks.metrics import loglikelihood as ll
from assay.tasks.metrics.registry import (
    TASK_AGGREGATIONS,
    TASK_METRICS,
    OutputType,
    TaskAggregation,
    TaskMetric,
)


def _passthrough(references: Any, predictions: Any) -> Any:
    """The per-doc item is produced by the built-in result processing."""
    return predictions


_AGGREGATIONS = (
    TaskAggregation("bypass", agg.bypass, "the placeholder 999 (generate-and-log tasks)"),
    TaskAggregation("nanmean", agg.nanmean, "mean ignoring NaN", bootstrap=True),
    TaskAggregation("mean", agg.mean, "arithmetic mean"),
    TaskAggregation("median", agg.median, "upper median (sorted middle element)", bootstrap=True),
    TaskAggregation("perplexity", agg.perplexity, "exp(-mean(ll)) over docs", bootstrap=True),
    TaskAggregation("weighted_perplexity", agg.weighted_perplexity, "exp(-Σll / Σweight)"),
    TaskAggregation("bits_per_byte", agg.bits_per_byte, "-Σll / Σbytes / ln 2"),
    TaskAggregation("f1", agg.f1, "binary F1 (scikit-learn)", bootstrap=True),
    TaskAggregation(
        "matthews_corrcoef", agg.matthews_corrcoef, "Matthews correlation", bootstrap=True
    ),
    TaskAggregation("bleu", agg.bleu, "sacrebleu corpus BLEU", bootstrap=True),
    TaskAggregation("chrf", agg.chrf, "sacrebleu corpus chrF", bootstrap=True),
    TaskAggregation("chrf++", agg.chrf_plus_plus, "sacrebleu corpus chrF++", bootstrap=True),
    TaskAggregation("ter", agg.ter, "sacrebleu corpus TER", bootstrap=True),
    TaskAggregation("brier_score", agg.brier_score, "mean Brier score over (gold, probs)"),
    TaskAggregation("acc_all", agg.acc_all, "MultiRC all-answers-correct accuracy"),
)

LL: tuple[OutputType, ...] = ("loglikelihood", "multiple_choice")
MC: tuple[OutputType, ...] = ("multiple_choice",)
GEN: tuple[OutputType, ...] = ("generate_until",)
ROLLING: tuple[OutputType, ...] = ("loglikelihood_rolling",)
ALL: tuple[OutputType, ...] = ("loglikelihood", "multiple_choice", "generate_until")


def _m(
    name: str,
    fn: Any,
    aggregation: str,
    higher: bool,
    types: tuple[OutputType, ...],
    description: str,
    reduction: str | None = "first",
) -> TaskMetric:
    return TaskMetric(name, fn, aggregation, higher, types, description, reduction)


_METRICS = (
    # lm-eval v0.4 (0.4.13)
    _m("acc", ll.acc, "mean", True, LL, "argmax loglikelihood is the gold (greedy for one)"),
    _m("acc_norm", ll.acc_norm, "mean", True, LL, "acc over ll ÷ character length"),
    _m("acc_bytes", ll.acc_bytes, "mean", True, LL, "acc over ll ÷ UTF-8 byte length"),
    _m("acc_mutual_info", ll.acc_mutual_info, "mean", True, MC, "acc over ll − unconditional ll"),
    _m("acc_all", _passthrough, "acc_all", True, ("loglikelihood",), "MultiRC all-correct"),
    _m("brier_score", ll.brier_score, "brier_score", False, MC, "Brier score of softmax(lls)"),
    _m("f1", _passthrough, "f1", True, MC, "binary F1 of (gold, argmax) pairs"),
    _m("mcc", _passthrough, "matthews_corrcoef", True, MC, "Matthews corr. of (gold, argmax)"),
    _m("likelihood", _passthrough, "mean", True, MC, "(gold, lls) pairs for a custom aggregation"),
    _m("perplexity", ll.perplexity_item, "perplexity", False, ("loglikelihood",), "exp(-mean ll)"),
    _m("word_perplexity", _passthrough, "weighted_perplexity", False, ROLLING, "per word"),
    _m("byte_perplexity", _passthrough, "weighted_perplexity", False, ROLLING, "per byte"),
    _m("bits_per_byte", _passthrough, "bits_per_byte", False, ROLLING, "bits per byte"),
    _m(
        "exact_match",
        generation.exact_match,
        "mean",
        True,
        GEN,
        "normalised string equality (regexes, case, punctuation, digits)",
        reduction="pass@k",
    ),
    _m("bleu", generation.corpus_item, "bleu", True, GEN, "corpus BLEU (sacrebleu)"),
    _m("chrf", generation.corpus_item, "chrf", True, GEN, "corpus chrF (sacrebleu)"),
    _m("chrf++", generation.corpus_item, "chrf++", True, GEN, "corpus chrF++ (sacrebleu)"),
    _m("ter", generation.corpus_item, "ter", False, GEN, "corpus TER (sacrebleu)"),
    _m("bypass", generation.bypass, "bypass", True, ALL, "no metric (generate and log)"),
    # lm-eval v0.5
    _m("exact_match_mc", ll.exact_match_mc, "mean", True, MC, "the gold is the greedy decode"),
    _m("bpb", ll.bpb, "mean", False, LL, "bits per byte of the gold continuation"),
    _m("logprob", ll.logprob, "mean", True, LL, "loglikelihood of the gold"),
    _m("choice_logprob", ll.choice_logprob, "mean", True, MC, "ll[gold] − logsumexp(lls)"),
    _m("choice_prob_norm", ll.choice_prob_norm, "mean", True, MC, "softmax(ll/bytes)[gold]"),
    _m("choice_logprob_norm", ll.choice_logprob_norm, "mean", True, MC, "log softmax(ll/bytes)"),
    # beyond lm-eval
    _m("rouge", generation.rouge, "mean", True, GEN, "ROUGE-1/2/L F-measure (rouge-score)"),
    _m("distinct_1", diversity.distinct_1, "mean", True, GEN, "distinct unigrams over repeats"),
    _m("distinct_2", diversity.distinct_2, "mean", True, GEN, "distinct bigrams over repeats"),
    _m("distinct_n", diversity.distinct_n, "mean", True, GEN, "distinct n-grams (kwarg n)"),
    _m("unique_share", diversity.unique_share, "mean", True, GEN, "distinct repeats ÷ repeats"),
    _m("self_bleu", diversity.self_bleu, "mean", False, GEN, "mean BLEU of a repeat vs others"),
)

for _aggregation in _AGGREGATIONS:
    TASK_AGGREGATIONS.register(_aggregation)
for _metric in _METRICS:
    TASK_METRICS.register(_metric)
