"""The task target: what a model answers for one doc, in the task's response shape.

An item of a task run is one eval doc: ``input`` is the prompt (the context with its
few-shot block; one per choice in multiple-input tasks), ``metadata["doc"]`` the doc.
``TaskTarget`` sends the doc's requests to the model by output type and returns the
responses in exactly the shape recorded predictions have (``assay.tasks.responses``), so
the scorers cannot tell a live model from a predictions file:

* ``generate_until``: one chat request, ``n = repeats`` samples, ``stop = until``,
  ``max_gen_toks`` and ``temperature``; each sample is cut at the first ``until`` string
  (as lm-eval does for models that do not stop by themselves);
* ``multiple_choice`` / ``loglikelihood``: ``(context, continuation)`` pairs through
  ``LoglikelihoodModel.loglikelihood`` (plus the unconditional pairs for
  ``acc_mutual_info``);
* ``loglikelihood_rolling``: ``RollingLoglikelihoodModel.loglikelihood_rolling``.

``PredictionsTarget`` serves recorded responses by doc id (``--predictions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.fingerprint import digest
from assay.models.base import (
    ChatMessage,
    LoglikelihoodModel,
    Model,
    ModelSettings,
    RollingLoglikelihoodModel,
    unsupported,
)
from assay.models.resolve import shippable_model
from assay.targets.base import TargetOutput
from assay.tasks.processing import uses_mutual_info
from assay.tasks.responses import instances
from assay.tasks.task import Task
from assay.types import Item, TargetSpec


class MissingPredictionError(KeyError):
    """The predictions file has no responses for a doc of the run."""

    def __str__(self) -> str:
        return str(self.args[0])


def doc_of(item: Item) -> dict[str, Any]:
    doc = item.metadata.get("doc")
    if not isinstance(doc, dict):
        raise ValueError(f"item {item.id!r} is not a task doc (metadata has no 'doc' object)")
    return doc


def cut_at_stop(text: str, until: list[str]) -> str:
    """``text`` up to the first occurrence of any stop string (lm-eval's post-processing)."""
    cut = len(text)
    for stop in until:
        if stop:
            at = text.find(stop)
            if at != -1:
                cut = min(cut, at)
    return text[:cut]


def model_settings(task: Task) -> tuple[ModelSettings, list[str]]:
    """The generation settings of ``task`` as assay ``ModelSettings``, and the stop list.

    lm-eval's ``do_sample: false`` means greedy decoding: temperature 0 unless the task
    sets one. ``repeats`` samples are drawn in one request (``n``)."""
    generation = task.generation_settings()
    until = [u for u in generation.get("until", []) if u]
    temperature = generation.get("temperature")
    if temperature is None and not generation.get("do_sample", False):
        temperature = 0.0
    repeats = task.config.repeats or 1
    settings = ModelSettings(
        temperature=temperature,
        max_output_tokens=int(generation.get("max_gen_toks", 256)),
        stop=until[:4] or None,
        n=repeats if repeats > 1 else None,
        top_p=generation.get("top_p"),
    )
    return settings, until


def chat_messages(context: Any) -> list[ChatMessage]:
    """What a chat model receives for a prompt: the messages themselves when the task's
    chat template built them (``--apply-chat-template``), else the text as one user
    message."""
    if isinstance(context, list) and all(isinstance(m, Mapping) for m in context):
        return [ChatMessage.model_validate(m) for m in context]
    return [ChatMessage(role="user", content=str(context))]


class TaskTarget:
    """Runs a task's requests for one doc on ``model`` (any model string or ``Model``)."""

    def __init__(self, task: Task, model: str | Model, *, base_url: str | None = None) -> None:
        self.task = task
        self.model = shippable_model(model, base_url=base_url)
        self.settings, self.until = model_settings(task)
        self.mutual_info = uses_mutual_info(task.config.metric_entries())
        label = model if isinstance(model, str) else self.model.model_id
        config: dict[str, Any] = {
            "task": task.name,
            "output_type": task.output_type,
            "model": label,
            "settings": self.settings.model_dump(exclude_none=True),
        }
        if base_url:
            config["base_url"] = base_url
        self._spec = TargetSpec(
            kind="task",
            label=f"task {task.name} → {label}",
            config=config,
            fingerprint=digest(config),
        )

    @property
    def spec(self) -> TargetSpec:
        return self._spec

    async def execute(self, item: Item) -> TargetOutput:
        doc = doc_of(item)
        output_type = self.task.output_type
        if output_type == "generate_until":
            return await self._generate(item.input)
        if output_type == "loglikelihood_rolling":
            rolling = self.model
            if not isinstance(rolling, RollingLoglikelihoodModel):
                raise unsupported(rolling, "loglikelihood_rolling")
            logprob = await rolling.loglikelihood_rolling(self.task.rolling_text(doc))
            return TargetOutput(output=logprob)
        scorer = self.model
        if not isinstance(scorer, LoglikelihoodModel):
            raise unsupported(scorer, "loglikelihood")
        continuations = self.task.continuations(doc)
        contexts = item.input if isinstance(item.input, list) else [item.input] * len(continuations)
        requests = [(str(c), cont) for c, cont in zip(contexts, continuations, strict=True)]
        if self.mutual_info:
            requests += [("", cont) for cont in self.task.unconditional_continuations(doc)]
        answers = await scorer.loglikelihood(requests)
        pairs = [[answer.logprob, answer.is_greedy] for answer in answers]
        if output_type == "loglikelihood":
            return TargetOutput(output=pairs[0])
        return TargetOutput(output=pairs)

    async def _generate(self, context: Any) -> TargetOutput:
        response = await self.model.generate(chat_messages(context), settings=self.settings)
        samples = response.samples or [response.text]
        texts = [cut_at_stop(text, self.until) for text in samples]
        repeats = self.task.config.repeats or 1
        if len(texts) < repeats:
            raise ValueError(
                f"the model returned {len(texts)} samples for repeats: {repeats} (does the "
                "endpoint support n > 1?)"
            )
        output: Any = texts[0] if repeats == 1 else texts[:repeats]
        return TargetOutput(output=output, usage=response.usage, cost_usd=response.cost_usd)


class PredictionsTarget:
    """Recorded responses by doc id: scores outputs produced elsewhere, without a model.

    Each doc's responses are shape-checked against the task before the run starts, so a
    wrong file fails naming the doc instead of scoring a misread response."""

    def __init__(self, task: Task, responses: Mapping[int, Any], *, source: str = "") -> None:
        self.task = task
        self.responses = dict(responses)
        config = {"task": task.name, "predictions": source}
        self._spec = TargetSpec(
            kind="task",
            label=f"predictions for {task.name}",
            ref=source or None,
            config=config,
            fingerprint=digest({"config": config, "responses": self.responses}),
        )

    @property
    def spec(self) -> TargetSpec:
        return self._spec

    def check(self, docs: Mapping[int, Mapping[str, Any]]) -> None:
        """Every doc has responses of the right shape (raises naming the first bad doc)."""
        mutual = uses_mutual_info(self.task.config.metric_entries())
        for doc_id, doc in docs.items():
            if doc_id not in self.responses:
                raise MissingPredictionError(f"the predictions have no line for doc_id {doc_id}")
            choices = (
                len(self.task.doc_to_choice(doc))
                if self.task.output_type == "multiple_choice"
                else 0
            )
            try:
                instances(
                    self.task.output_type,  # type: ignore[arg-type]
                    self.responses[doc_id],
                    choices=choices,
                    mutual_info=mutual,
                )
            except ValueError as exc:
                raise ValueError(f"predictions for doc_id {doc_id}: {exc}") from None

    async def execute(self, item: Item) -> TargetOutput:
        doc_id = item.metadata.get("doc_id")
        if doc_id not in self.responses:
            raise MissingPredictionError(f"the predictions have no line for doc_id {doc_id}")
        return TargetOutput(output=self.responses[doc_id])
