"""One evaluated row as GEPA needs it: a score, per-objective scores, and feedback.

GEPA assumes one number per example, higher is better, and sums them on a minibatch to
accept or reject a child. assay scorers have their own ranges and directions, so the row's
score is the weighted mean of the *normalized* scores (0..1, 1 = best end of the range,
lower-is-better scorers flipped) of the scorers that are ``ready`` on that row; a scorer
that errored or could not score the row is left out of the mean (never counted as 0 or 1),
as in ``RunSummary.weighted_score``. A row whose target failed, or where no scorer is
ready, scores 0.0 with the reason in its trajectory: a low score, never an exception that
stops the search.

``objectives`` holds every weighted scorer's normalized value (0.0 when it is not ready),
for GEPA's objective and hybrid fronts, which need every objective on every row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.types import ItemResult, ScorerSpec, range_is_bounded


@dataclass(frozen=True)
class ScorerNote:
    """One scorer's verdict on one row, as the reflection model reads it."""

    label: str
    status: str
    score: float | None
    normalized: float | None
    reason: str | None


@dataclass(frozen=True)
class RowScore:
    """A row's score for GEPA (0..1), its objectives, and what the reflection model sees."""

    item_id: str
    score: float
    objectives: dict[str, float]
    output: Any
    error: str | None = None
    notes: dict[str, ScorerNote] = field(default_factory=dict)

    def feedback(self, expected: Any) -> str:
        """The reflective dataset's Feedback: error, expected output, score, and every
        scorer's score and reason ("Scorer diagnostics → …")."""
        lines: list[str] = []
        if self.error:
            lines.append(f"Error: {self.error}")
        if expected is not None:
            lines.append(f"Expected output: {_text(expected)}")
        lines.append(f"Score: {self.score:.3f} (0 = worst, 1 = best)")
        if self.score < 1.0 and expected is not None and self.error is None:
            lines.append("The generated output does not fully match what is expected.")
        diagnostics = [_describe(note) for note in self.notes.values()]
        if diagnostics:
            lines.append("Scorer diagnostics → " + "; ".join(diagnostics))
        return "\n".join(lines)

    def trajectory(self, item_input: Any, expected: Any) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "input": item_input,
            "output": self.output,
            "expected_output": expected,
            "score": self.score,
            "error": self.error,
            "scorers": {
                key: {
                    "label": n.label,
                    "status": n.status,
                    "score": n.score,
                    "normalized": n.normalized,
                    "reason": n.reason,
                }
                for key, n in self.notes.items()
            },
            "feedback": self.feedback(expected),
        }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _describe(note: ScorerNote) -> str:
    if note.status == "ready" and note.normalized is not None:
        head = f"{note.label}: {note.normalized:.2f}"
    else:
        head = f"{note.label}: {note.status}"
    return f"{head} ({note.reason})" if note.reason else head


def weighted_specs(specs: list[ScorerSpec]) -> list[ScorerSpec]:
    """The scorers that enter the score: weight above 0. Each must have a bounded range
    (there is no best end to normalize an unbounded one against): a ``ValueError`` names
    the scorer otherwise."""
    chosen = [spec for spec in specs if spec.weight > 0]
    for spec in chosen:
        if not range_is_bounded(spec.score_range):
            raise ValueError(
                f"scorers: {spec.id!r} has the unbounded range {spec.score_range}, so its "
                "score cannot be normalized for the optimizer; give it weight 0 (it is still "
                "recorded) or use a bounded scorer"
            )
    if not chosen:
        raise ValueError("scorers: every scorer has weight 0; nothing to optimize")
    return chosen


def score_row(result: ItemResult, specs: list[ScorerSpec]) -> RowScore:
    """The ``RowScore`` of one item result (see the module docstring)."""
    notes: dict[str, ScorerNote] = {}
    objectives: dict[str, float] = {}
    if result.error is not None:
        message = f"target failed: {result.error.kind}: {result.error.message}"
        return RowScore(result.item_id, 0.0, {s.id: 0.0 for s in specs}, None, message, notes)
    total = weight_sum = 0.0
    for spec in specs:
        scored = result.scores.get(spec.id)
        if scored is None:
            notes[spec.id] = ScorerNote(spec.label, "missing", None, None, None)
            objectives[spec.id] = 0.0
            continue
        normalized = None
        reason = scored.reason
        if scored.status == "ready" and scored.score is not None:
            normalized = spec.normalize(scored.score)
            total += spec.weight * normalized
            weight_sum += spec.weight
        elif scored.error is not None:
            reason = scored.error.message
        notes[spec.id] = ScorerNote(spec.label, scored.status, scored.score, normalized, reason)
        objectives[spec.id] = normalized if normalized is not None else 0.0
    error = None if weight_sum > 0 else "no scorer could score this row"
    score = total / weight_sum if weight_sum > 0 else 0.0
    return RowScore(result.item_id, score, objectives, result.output, error, notes)
