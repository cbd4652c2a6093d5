"""How a judge-prompt candidate is evaluated: the judge, with the candidate's texts as its
``instructions``/``templates`` params, scores each labelled item (a ``ScorerTarget`` run,
stored like any calibration run), and its scores are set against the human labels.

A row's score is the objective statistic (κ, MCC, QWK, Spearman, ...) of the whole batch,
the same on every row of it: GEPA sums a minibatch's row scores to accept or reject a
child and averages the validation rows to rank candidates, so both compare the statistic
itself, not a per-item proxy. On a batch where the statistic is undefined (every label in
one class, fewer than two judged items) the row score falls back to the item's own
agreement (binary: verdict equals label; ordinal/numeric: 1 − |score − label| / range),
which still ranks candidates and is said so in the feedback.

A pairwise judge (``kind: pairwise``) sees every pair in both orders (``PairTarget``, one
stored result per pair); a verdict that flips with the order is position bias and counts as
a tie, as in ``assay calibrate``, so the objective (``agreement``) rewards a prompt that
removes the bias, and the bias rate is re-measured on the held-out split.

The reflective feedback of an item is its disagreement: the human label, the judge's score
and verdict, and the judge's reason, so the reflection model sees *why* the judge erred.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.calibration.data import pair_outputs
from assay.models.base import Model
from assay.optimize.row_scores import RowScore
from assay.optimize.session import Session
from assay.optimize.splits import Example
from assay.scoring.registry import ScorerConfig, create_scorer, get_scorer_type
from assay.scoring.scorer import Scorer
from assay.targets.base import Target, TargetOutput
from assay.targets.scorer import ScorerTarget, ScorerTargetError
from assay.types import Item, ItemResult, ScoreResult, TargetSpec

LETTER = {1.0: "A", 0.0: "B", 0.5: "tie"}
NUMBER = {"A": 1.0, "B": 0.0, "tie": 0.5}

MINIBATCH_RESAMPLES = 100
"""Bootstrap resamples when only the point value is needed (the smallest the statistics
room accepts; the point does not depend on them)."""


def judge_config_for(base: ScorerConfig, candidate: Mapping[str, str]) -> ScorerConfig:
    """``base`` with the candidate's texts as its overrides: ``instructions`` → the
    ``instructions`` param, any other component → ``templates[component]``. A text equal
    to the scorer's built-in one is no override (the key is dropped), so a judge whose
    texts are the defaults has the fingerprint of the plain scorer and a certificate for
    it is found for ``{"type": ...}`` too."""
    defaults = get_scorer_type(base.type).prompts
    params = dict(base.params)
    templates = dict(params.get("templates") or {})
    for name, text in candidate.items():
        given = None if text == defaults.get(name) else text
        if name == "instructions":
            params["instructions"] = given
        else:
            templates[name] = given
    params["instructions"] = params.get("instructions")
    if params["instructions"] is None:
        del params["instructions"]
    kept = {name: text for name, text in templates.items() if text is not None}
    params.pop("templates", None)
    if kept:
        params["templates"] = kept
    return base.model_copy(update={"params": params})


def build_judge(
    base: ScorerConfig, candidate: Mapping[str, str], judge_model: Model | None
) -> Scorer:
    """The judge scorer for ``candidate`` (judged by ``judge_model`` when given)."""
    scorer = create_scorer(judge_config_for(base, candidate))
    return scorer.with_judge_model(judge_model) if judge_model is not None else scorer


def pair_verdict(score: float, *, swapped: bool) -> str:
    """A pairwise score as a verdict on the pair in its original order: above 0.5 prefers
    the output shown first (after the swap: the original second, ``B``)."""
    if score == 0.5:
        return "tie"
    return "A" if (score > 0.5) != swapped else "B"


class PairTarget:
    """Runs a pairwise judge on each pair in both orders; the output holds both scores and
    the verdicts mapped back to the original order (one stored result per pair, so splits,
    minibatches and stored evaluations stay per item)."""

    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer
        self._inner = ScorerTarget(scorer)

    @property
    def spec(self) -> TargetSpec:
        return self._inner.spec

    async def _judge(self, item: Item, shown_first: Any, shown_second: Any) -> ScoreResult:
        return await self.scorer.run(
            input=item.input,
            output=[shown_first, shown_second],
            ground_truth=item.expected_output,
            context=item.context,
            metadata=dict(item.metadata),
        )

    async def execute(self, item: Item) -> TargetOutput:
        first, second = pair_outputs(item)
        forward = await self._judge(item, first, second)
        backward = await self._judge(item, second, first)
        for result in (forward, backward):
            if result.status != "ready" or result.score is None:
                message = result.error.message if result.error else f"status {result.status}"
                raise ScorerTargetError(message)
        verdicts = (
            pair_verdict(float(forward.score or 0.0), swapped=False),
            pair_verdict(float(backward.score or 0.0), swapped=True),
        )
        final = verdicts[0] if verdicts[0] == verdicts[1] else "tie"
        return TargetOutput(
            {
                "score": NUMBER[final],
                "verdicts": list(verdicts),
                "reason": forward.reason,
                "swapped_reason": backward.reason,
            }
        )


@dataclass(frozen=True)
class JudgeRow(RowScore):
    """A row of a judge evaluation: the batch's statistic as its score, the item's own
    agreement, and the disagreement feedback."""

    agreement: float = 0.0
    judge_score: float | None = None
    pair: tuple[str, str] | None = None
    """A pairwise judge's verdicts (original order, swapped order mapped back)."""
    label: float = 0.0
    raw_label: Any = None
    judged: Any = None
    note: str = ""

    def feedback(self, expected: Any) -> str:
        return self.note

    def trajectory(self, item_input: Any, expected: Any) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "input": self.judged,
            "output": self.output,
            "expected_output": f"human label {self.raw_label!r} (= {self.label:g})",
            "score": self.score,
            "agreement": self.agreement,
            "error": self.error,
            "scorers": {},
            "feedback": self.note,
        }


