from __future__ import annotations

import asyncio
from typing import Any

import pytest

import assay
from assay.runner.api import run_evals, run_evals_async
from assay.runner.engine import RunAborted
from assay.runner.hooks import RunHooks
from assay.runner.sink import MemorySink
from assay.testing.openai_server import MockOpenAIServer
from assay.types import ItemResult

ROWS = [
    {"id": "a", "input": "paris", "expected_output": "PARIS"},
    {"id": "b", "input": "rome", "expected_output": "ROME"},
    {"id": "c", "input": "oslo", "expected_output": "nope"},
]


def upper(text: str) -> str:
    return text.upper()


def test_run_evals_scores_every_item_in_order() -> None:
    run = run_evals(ROWS, upper, ["exact-match"], concurrency=2)
    assert run.status == "completed"
    assert [r.item_id for r in run.results] == ["a", "b", "c"]
    assert [r.output for r in run.results] == ["PARIS", "ROME", "OSLO"]
    assert [r.scores["exact-match"].score for r in run.results] == [1.0, 1.0, 0.0]
    summary = run.summary.scorers["exact-match"]
    assert summary.count == 3 and summary.mean == pytest.approx(2 / 3)
    assert run.summary.items == 3 and run.summary.item_errors == 0
    assert all(r.latency_ms is not None and r.latency_ms >= 0 for r in run.results)
    assert run.scores == {"exact-match": pytest.approx(2 / 3)}


def test_failing_target_marks_only_that_item() -> None:
    def flaky(text: str) -> str:
        if text == "rome":
            raise RuntimeError("backend down")
        return text.upper()

    run = run_evals(ROWS, flaky, ["exact-match"])
    failed = {r.item_id: r for r in run.results if r.error}
    assert list(failed) == ["b"]
    assert failed["b"].error is not None and failed["b"].error.message == "backend down"
    assert failed["b"].error.kind == "RuntimeError" and failed["b"].scores == {}
    assert run.summary.item_errors == 1
    assert run.summary.scorers["exact-match"].count == 2
    assert run.summary.scorers["exact-match"].mean == 0.5


def test_failing_scorer_marks_only_that_score() -> None:
    def explode(ctx: assay.StepContext) -> float:
        if ctx.call.output == "ROME":
            raise ValueError("bad step")
        return 1.0

    custom = assay.Scorer("fragile").score(explode)
    run = run_evals(ROWS, upper, [custom, "exact-match"])
    by_id = {r.item_id: r for r in run.results}
    assert by_id["b"].scores["fragile"].status == "error"
    assert by_id["b"].scores["exact-match"].score == 1.0
    assert run.summary.scorers["fragile"].errors == 1
    assert run.summary.scorers["fragile"].count == 2


def test_stored_outputs_are_scored_without_a_target() -> None:
    rows = [
        {"id": "x", "output": "yes", "expected_output": "yes"},
        {"id": "y", "input": "q", "expected_output": "no"},
    ]
    run = run_evals(rows, None, ["exact-match"])
    by_id = {r.item_id: r for r in run.results}
    assert by_id["x"].scores["exact-match"].score == 1.0 and by_id["x"].latency_ms is None
    assert by_id["y"].error is not None and "has no 'output'" in by_id["y"].error.message
    assert run.info.target.kind == "stored-output"


def test_repeats_report_spread_and_flips() -> None:
    calls: dict[str, int] = {}

    def alternating(text: str) -> str:
        calls[text] = calls.get(text, 0) + 1
        if text == "paris":
            return "PARIS" if calls[text] % 2 else "wrong"
        return text.upper()

    run = run_evals(ROWS, alternating, ["exact-match"], repeats=2, threshold=0.5, concurrency=1)
    assert len(run.results) == 6
    assert [(r.item_id, r.repeat) for r in run.results][:2] == [("a", 0), ("a", 1)]
    summary = run.summary.scorers["exact-match"]
    assert summary.flipped_items == ["a"]
    assert summary.mean == pytest.approx((0.5 + 1 + 0) / 3)
    assert summary.mean_spread == pytest.approx(1 / 3)
    assert run.summary.repeats == 2 and run.summary.results == 6


async def test_concurrency_is_honoured() -> None:
    in_flight = 0
    peak = 0

    async def slow(text: str) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return text

    rows = [{"id": str(i), "input": f"t{i}"} for i in range(20)]
    await run_evals_async(rows, slow, ["exact-match"], concurrency=4)
    assert peak == 4


async def test_hooks_are_called_and_a_failing_hook_stops_the_run() -> None:
    events: list[str] = []
    hooks = RunHooks(
        on_run_start=lambda info: events.append("start"),
        on_item_start=lambda item, repeat: events.append(f"item:{item.id}"),
        on_run_end=lambda info, status, summary: events.append(f"end:{status}"),
    )
    done: list[ItemResult] = []

    async def collect(result: ItemResult) -> None:
        done.append(result)

    await run_evals_async(ROWS, upper, ["exact-match"], hooks=hooks, on_item_complete=collect)
    assert events[0] == "start" and events[-1] == "end:completed"
    assert sorted(e for e in events if e.startswith("item:")) == ["item:a", "item:b", "item:c"]
    assert sorted(r.item_id for r in done) == ["a", "b", "c"]

    def broken(result: ItemResult) -> None:
        raise RuntimeError("hook bug")

    sink = MemorySink()
    with pytest.raises(RunAborted, match="hook bug"):
        await run_evals_async(ROWS, upper, ["exact-match"], on_item_complete=broken, sink=sink)
    assert sink.status == "failed"


