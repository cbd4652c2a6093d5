"""Reward model: a (prompt, response) pair scored by a reward or classification model
served over HTTP.

Four wire shapes (``api``): vLLM ``/pooling`` (a reward model's pooled output, the last
number is the reward) and ``/classify`` (``probs[label_index]``), Hugging Face
text-embeddings-inference ``/predict`` (the score of ``label``, or of the first label) and
``/rerank`` (the relevance of the response to the prompt as query). The raw number has a
declared range (``low``..``high``) and direction; the score is it normalised to 0..1
(1 = best, clipped), the raw value kept in ``values["raw"]``.

Why batched: a reward model scores a batch in about the time of one pair, so concurrent
items of a run are collected for ``batch_wait_ms`` (up to ``batch_size``) and sent in one
request. Why the model name is a required param: it is part of the scorer's fingerprint,
so a cached or compared score never mixes two reward models behind one URL.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field

from assay.messages.chat import output_texts
from assay.models.http import Transport, TransportError, make_transport
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.score_value import Score
from assay.scoring.scorer import Scorer

RewardApi = Literal["vllm-pooling", "vllm-classify", "tei-predict", "tei-rerank"]
PATHS: dict[str, str] = {
    "vllm-pooling": "/pooling",
    "vllm-classify": "/classify",
    "tei-predict": "/predict",
    "tei-rerank": "/rerank",
}


class RewardModelError(RuntimeError):
    """The endpoint answered something that is not the declared shape."""


class RewardModelParams(ScorerParams):
    base_url: str = Field(description="The server, e.g. http://127.0.0.1:8000 (no path).")
    model: str = Field(min_length=1, description="The served model's name (fingerprinted).")
    api: RewardApi = Field(default="vllm-pooling", description="The wire shape.")
    low: float = Field(default=0.0, description="The raw value of the worst answer.")
    high: float = Field(default=1.0, description="The raw value of the best answer.")
    higher_is_better: bool = Field(default=True, description="False: a lower raw is better.")
    label_index: int = Field(default=0, ge=0, description="vllm-classify: the class scored.")
    label: str | None = Field(default=None, description="tei-predict: the label scored.")
    template: str = Field(
        default="{input}\n\n{output}", description="How a pair becomes one text (not rerank)."
    )
    batch_size: int = Field(default=32, ge=1)
    batch_wait_ms: float = Field(default=5.0, ge=0)
    timeout_s: float = Field(default=30.0, gt=0)


_TRANSPORTS: dict[str, Transport] = {}


async def post_json(url: str, body: Any, timeout_s: float) -> Any:
    """One JSON POST through the judge models' transport (``assay.models.http``: one
    ``aiohttp`` stack with its strict parsing, phase timeouts and size cap; pooled per
    endpoint and event loop), bounded by ``timeout_s`` as a whole."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    transport = _TRANSPORTS.get(origin)
    if transport is None:
        transport = _TRANSPORTS[origin] = make_transport(origin)
    payload = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    try:
        async with asyncio.timeout(timeout_s):
            reply = await transport.post(parts.path or "/", payload, headers)
    except TimeoutError:
        raise RewardModelError(f"no answer from {url} within {timeout_s:g} s") from None
    except TransportError as exc:
        raise RewardModelError(str(exc)) from None
    if reply.status >= 400:
        text = reply.body[:200].decode("utf-8", "replace")
        raise RewardModelError(f"HTTP {reply.status} from {url}: {text}")
    try:
        return json.loads(reply.body)
    except ValueError as exc:
        raise RewardModelError(f"{url} answered with something that is not JSON: {exc}") from None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else " ".join(output_texts(value))


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RewardModelError(f"{where}: expected a number, got {type(value).__name__}")
    if not math.isfinite(value):  # JSON's NaN/Infinity: clipping would make them 0 or 1
        raise RewardModelError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _last_number(value: Any, where: str) -> float:
    while isinstance(value, list):
        if not value:
            raise RewardModelError(f"{where}: empty list")
        value = value[-1]
    return _number(value, where)


