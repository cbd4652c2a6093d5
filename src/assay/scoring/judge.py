"""Executing judge steps: prompt, structured answer, validation, one repair, a record.

Rules (see the field lessons): the judge's answer must validate against the step's schema.
It is extracted tolerantly (bare JSON, a fenced block, or the first JSON object embedded in
prose); if it still does not validate, the model gets one repair turn that shows it the
validation error; after that the step fails and the raw answer is kept on the record. A
parse failure is never turned into a number. A step's ``check`` (e.g. one verdict per claim)
runs right after validation, and its failure is handled the same way.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from assay.models.base import ChatMessage, Model, ModelSettings
from assay.scoring.context import StepContext
from assay.scoring.steps import JudgeConfig, JudgeStep
from assay.types import JudgeCall, StepName, Usage


class ScoreAnswer(BaseModel):
    """Default answer schema of a judge score step."""

    model_config = ConfigDict(extra="ignore")

    score: float


class JudgeStepError(Exception):
    """A judge step failed; ``call`` is the failed execution record."""

    def __init__(self, message: str, call: JudgeCall | None, prompt: str | None) -> None:
        super().__init__(message)
        self.call = call
        self.prompt = prompt


@dataclass(frozen=True, slots=True)
class JudgeOutcome:
    result: Any
    prompt: str
    call: JudgeCall


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


@cache
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def extract_json(text: str) -> Any:
    """Parse JSON from a model answer: the whole text, a fenced block, or the first
    balanced object/array found in it. Raises ``ValueError`` when nothing parses."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    for block in _FENCE.findall(stripped):
        try:
            return json.loads(block.strip())
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    for index, char in enumerate(stripped):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(stripped, index)
            except json.JSONDecodeError:
                continue
            return value
    raise ValueError("the answer contains no JSON value")


def _validate(text: str, output: type[BaseModel]) -> BaseModel:
    """Extract and validate; raises ``ValueError`` with a message fit to show the model."""
    try:
        data = extract_json(text)
    except ValueError as exc:
        raise ValueError(str(exc)) from exc
    try:
        return output.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ValueError(f"the JSON does not match the schema: {problems}") from exc


def _repair_message(error: str, schema: dict[str, Any]) -> str:
    return (
        f"Your previous answer could not be used: {error}.\n"
        "Reply again with only a JSON object that matches this JSON Schema, no other text:\n"
        f"{json.dumps(schema)}"
    )


async def execute_judge_step(
    step_name: StepName, step: JudgeStep, ctx: StepContext, scorer_judge: JudgeConfig | None
) -> JudgeOutcome:
    """Run one judge step and return its validated result with the execution record."""
    config = (scorer_judge or JudgeConfig()).overridden_by(step.judge)
    built = step.prompt(ctx)
    prompt = await built if inspect.isawaitable(built) else built
    if not isinstance(prompt, str):
        raise JudgeStepError(
            f'step "{step_name}": the prompt builder returned {type(prompt).__name__}, not str',
            None,
            None,
        )
    if config.model is None:
        raise JudgeStepError(
            f'Step "{step_name}" requires a model and instructions: no judge model is set '
            "(pass model='provider/model' or set ASSAY_JUDGE_MODEL)",
            None,
            prompt,
        )
    if not config.instructions:
        raise JudgeStepError(f'Step "{step_name}" requires a model and instructions', None, prompt)
    model = config.model
    settings = config.settings or ModelSettings()

    output_model: type[BaseModel] | None
    if step.output is not None:
        output_model = step.output
    elif step_name == "reason":
        output_model = None
    elif step_name == "score":
        output_model = ScoreAnswer
    else:
        raise JudgeStepError(
            f'judge step "{step_name}" needs an output model (a pydantic class)', None, prompt
        )
    schema = _schema_of(output_model) if output_model is not None else None
    check: Callable[[BaseModel], None] | None = None
    if step.check is not None:
        if output_model is None:
            raise JudgeStepError(
                f'judge step "{step_name}": an answer check needs an output model', None, prompt
            )
        step_check = step.check

        def check(answer: BaseModel) -> None:
            step_check(ctx, answer)

    messages = [
        ChatMessage(role="system", content=config.instructions),
        ChatMessage(role="user", content=prompt),
    ]
    return await _call_with_repair(
        step_name, model, messages, schema, output_model, settings, prompt, check
    )


async def _call_with_repair(
    step_name: StepName,
    model: Model,
    messages: list[ChatMessage],
    schema: dict[str, Any] | None,
    output_model: type[BaseModel] | None,
    settings: ModelSettings,
    prompt: str,
    check: Callable[[BaseModel], None] | None = None,
) -> JudgeOutcome:
    """Call the model; an answer that fails validation or ``check`` (a ``ValueError``) gets
    one repair turn naming the problem, a second failure fails the step."""
    started = time.perf_counter()
    usage = Usage()
    attempts = 0
    raw: str | None = None
    cached = True
    cost: float | None = None
    model_label = model.model_id

    def record(status: str, output: Any = None, error: str | None = None) -> JudgeCall:
        return JudgeCall(
            step=step_name,
            status="success" if status == "success" else "failed",
            prompt=prompt,
            model_id=model_label,
            provider=model.provider,
            attempts=attempts,
            duration_ms=(time.perf_counter() - started) * 1000,
            output=output,
            raw_output=raw,
            usage=usage,
            error=error,
            cached=cached and attempts > 0,
            cost_usd=cost,
        )

    for attempt in range(2):
        attempts += 1
        try:
            response = await model.generate(messages, schema=schema, settings=settings)
        except Exception as exc:  # a failed call fails the step; retries are the model's job
            message = f"model call failed: {type(exc).__name__}: {exc}"
            raise JudgeStepError(message, record("failed", error=message), prompt) from exc
        raw = response.text
        usage = usage + response.usage
        if response.cost_usd is not None:
            cost = (cost or 0.0) + response.cost_usd
        cached = cached and response.cached
        model_label = response.model_id or model_label
        if output_model is None:
            text = raw.strip()
            return JudgeOutcome(text, prompt, record("success", output=text))
        try:
            parsed = _validate(raw, output_model)
            if check is not None:
                check(parsed)  # e.g. one verdict per claim; its ValueError is repaired too
        except ValueError as exc:
            if attempt == 0:
                assert schema is not None
                messages = [
                    *messages,
                    ChatMessage(role="assistant", content=raw),
                    ChatMessage(role="user", content=_repair_message(str(exc), schema)),
                ]
                continue
            message = f"judge answer invalid after one repair attempt: {exc}"
            raise JudgeStepError(message, record("failed", error=message), prompt) from exc
        except Exception as exc:  # a broken check is a bug, not the model's to repair
            message = f"the answer check failed: {type(exc).__name__}: {exc}"
            raise JudgeStepError(message, record("failed", error=message), prompt) from exc
        if step_name == "score" and output_model is ScoreAnswer:
            assert isinstance(parsed, ScoreAnswer)
            return JudgeOutcome(parsed.score, prompt, record("success", output=parsed.score))
        dumped = parsed.model_dump()
        return JudgeOutcome(parsed, prompt, record("success", output=dumped))
    raise AssertionError("unreachable")  # pragma: no cover
