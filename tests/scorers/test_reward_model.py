"""``reward-model``: scored by a real loopback HTTP server speaking vLLM and TEI shapes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from assay.runner.scorer_set import scorer_spec
from assay.scoring.registry import create_scorer


def reward_of(text: str) -> float:
    """The fake model's raw reward: longer answers score higher (0..10)."""
    return float(min(10, len(text.split())))


class Server:
    """vLLM ``/pooling`` ``/classify`` and TEI ``/predict`` ``/rerank`` on 127.0.0.1."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []
        self.port = 0
        self.broken = False
        self.not_finite: float | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append((request.path, body))
        if self.broken:
            return web.json_response({"data": "nonsense"})
        if self.not_finite is not None:  # aiohttp's json.dumps writes NaN / Infinity as is
            data = [{"index": i, "data": [self.not_finite]} for i in range(len(body["input"]))]
            return web.json_response({"data": data})
        if request.path == "/pooling":
            data = [{"index": i, "data": [0.0, reward_of(t)]} for i, t in enumerate(body["input"])]
            return web.json_response({"model": body["model"], "data": data[::-1]})
        if request.path == "/classify":
            data = []
            for i, text in enumerate(body["input"]):
                good = reward_of(text) / 10
                data.append({"index": i, "label": "good", "probs": [good, 1 - good]})
            return web.json_response({"data": data})
        if request.path == "/predict":
            preds = [
                [
                    {"label": "bad", "score": 10 - reward_of(t)},
                    {"label": "good", "score": reward_of(t)},
                ]
                for t in body["inputs"]
            ]
            return web.json_response(preds)
        ranks = [{"index": i, "score": reward_of(t)} for i, t in enumerate(body["texts"])]
        return web.json_response(sorted(ranks, key=lambda r: -r["score"]))

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/{name}", self._handle)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())

    def __enter__(self) -> Server:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def server() -> Iterator[Server]:
    with Server() as running:
        yield running


OUTPUTS = [
    "yes",
    "a somewhat longer answer here",
    "one two three four five six seven eight nine ten eleven",
]


async def score_all(scorer: Any) -> list[Any]:
    return await asyncio.gather(*(scorer.run(input="q?", output=o) for o in OUTPUTS))


@pytest.mark.parametrize(
    ("api", "params", "expected_raw"),
    [
        ("vllm-pooling", {"low": 0, "high": 10}, [1.0, 5.0, 10.0]),
        ("vllm-classify", {"label_index": 0}, [0.1, 0.5, 1.0]),
        ("tei-predict", {"label": "good", "low": 0, "high": 10}, [1.0, 5.0, 10.0]),
        ("tei-rerank", {"low": 0, "high": 10}, [1.0, 5.0, 10.0]),
    ],
)
def test_each_shape_scores_normalised_with_the_raw_value(
    server: Server, api: str, params: dict[str, Any], expected_raw: list[float]
) -> None:
    scorer = create_scorer(
        "reward-model", base_url=f"http://127.0.0.1:{server.port}", model="rm-1", api=api, **params
    )
    results = asyncio.run(score_all(scorer))
    offset = 1 if api != "tei-rerank" else 0  # the template adds the prompt ("q?")
    raws = [r.values["raw"] for r in results]
    if api in ("vllm-pooling", "tei-predict"):
        assert raws == [min(10.0, v + offset) for v in expected_raw]
    elif api == "vllm-classify":
        assert raws == pytest.approx([min(1.0, v + offset / 10) for v in expected_raw])
    else:
        assert raws == expected_raw
    assert all(r.status == "ready" and 0.0 <= r.score <= 1.0 for r in results)
    assert [r.score for r in results] == sorted(r.score for r in results)  # longer = better
    assert len(server.requests) == 1  # the three concurrent pairs went in one batch


def test_lower_is_better_flips_and_model_is_fingerprinted(server: Server) -> None:
    base = {"base_url": f"http://127.0.0.1:{server.port}", "low": 0, "high": 10}
    flipped = create_scorer("reward-model", model="rm-1", higher_is_better=False, **base)
    results = asyncio.run(score_all(flipped))
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    one = scorer_spec(create_scorer("reward-model", model="rm-1", **base)).fingerprint
    two = scorer_spec(create_scorer("reward-model", model="rm-2", **base)).fingerprint
    assert one != two


def test_a_wrong_shape_is_an_error_never_a_score(server: Server) -> None:
    server.broken = True
    scorer = create_scorer("reward-model", base_url=f"http://127.0.0.1:{server.port}", model="m")
    result = asyncio.run(scorer.run(input="q", output="a"))
    assert result.status == "error" and result.score is None
    assert "vllm-pooling: expected 'data'" in result.error.message  # type: ignore[union-attr]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_reward_that_is_not_finite_is_an_error_never_a_clipped_score(
    server: Server, value: float
) -> None:
    server.not_finite = value
    scorer = create_scorer("reward-model", base_url=f"http://127.0.0.1:{server.port}", model="m")
    result = asyncio.run(scorer.run(input="q", output="a"))
    assert result.status == "error" and result.score is None
    message = result.error.message  # type: ignore[union-attr]
    assert "vllm-pooling: data[0].data: expected a finite number" in message  # names the place


def test_equal_range_is_refused() -> None:
    with pytest.raises(ValueError, match="low"):
        create_scorer("reward-model", base_url="http://127.0.0.1:1", model="m", low=1, high=1)


def test_metric_reward_in_a_task_yaml(
    tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``metric: reward`` in a task's metric_list runs the reward model on each response."""
    monkeypatch.setenv("ASSAY_CACHE_PATH", str(tmp_path / "cache.db"))
    from assay.operations.tasks import load_task, run_task
    from assay.testing.openai_server import MockOpenAIServer, MockReply

    (tmp_path / "qa.jsonl").write_text(
        '{"question": "q1", "answer": "a"}\n{"question": "q2", "answer": "b"}\n'
    )
    yaml = tmp_path / "qa.yaml"
    yaml.write_text(
        "task: qa\ndataset_path: qa.jsonl\ntest_split: train\noutput_type: generate_until\n"
        'doc_to_text: "{{question}}"\ndoc_to_target: answer\n'
        "metric_list:\n  - metric: reward\n"
        f"    base_url: http://127.0.0.1:{server.port}\n    model: rm-1\n    low: 0\n    high: 10\n"
    )
    with MockOpenAIServer() as llm:
        llm.responder = lambda body: MockReply(
            samples=["one two three" if "q1" in body["messages"][-1]["content"] else "one"]
        )
        outcome = run_task(
            load_task(yaml),
            model="openai-compatible/mock-lm",
            base_url=llm.base_url,
            stored=False,
            progress=False,
        )
    assert outcome.report["errors"] == []
    per_doc = sorted(r["metrics"]["reward"] for r in outcome.report["per_doc"])
    assert per_doc == pytest.approx([0.2, 0.4])  # "q2 one" and "q1 one two three", /10
    assert outcome.report["aggregate"]["reward,none"] == pytest.approx(0.3)
