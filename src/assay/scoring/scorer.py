"""The scorer pipeline: ``preprocess → analyze → score → reason``.

A ``Scorer`` is an immutable description: each builder method returns a new scorer, and a
scorer holds configuration only. ``run`` builds a fresh ``ScoreResult`` every call, so one
instance can score many items concurrently (unlike designs that keep the last result on
the metric object).

Errors are data: an exception in any step yields ``status="error"`` naming the failed step
and the completed ones; it is never raised to the caller and never becomes a number. The one
exception is a scorer *definition* error (no score step), which is a programming mistake and
raises ``ScorerDefinitionError`` when the scorer is run.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.fingerprint import code_fingerprint, digest, value_identity
from assay.models.base import Model
from assay.scoring.context import NotScorable, ScorerCall, scorer_call, step_context
from assay.scoring.judge import JudgeStepError, execute_judge_step
from assay.scoring.score_value import CheckedScore, check_score
from assay.scoring.steps import FunctionStep, JudgeConfig, JudgeStep, Step, StepFunction, as_step
from assay.scoring.sync import run_sync
from assay.scoring.trusted_result import score_result
from assay.types import (
    STEP_ORDER,
    JudgeCall,
    ScoreError,
    ScoreResult,
    StepName,
    normalize_score,
)


class ScorerDefinitionError(ValueError):
    """The scorer itself is malformed (for example: it has no score step)."""


CallPreparer = Callable[[ScorerCall], ScorerCall]

_PLAIN = frozenset({float, int, str, bool, type(None), dict, list, tuple})
"""Result types that are never awaitable: a step returning one skips ``inspect.isawaitable``
(which walks the ABC machinery) — most score steps return a plain float."""


@dataclass(frozen=True, slots=True)
class Scorer:
    """An evaluation pipeline of up to four steps, each a function or a judge prompt.

    ``type_id``/``params`` are set when the scorer comes from the registry; together with the
    judge model and the judge steps' prompt versions they make the ``fingerprint``.
    """

    id: str
    label: str = ""
    """The display name (tables, reports); default: the id."""
    description: str = ""
    judge: JudgeConfig | None = None
    steps: tuple[tuple[StepName, Step], ...] = ()
    type_id: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    higher_is_better: bool = True
    score_range: tuple[float, float] = (0.0, 1.0)
    weight: float = 1.0
    threshold: float | None = None
    """Pass threshold on this scorer's own scale (``>=`` when higher is better, ``<=``
    otherwise); overrides the run-wide threshold level for this scorer."""
    aggregations: tuple[str, ...] = ("mean",)
    """How a run aggregates this scorer: names in ``assay.summary.aggregations`` (``mean``,
    ``median``, ``pass@k``, registered corpus functions)."""
    prepare_call: CallPreparer | None = None
    applies_to: Callable[[ScorerCall], bool] | None = None
    """When set and false for a run, the result is ``not_scorable`` and no step runs (see
    ``when``): lets one run mix items a scorer is meant for with items it is not."""

    def __post_init__(self) -> None:
        if not self.id or not isinstance(self.id, str):
            raise ScorerDefinitionError("a scorer needs a non-empty string id")
        if not self.label:
            object.__setattr__(self, "label", self.id)
        if isinstance(self.aggregations, str) or not all(
            isinstance(name, str) and name for name in self.aggregations
        ):
            raise ScorerDefinitionError(
                f"scorer {self.id!r}: aggregations must be names, got {self.aggregations!r}"
            )
        object.__setattr__(self, "aggregations", tuple(self.aggregations))
        if self.threshold is not None and not math.isfinite(self.threshold):
            raise ScorerDefinitionError(f"scorer {self.id!r}: threshold must be a finite number")

    # ------------------------------------------------------------------ builder
    def normalize(self, score: float) -> float:
        """``score`` on 0..1, 1 at the best end of ``score_range`` (flipped when lower is
        better); see ``assay.types.normalize_score``."""
        return normalize_score(score, self.score_range, higher_is_better=self.higher_is_better)

    def _with_step(self, name: StepName, step: Step | StepFunction) -> Scorer:
        if any(existing == name for existing, _ in self.steps):
            raise ScorerDefinitionError(f"scorer {self.id!r} already has a {name} step")
        built = as_step(step)
        if isinstance(built, JudgeStep) and name in ("preprocess", "analyze") and not built.output:
            raise ScorerDefinitionError(
                f"scorer {self.id!r}: a judge {name} step needs an output model"
            )
        ordered = sorted((*self.steps, (name, built)), key=lambda pair: STEP_ORDER.index(pair[0]))
        return dataclasses.replace(self, steps=tuple(ordered))

    def preprocess(self, step: Step | StepFunction) -> Scorer:
        """Add the step that prepares data (extracts claims, elements, ...)."""
        return self._with_step("preprocess", step)

    def analyze(self, step: Step | StepFunction) -> Scorer:
        """Add the step that judges the prepared data (verdicts, matches, ...)."""
        return self._with_step("analyze", step)

    def score(self, step: Step | StepFunction) -> Scorer:
        """Add the step that turns earlier results into a number (required)."""
        return self._with_step("score", step)

    def reason(self, step: Step | StepFunction) -> Scorer:
        """Add the step that explains the score; it also sees ``ctx.score``."""
        return self._with_step("reason", step)

    def when(self, predicate: Callable[[ScorerCall], bool]) -> Scorer:
        """A copy that only scores runs for which ``predicate(run)`` is true; the others are
        ``not_scorable`` ("not applicable"), so they count apart from real scores."""
        return dataclasses.replace(self, applies_to=predicate)

    def with_options(self, **changes: Any) -> Scorer:
        """A copy with configuration fields changed (label, judge, weight, ...)."""
        return dataclasses.replace(self, **changes)

    def with_judge_model(self, model: str | Model) -> Scorer:
        """A copy judged by ``model`` (a model string or any ``Model``, e.g. a scripted one)."""
        judge = (self.judge or JudgeConfig()).overridden_by(JudgeConfig(model=model))
        return dataclasses.replace(self, judge=judge)

    @property
    def step_names(self) -> tuple[StepName, ...]:
        return tuple(name for name, _ in self.steps)

    @property
    def has_judge(self) -> bool:
        return any(isinstance(step, JudgeStep) for _, step in self.steps)

    # ------------------------------------------------------------------ identity
    @property
    def fingerprint(self) -> str:
        """A stable hash of everything that can change this scorer's answers.

        It covers the type and params, and for every step: a function step's code with its
        constants, defaults, closure values and the functions it calls (see
        ``assay.fingerprint``); a judge step's prompt builder the same way (so the full text
        of its template), its output model's JSON Schema, answer check, judge model,
        instructions and settings. ``when``/``prepare_call`` functions count too. A changed
        prompt or a changed constant in a code step therefore changes the fingerprint, and
        ``runs resume`` refuses to mix answers from before and after the change.
        """
        return digest(self.fingerprint_parts())

    def fingerprint_parts(self) -> dict[str, Any]:
        """The named parts the fingerprint hashes, each already reduced to a hash; a
        resume that refuses a changed scorer compares these to say *what* changed."""
        parts: dict[str, Any] = {
            "type": self.type_id or f"custom:{self.id}",
            "params": digest(value_identity(dict(self.params))),
        }
        for name, step in self.steps:
            if isinstance(step, JudgeStep):
                config = (self.judge or JudgeConfig()).overridden_by(step.judge)
                check = getattr(step, "check", None)
                parts[f"{name} step"] = digest(
                    {
                        "prompt": code_fingerprint(step.prompt),
                        "output": step.output.model_json_schema() if step.output else None,
                        "check": code_fingerprint(check) if check is not None else None,
                        "version": step.version,
                    }
                )
                parts[f"{name} judge"] = digest(
                    {
                        "model": config.model_label,
                        "instructions": config.instructions or "",
                        "settings": config.settings.model_dump() if config.settings else None,
                    }
                )
            else:
                parts[f"{name} step"] = code_fingerprint(step.fn)
        if self.applies_to is not None:
            parts["when"] = code_fingerprint(self.applies_to)
        if self.prepare_call is not None:
            parts["prepare_call"] = code_fingerprint(self.prepare_call)
        return parts

    # ------------------------------------------------------------------ running
    async def run(
        self,
        *,
        output: Any,
        input: Any = None,
        ground_truth: Any = None,
        context: Any = None,
        expected_trajectory: Any = None,
        call_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> ScoreResult:
        """Score one output. Always returns a ``ScoreResult``; failures are ``status="error"``."""
        for name, _ in self.steps:  # a loop, not any(...): this runs once per item
            if name == "score":
                break
        else:
            raise ScorerDefinitionError(
                f"scorer {self.id!r} has no score step; add one with .score(...)"
            )
        started = time.perf_counter()
        run = scorer_call(
            output,
            input,
            ground_truth,
            context,
            expected_trajectory,
            call_id or str(uuid.uuid4()),
            metadata or {},
        )
        # the pipeline runs here rather than in a second coroutine: one frame per score
        results: dict[StepName, Any] = {}
        prompts: dict[str, str] = {}
        calls: list[JudgeCall] = []
        completed: list[StepName] = []
        score: float | None = None
        checked: CheckedScore | None = None
        current: StepName = "preprocess"
        try:
            if self.applies_to is not None and not self.applies_to(run):
                return self._result(
                    run, "not_scorable", None, "not applicable", results, prompts, calls, started
                )
            if self.prepare_call is not None:
                run = self.prepare_call(run)
            for name, step in self.steps:
                current = name
                ctx = step_context(run, results, score)
                if isinstance(step, FunctionStep):
                    value = step.fn(ctx)
                    if type(value) not in _PLAIN and inspect.isawaitable(value):
                        value = await value
                    if isinstance(value, NotScorable):
                        return self._result(
                            run,
                            "not_scorable",
                            None,
                            value.reason,
                            results,
                            prompts,
                            calls,
                            started,
                            not_scorable_step=name,
                        )
                else:
                    outcome = await execute_judge_step(name, step, ctx, self.judge)
                    prompts[name] = outcome.prompt
                    calls.append(outcome.call)
                    value = outcome.result
                if name == "score":
                    if type(value) is float and math.isfinite(value):
                        score = value  # the common case: what ``check_score`` would keep
                    else:
                        checked = check_score(value)  # a number, or a Score with values/corpus
                        score = value = checked.value
                results[name] = value
                completed.append(name)
        except JudgeStepError as exc:
            if exc.prompt is not None:
                prompts[current] = exc.prompt
            if exc.call is not None:
                calls.append(exc.call)
            return self._failed(run, exc, current, completed, results, prompts, calls, started)
        except Exception as exc:
            return self._failed(run, exc, current, completed, results, prompts, calls, started)
        reason = results.get("reason")
        return self._result(
            run,
            "ready",
            score,
            None if reason is None else str(reason),
            results,
            prompts,
            calls,
            started,
            values=checked.values if checked is not None else None,
            corpus=checked.corpus if checked is not None else None,
        )

    def run_sync(self, **kwargs: Any) -> ScoreResult:
        """``run`` for scripts; never nests event loops (see ``assay.scoring.sync``)."""
        return run_sync(lambda: self.run(**kwargs))

    def _failed(
        self,
        run: ScorerCall,
        exc: Exception,
        step: StepName,
        completed: list[StepName],
        results: dict[StepName, Any],
        prompts: dict[str, str],
        calls: list[JudgeCall],
        started: float,
    ) -> ScoreResult:
        error = ScoreError(
            message=f"Scorer Run Failed: {exc}",
            failed_step=step,
            completed_steps=list(completed),
            kind=type(exc).__name__,
        )
        return self._result(run, "error", None, None, results, prompts, calls, started, error=error)

    def _result(
        self,
        run: ScorerCall,
        status: Any,
        score: float | None,
        reason: str | None,
        results: dict[StepName, Any],
        prompts: dict[str, str],
        calls: list[JudgeCall],
        started: float,
        *,
        error: ScoreError | None = None,
        not_scorable_step: StepName | None = None,
        values: dict[str, float] | None = None,
        corpus: Any = None,
    ) -> ScoreResult:
        return score_result(
            scorer_id=self.id,
            scorer_label=self.label,
            call_id=run.call_id,
            status=status,
            score=score,
            values=dict(values) if values else {},
            corpus=corpus,
            reason=reason,
            steps=dict(results),  # steps saw ``results`` (``ctx.results``): the result owns a copy
            prompts=prompts,  # made by this call for this result, never shown to a step
            judge_calls=calls,
            error=error,
            not_scorable_step=not_scorable_step,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
