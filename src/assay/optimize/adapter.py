"""``AssayAdapter``: GEPA's adapter over assay's runner and scorers.

It subclasses ``gepa.GEPAAdapter`` on purpose: GEPA 0.1.4 reads ``adapter.propose_new_texts``
unconditionally, and a duck-typed adapter without it fails inside the proposer, where the
error is only logged, so no candidate is ever proposed and the whole budget burns silently.

* ``evaluate``/``batch_evaluate``: one stored run per (candidate, batch), executed
  concurrently by the runner; several pairs at once run side by side. Scores, objectives
  and trajectories come from ``row_scores`` (weighted, normalized, direction-aware; a
  failed target or scorer is a low score with the reason in the trajectory).
* ``make_reflective_dataset``: the rows below ``feedback_threshold`` (all rows scoring
  well: the first three, so the reflection model still sees the task), each with the
  inputs, the generated and expected outputs and the feedback "Scorer diagnostics → …".
* ``propose_new_texts``: GEPA's own instruction-proposal prompt and answer parsing, but the
  call goes through assay's model stack and is stored with its answer (and cost); several
  components are reflected on concurrently.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from gepa.core.adapter import EvaluationBatch, GEPAAdapter
from gepa.strategies.instruction_proposal import InstructionProposalSignature

from assay.optimize.events import Proposed, ReflectionFailed
from assay.optimize.session import Evaluation, Session
from assay.optimize.splits import Example

Trajectory = dict[str, Any]
FALLBACK_ROWS = 3
"""Rows shown to the reflection model when none scored below the threshold."""


def text_diff(before: str, after: str, name: str) -> str:
    """A unified diff of a component's text (what the terminal shows for a new candidate)."""
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), f"{name} (parent)", f"{name} (child)", lineterm=""
    )
    return "\n".join(lines)


class AssayAdapter(GEPAAdapter[Example, Trajectory, Any]):
    """See the module docstring."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.propose_new_texts = self._propose

    # ------------------------------------------------------------------ evaluation
    def evaluate(
        self, batch: list[Example], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[Trajectory, Any]:
        [result] = self.batch_evaluate([(candidate, batch)], capture_traces=capture_traces)
        return result

    def batch_evaluate(
        self,
        items: list[tuple[dict[str, str], list[Example]]],
        capture_traces: bool = True,
    ) -> list[EvaluationBatch[Trajectory, Any]]:
        session = self.session

        async def all_pairs() -> list[Evaluation]:
            return list(
                await asyncio.gather(
                    *(session.evaluate(list(batch), dict(cand)) for cand, batch in items)
                )
            )

        evaluations = session.run(all_pairs())
        out: list[EvaluationBatch[Trajectory, Any]] = []
        for (_, batch), evaluation in zip(items, evaluations, strict=True):
            session.emit(evaluation.event)
            rows = evaluation.rows
            trajectories = (
                [
                    row.trajectory(example.item.input, example.item.expected_output)
                    for row, example in zip(rows, batch, strict=True)
                ]
                if capture_traces
                else None
            )
            out.append(
                EvaluationBatch(
                    outputs=[row.output for row in rows],
                    scores=[row.score for row in rows],
                    trajectories=trajectories,
                    objective_scores=[dict(row.objectives) for row in rows],
                )
            )
        return out

    # ------------------------------------------------------------------ reflection
    def make_reflective_dataset(
        self,
        candidate: dict[str, str],
        eval_batch: EvaluationBatch[Trajectory, Any],
        components_to_update: list[str],
    ) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        trajectories = eval_batch.trajectories or []
        threshold = self.session.config.feedback_threshold
        # a judge row's score is its batch's statistic; its own agreement says if it erred
        chosen = [
            t for t in trajectories if t["agreement" if "agreement" in t else "score"] < threshold
        ]
        if not chosen:
            chosen = trajectories[:FALLBACK_ROWS]
        records = [
            {
                "Inputs": t["input"],
                "Generated Outputs": t["output"] if t["error"] is None else f"(error) {t['error']}",
                "Expected Output": t["expected_output"],
                "Feedback": t["feedback"],
            }
            for t in chosen
        ]
        return {component: records for component in components_to_update}

    def _propose(
        self,
        candidate: dict[str, str],
        reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
        components_to_update: list[str],
    ) -> dict[str, str]:
        session = self.session
        prompts: dict[str, str] = {}
        for component in components_to_update:
            rendered = InstructionProposalSignature.prompt_renderer(
                {
                    "current_instruction_doc": candidate[component],
                    "dataset_with_feedback": list(reflective_dataset.get(component, [])),
                }
            )
            if not isinstance(rendered, str):  # only images make it a message list
                raise TypeError("reflection prompt with images is not supported")
            prompts[component] = rendered

        async def ask_all() -> list[str | BaseException]:
            return list(
                await asyncio.gather(
                    *(session.reflect(c, p) for c, p in prompts.items()), return_exceptions=True
                )
            )

        answers = session.run(ask_all())
        new_texts: dict[str, str] = {}
        for component, answer in zip(prompts, answers, strict=True):
            if isinstance(answer, BaseException):
                session.emit(
                    ReflectionFailed(
                        optimization_id=session.id,
                        iteration=session.iteration,
                        component=component,
                        error=f"{type(answer).__name__}: {answer}",
                    )
                )
                raise answer
            text = InstructionProposalSignature.output_extractor(answer)["new_instruction"]
            if not text.strip():
                message = "the reflection model's answer held no new text"
                session.emit(
                    ReflectionFailed(
                        optimization_id=session.id,
                        iteration=session.iteration,
                        component=component,
                        error=message,
                    )
                )
                raise ValueError(f"component {component!r}: {message}")
            new_texts[component] = text
            session.emit(
                Proposed(
                    optimization_id=session.id,
                    iteration=session.iteration,
                    component=component,
                    diff=text_diff(candidate[component], text, component),
                )
            )
        return new_texts