async def test_cancel_keeps_finished_results_and_marks_interrupted() -> None:
    async def slow(text: str) -> str:
        await asyncio.sleep(0.02 if text != "t0" else 0)
        return text

    rows = [{"id": str(i), "input": f"t{i}"} for i in range(200)]
    sink = MemorySink()
    task = asyncio.create_task(
        run_evals_async(rows, slow, ["exact-match"], concurrency=4, sink=sink)
    )
    while len(sink.results) < 5:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sink.status == "interrupted"
    assert 5 <= len(sink.results) < 200
    assert sink.summary is not None and sink.summary.results == len(sink.results)


def test_duplicate_scorer_ids_get_suffixes() -> None:
    run = run_evals(
        ROWS, upper, ["exact-match", {"type": "exact-match", "params": {"ignore_case": True}}]
    )
    assert set(run.summary.scorers) == {"exact-match", "exact-match-2"}
    assert run.summary.scorers["exact-match-2"].mean == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"repeats": 0}, "repeats must be at least 1"),
        ({"scorers": ["no-such-scorer"]}, r"scorers\[0\]"),
    ],
)
def test_bad_settings_fail_before_running(kwargs: dict[str, Any], message: str) -> None:
    options = {"scorers": ["exact-match"], **kwargs}
    with pytest.raises(ValueError, match=message):
        run_evals(ROWS, upper, **options)


def test_bad_rows_fail_before_running() -> None:
    with pytest.raises(ValueError, match="duplicate id 'a'"):
        run_evals([ROWS[0], ROWS[0]], upper, ["exact-match"])
    with pytest.raises(ValueError):
        run_evals([{"id": "z"}], upper, ["exact-match"])


def test_scorer_as_target_calibration_with_meta_scorer() -> None:
    """The judge under calibration is the target; a meta-scorer compares it to the label."""
    judge = (
        assay.Scorer("length-judge")
        .score(lambda ctx: 1.0 if len(ctx.output_text) > 3 else 0.0)
        .reason(lambda ctx: f"{len(ctx.output_text)} chars")
    )

    def agreement(ctx: assay.StepContext) -> float:
        return 1.0 if ctx.call.output["score"] == ctx.call.ground_truth else 0.0

    meta = assay.Scorer("agreement").score(agreement)
    rows = [
        {"id": "1", "input": "q", "output": "long answer", "expected_output": 1.0},
        {"id": "2", "input": "q", "output": "no", "expected_output": 1.0},
        {"id": "3", "input": "q", "output": "ok", "expected_output": 0.0},
    ]
    run = run_evals(rows, judge, [meta])
    assert [r.output for r in run.results] == [
        {"score": 1.0, "reason": "11 chars"},
        {"score": 0.0, "reason": "2 chars"},
        {"score": 0.0, "reason": "2 chars"},
    ]
    assert run.info.target.kind == "scorer"
    assert run.summary.scorers["agreement"].mean == pytest.approx(2 / 3)


def test_scorer_target_invalid_score_becomes_null_with_warning() -> None:
    class OddJudge:
        """Not an assay Scorer: a judge object whose run returns a NaN score."""

    from assay.targets.scorer import scorer_output

    class Result:
        status = "ready"
        score = float("nan")
        reason = "??"

    out = scorer_output(Result())
    assert out.output == {"score": None, "reason": "??"} and out.warnings
    assert OddJudge is not None


def test_model_prompt_target_over_real_http() -> None:
    with MockOpenAIServer() as server:
        server.responder = lambda body: (
            body["messages"][-1]["content"].split(":")[-1].strip().upper()
        )
        target = {
            "type": "model",
            "model": "openai-compatible/test-model",
            "base_url": server.base_url,
            "prompt": "Say: {{ input }}",
        }
        run = run_evals(ROWS, target, ["exact-match"], concurrency=3)
        assert len(server.chat_requests) == 3
    assert [r.output for r in run.results] == ["PARIS", "ROME", "OSLO"]
    assert run.summary.scorers["exact-match"].mean == pytest.approx(2 / 3)
    assert run.info.target.config["prompt"] == "Say: {{ input }}"


def test_progress_bar_shows_rate_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    run_evals(ROWS, upper, ["exact-match"], progress=True, name="bar-test")
    err = capsys.readouterr().err
    assert "bar-test" in err and "3/3" in err and "items/s" in err


def test_a_disabled_scorer_config_does_not_run() -> None:
    data = [{"id": "a", "input": "x", "expected_output": "x"}]
    result = run_evals(
        data,
        lambda input: input,
        [
            {"type": "exact-match"},
            {"type": "content-similarity", "enabled": False},
            assay.ScorerConfig(type="keyword-coverage", enabled=False),
        ],
        progress=False,
    )
    assert [s.id for s in result.info.scorers] == ["exact-match"]
    assert set(result.results[0].scores) == {"exact-match"}
    assert set(result.summary.scorers) == {"exact-match"}