@dataclass
class JudgeEvaluator:
    """The ``session.Evaluator`` of ``assay optimize-judge``.

    ``labels`` maps an item id to its human label on the judge's scale; ``raw_labels`` to
    the label as written."""

    base: ScorerConfig
    judge_model: Model | None
    kind: str
    threshold: float | None
    objective: str
    labels: dict[str, float]
    raw_labels: dict[str, Any]
    score_range: tuple[float, float]
    last_statistic: dict[str, float | None] = field(default_factory=dict)

    async def run(
        self, session: Session, items: list[Item], candidate: dict[str, str], split: str
    ) -> tuple[str, list[ItemResult], float]:
        judge = build_judge(self.base, candidate, self.judge_model)
        target: Target = PairTarget(judge) if self.kind == "pairwise" else ScorerTarget(judge)
        return await session.run_items(items, target, [], candidate, split)

    def rows(self, results: Mapping[str, ItemResult], examples: list[Example]) -> list[RowScore]:
        scores = {e.item.id: judge_score(results[e.item.id]) for e in examples}
        pairs = {e.item.id: pair_of(results[e.item.id]) for e in examples}
        judged = [e.item.id for e in examples if scores[e.item.id] is not None]
        statistic = self.statistic(
            [self.labels[i] for i in judged],
            [pairs[i] or float(scores[i] or 0.0) for i in judged],
        )
        rows: list[RowScore] = []
        for example in examples:
            item = example.item
            result = results[item.id]
            score = scores[item.id]
            agreement = self.agreement(self.labels[item.id], score)
            value = statistic if statistic is not None else agreement
            rows.append(
                JudgeRow(
                    item_id=item.id,
                    score=value,
                    objectives={self.objective: value, "agreement": agreement},
                    output=result.output,
                    error=_error(result),
                    agreement=agreement,
                    judge_score=score,
                    pair=pairs[item.id],
                    label=self.labels[item.id],
                    raw_label=self.raw_labels[item.id],
                    judged=_judged(item),
                    note=self.note(item.id, result, score, agreement, statistic, pairs[item.id]),
                )
            )
        return rows

    # ------------------------------------------------------------------ measures
    def statistic_inputs(
        self, labels: list[float], scores: list[Any]
    ) -> tuple[list[Any], list[Any]]:
        """Labels and scores as the statistics room takes them: numbers, or for pairwise
        the human verdict letters and each pair's (original, swapped) verdicts."""
        if self.kind == "pairwise":
            return [LETTER[label] for label in labels], [tuple(s) for s in scores]
        return labels, scores

    def statistic(self, labels: list[float], scores: list[Any]) -> float | None:
        """The objective's point value on these items, or ``None`` where it is undefined."""
        from assay.calibration.statistics import calibration_statistics

        if len(labels) < 2:
            return None
        stat_labels, stat_scores = self.statistic_inputs(labels, scores)
        result = calibration_statistics(
            self.kind,  # type: ignore[arg-type]
            stat_labels,
            stat_scores,
            threshold=self.threshold,
            n_resamples=MINIBATCH_RESAMPLES,
            seed=0,
        )
        estimate = result.get(self.objective)
        value = estimate.value if estimate is not None else result.points.get(self.objective)
        return float(value) if value is not None and math.isfinite(value) else None

    def verdict(self, score: float) -> bool:
        assert self.threshold is not None
        return score >= self.threshold

    def agreement(self, label: float, score: float | None) -> float:
        """1 when the judge agrees with the human (binary: same verdict; ordinal/numeric:
        same value), falling linearly to 0 over the judge's range; 0 when it failed."""
        if score is None:
            return 0.0
        if self.kind == "pairwise":
            return 1.0 if score == label else 0.0
        if self.kind == "binary":
            return 1.0 if self.verdict(score) == (label >= 0.5) else 0.0
        low, high = self.score_range
        width = high - low if math.isfinite(high - low) and high > low else 1.0
        return max(0.0, 1.0 - abs(score - label) / width)

    def note(
        self,
        item_id: str,
        result: ItemResult,
        score: float | None,
        agreement: float,
        statistic: float | None,
        pair: tuple[str, str] | None = None,
    ) -> str:
        raw = self.raw_labels[item_id]
        lines = [f"Human label: {raw!r} (= {self.labels[item_id]:g} on the judge's scale)"]
        if score is None:
            lines.append(f"The judge gave no score: {_error(result) or 'no score'}")
        elif pair is not None:
            human = LETTER[self.labels[item_id]]
            if pair[0] != pair[1]:
                lines.append(
                    f"POSITION BIAS: the judge preferred {pair[0]} in the original order but "
                    f"{pair[1]} with the two responses swapped, so its verdict is a tie."
                )
            verdict = pair[0] if pair[0] == pair[1] else "tie"
            lines.append(
                f"Judge verdict: {verdict}; the human preferred {human}."
                + ("" if agreement == 1.0 else " The judge DISAGREES with the human.")
            )
        elif self.kind == "binary":
            said = "positive" if self.verdict(score) else "negative"
            human = "positive" if self.labels[item_id] >= 0.5 else "negative"
            lines.append(
                f"Judge score: {score:g} → {said} verdict (threshold {self.threshold:g}); "
                f"the human label is {human}."
            )
            lines.append(
                "The judge agrees with the human."
                if agreement == 1.0
                else "The judge DISAGREES with the human: its instructions led it astray here."
            )
        else:
            lines.append(f"Judge score: {score:g}; agreement {agreement:.2f} (1 = same value).")
            label = self.labels[item_id]
            if score != label:  # say which way: a reflection model fixes leniency or severity
                lines.append(
                    f"The judge DISAGREES with the human: its score is "
                    f"{'higher' if score > label else 'lower'} than the label by "
                    f"{abs(score - label):g}."
                )
        reason = _reason(result)
        if reason:
            lines.append(f"Judge's reason: {reason}")
        if statistic is None:
            lines.append(
                f"({self.objective} is undefined on this batch; the item's agreement is its score)"
            )
        else:
            lines.append(f"{self.objective} on this batch: {statistic:.3f}")
        return "\n".join(lines)


