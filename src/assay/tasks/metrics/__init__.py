"""Task metrics, aggregations, stderr and built-in result processing (lm-eval 0.4.13 parity).

The pieces, in the order a task uses them:

* ``process_*`` (v0.4) or ``score_*`` + ``reduce_scores`` (v0.5, repeats): per-doc values;
* ``aggregate_metrics`` / ``TASK_AGGREGATIONS``: the task's numbers, with ``stderr_for``;
* ``aggregate_group``: groups over their leaf tasks.

Registries: ``TASK_METRICS`` (group ``assay.task_metrics``), ``TASK_AGGREGATIONS``
(``assay.task_aggregations``), ``REDUCTIONS`` (``assay.task_reductions``).
"""

from assay.tasks.metrics.aggregate import (
    AggregationSpec,
    GroupAggregate,
    aggregate_group,
    aggregate_metrics,
    aggregate_subtasks,
    resolve_aggregation,
)
from assay.tasks.metrics.aggregations import sacreformat
from assay.tasks.metrics.loglikelihood import INVALID_GOLD, LLResults, softmax
from assay.tasks.metrics.process import (
    MetricEntry,
    MetricValues,
    aggregation_for,
    higher_is_better_for,
    process_generate_until,
    process_loglikelihood,
    process_loglikelihood_rolling,
    process_multiple_choice,
    resolve_choice_gold,
)
from assay.tasks.metrics.reductions import REDUCTIONS, Reduction, reduce_scores
from assay.tasks.metrics.registry import (
    OUTPUT_TYPES,
    TASK_AGGREGATIONS,
    TASK_METRICS,
    OutputType,
    TaskAggregation,
    TaskMetric,
    default_metrics,
    register_task_aggregation,
    register_task_metric,
)
from assay.tasks.metrics.scoring import default_reductions, score_generation, score_loglikelihood
from assay.tasks.metrics.stderr import (
    bootstrap_replicates,
    bootstrap_stderr,
    mean_stderr,
    pooled_sample_stderr,
    stderr_for,
    unweighted_mean_stderr,
)

__all__ = [
    "INVALID_GOLD",
    "OUTPUT_TYPES",
    "REDUCTIONS",
    "TASK_AGGREGATIONS",
    "TASK_METRICS",
    "AggregationSpec",
    "GroupAggregate",
    "LLResults",
    "MetricEntry",
    "MetricValues",
    "OutputType",
    "Reduction",
    "TaskAggregation",
    "TaskMetric",
    "aggregate_group",
    "aggregate_metrics",
    "aggregate_subtasks",
    "aggregation_for",
    "bootstrap_replicates",
    "bootstrap_stderr",
    "default_metrics",
    "default_reductions",
    "higher_is_better_for",
    "mean_stderr",
    "pooled_sample_stderr",
    "process_generate_until",
    "process_loglikelihood",
    "process_loglikelihood_rolling",
    "process_multiple_choice",
    "reduce_scores",
    "register_task_aggregation",
    "register_task_metric",
    "resolve_aggregation",
    "resolve_choice_gold",
    "sacreformat",
    "score_generation",
    "score_loglikelihood",
    "softmax",
    "stderr_for",
    "unweighted_mean_stderr",
]
