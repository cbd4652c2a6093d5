"""lm-evaluation-harness-style benchmark tasks: configs, prompts, filters, metrics, scorers.

Tasks are the ``tasks`` extra (sacrebleu, rouge-score, scikit-learn for their metrics):
importing this room without it raises the one-line ``MissingExtraError`` at once, before
a task is loaded or a model called, instead of an ImportError from a metric mid-run.
"""

from __future__ import annotations

from assay.extras import require_extra

require_extra("tasks", "task support")
