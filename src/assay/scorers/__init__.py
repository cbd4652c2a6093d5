"""Built-in scorers. Importing this package registers every built-in scorer type."""

from __future__ import annotations

from assay.scorers import (
    checks,
    completeness,
    content_similarity,
    keyword_coverage,
    textual_difference,
    tone,
    tool_call_accuracy_code,
    trajectory_accuracy_code,
    trajectory_code,
)

__all__ = [
    "checks",
    "completeness",
    "content_similarity",
    "keyword_coverage",
    "textual_difference",
    "tone",
    "tool_call_accuracy_code",
    "trajectory_accuracy_code",
    "trajectory_code",
]