def parse(api: str, answer: Any, n: int, params: RewardModelParams) -> list[float]:
    """The raw values of ``n`` inputs from the endpoint's answer (in input order)."""
    if api in ("vllm-pooling", "vllm-classify"):
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or len(data) != n:
            raise RewardModelError(f"{api}: expected 'data' with {n} entries")
        out: list[float] = [0.0] * n
        for position, entry in enumerate(data):
            if not isinstance(entry, dict):
                raise RewardModelError(f"{api}: data[{position}] must be an object")
            index = entry.get("index", position)
            if not isinstance(index, int) or not 0 <= index < n:
                raise RewardModelError(f"{api}: data[{position}].index out of range")
            if api == "vllm-pooling":
                out[index] = _last_number(entry.get("data"), f"{api}: data[{position}].data")
            else:
                probs = entry.get("probs")
                if not isinstance(probs, list) or params.label_index >= len(probs):
                    raise RewardModelError(f"{api}: data[{position}].probs lacks the label")
                out[index] = _number(probs[params.label_index], f"{api}: data[{position}]")
        return out
    if api == "tei-predict":
        if not isinstance(answer, list) or len(answer) != n:
            raise RewardModelError(f"tei-predict: expected a list of {n} predictions")
        values = []
        for position, labels in enumerate(answer):
            labels = labels if isinstance(labels, list) else [labels]
            chosen = [
                x
                for x in labels
                if isinstance(x, dict) and (params.label is None or x.get("label") == params.label)
            ]
            if not chosen:
                raise RewardModelError(f"tei-predict: [{position}] has no label {params.label!r}")
            values.append(_number(chosen[0].get("score"), f"tei-predict: [{position}].score"))
        return values
    if not isinstance(answer, list) or len(answer) != n:
        raise RewardModelError(f"tei-rerank: expected a list of {n} ranks")
    out = [0.0] * n
    for position, entry in enumerate(answer):
        index = entry.get("index") if isinstance(entry, dict) else None
        if not isinstance(index, int) or not 0 <= index < n:
            raise RewardModelError(f"tei-rerank: [{position}].index out of range")
        out[index] = _number(entry.get("score"), f"tei-rerank: [{position}].score")
    return out


async def request_batch(params: RewardModelParams, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """The raw values of ``pairs`` (prompt, response) in one request per distinct shape."""
    url = params.base_url.rstrip("/") + PATHS[params.api]
    if params.api == "tei-rerank":  # one query per request: group the pairs by prompt
        values = [0.0] * len(pairs)
        groups: dict[str, list[int]] = {}
        for i, (prompt, _) in enumerate(pairs):
            groups.setdefault(prompt, []).append(i)
        for prompt, members in groups.items():
            query = {"query": prompt, "texts": [pairs[i][1] for i in members], "raw_scores": True}
            answer = await post_json(url, query, params.timeout_s)
            raw = parse("tei-rerank", answer, len(members), params)
            for i, value in zip(members, raw, strict=True):
                values[i] = value
        return values
    texts = [params.template.format(input=p, output=r) for p, r in pairs]
    if params.api == "tei-predict":
        body: dict[str, Any] = {"inputs": texts, "raw_scores": True}
    else:
        body = {"model": params.model, "input": texts}
    return parse(params.api, await post_json(url, body, params.timeout_s), len(texts), params)


@dataclass
class _Batcher:
    """Collects concurrent pairs of one event loop into batches."""

    params: RewardModelParams
    waiting: list[tuple[tuple[str, str], asyncio.Future[float]]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None

    async def score(self, pair: tuple[str, str]) -> float:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[float] = loop.create_future()
        self.waiting.append((pair, future))
        if len(self.waiting) >= self.params.batch_size:
            self._send()
        elif self.timer is None:
            self.timer = loop.call_later(self.params.batch_wait_ms / 1000.0, self._send)
        return await future

    def _send(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        batch, self.waiting = self.waiting, []
        if batch:
            asyncio.get_running_loop().create_task(self._run(batch))

    async def _run(self, batch: list[tuple[tuple[str, str], asyncio.Future[float]]]) -> None:
        try:
            values = await request_batch(self.params, [pair for pair, _ in batch])
        except Exception as exc:
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), value in zip(batch, values, strict=True):
            if not future.done():
                future.set_result(value)


def normalise(raw: float, params: RewardModelParams) -> float:
    """``raw`` on 0..1 (1 = best) by the declared range and direction, clipped."""
    span = params.high - params.low
    share = (raw - params.low) / span if span else 0.0
    share = min(1.0, max(0.0, share))
    return share if params.higher_is_better else 1.0 - share


@register_scorer(
    "reward-model",
    label="Reward model",
    description="A reward/classification model over HTTP (vLLM pooling/classify, TEI "
    "predict/rerank) scores the (input, output) pair; normalised to 0..1, raw in values.",
    params=RewardModelParams,
    kind="code",
    reference="vLLM pooling API, text-embeddings-inference",
    aliases=("reward",),  # ``metric: reward`` in a task's metric_list
)
def build_reward_model(params: RewardModelParams) -> Scorer:
    if params.high == params.low:
        raise ValueError("reward-model: 'low' and 'high' must differ")
    batchers: dict[asyncio.AbstractEventLoop, _Batcher] = {}

    async def score(ctx: StepContext) -> Score:
        loop = asyncio.get_running_loop()
        batcher = batchers.get(loop)
        if batcher is None:
            batcher = batchers[loop] = _Batcher(params)
        raw = await batcher.score((_text(ctx.call.input), _text(ctx.call.output)))
        return Score(normalise(raw, params), values={"raw": raw})

    return Scorer("reward-model", description=f"reward of {params.model}").score(score)