def judge_score(result: ItemResult) -> float | None:
    """The judge's score of one item (``None`` when it failed or gave none)."""
    output = result.output if isinstance(result.output, Mapping) else None
    if result.error is not None or output is None:
        return None
    score = output.get("score")
    return float(score) if isinstance(score, int | float) and math.isfinite(score) else None


def pair_of(result: ItemResult) -> tuple[str, str] | None:
    """A pairwise judge's (original, swapped) verdicts of one item, if it gave them."""
    output = result.output if isinstance(result.output, Mapping) else None
    found = output.get("verdicts") if output is not None else None
    if result.error is None and isinstance(found, list) and len(found) == 2:
        return str(found[0]), str(found[1])
    return None


def _reason(result: ItemResult) -> str | None:
    output = result.output if isinstance(result.output, Mapping) else None
    reason = output.get("reason") if output is not None else None
    return str(reason) if reason else None


def _error(result: ItemResult) -> str | None:
    if result.error is not None:
        return f"judge failed: {result.error.kind}: {result.error.message}"
    if judge_score(result) is None:
        return "the judge gave no score"
    return None


def _judged(item: Item) -> dict[str, Any]:
    """What the judge saw of the item (the reflective dataset's ``Inputs``)."""
    shown: dict[str, Any] = {"input": item.input, "output (judged)": item.output}
    if item.context is not None:
        shown["context"] = item.context
    return shown
