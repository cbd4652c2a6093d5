"""Per-item timeouts for targets and scorers, and the target's usage, cost and samples on
item results, in run summaries and in the store."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import assay
from assay import JudgeConfig, Scorer, judge_step
from assay.analysis.report_terminal import summary_table
from assay.models.base import ModelSettings
from assay.models.openai_compat import OpenAICompatibleModel
from assay.models.prices import PriceTable
from assay.operations.run_config import make_run_config, run_config
from assay.operations.stored_runs import run_stored
from assay.runner.api import run_evals
from assay.store import open_store
from assay.targets.model_prompt import ModelPromptTarget
from assay.testing.openai_server import MockOpenAIServer
from assay.testing.scripted import ScriptedModel
from assay.types import Usage
from tests.cli.test_store_commands import assay as assay_cli
from tests.runner.slow_targets import hang_on_rome

ROWS = [
    {"id": "a", "input": "paris", "expected_output": "PARIS"},
    {"id": "b", "input": "rome", "expected_output": "ROME"},
    {"id": "c", "input": "oslo", "expected_output": "OSLO"},
]


def upper(text: str) -> str:
    return text.upper()


# ---------------------------------------------------------------------- timeouts
def test_a_hung_target_fails_its_item_and_the_run_goes_on() -> None:
    started = time.perf_counter()
    run = run_evals(ROWS, hang_on_rome, ["exact-match"], timeout_s=0.2, progress=False)
    assert time.perf_counter() - started < 10
    assert run.status == "completed" and run.info.timeout_s == 0.2
    by_id = {r.item_id: r for r in run.results}
    error = by_id["b"].error
    assert error is not None and error.kind == "TimeoutError"
    assert "0.2 s" in error.message and by_id["b"].scores == {}
    assert by_id["a"].ok and by_id["c"].ok
    assert by_id["a"].scores["exact-match"].score == 1.0
    assert run.summary.item_errors == 1 and run.summary.scorers["exact-match"].count == 2


def test_a_hung_sync_target_is_abandoned_without_blocking_the_end_of_the_run() -> None:
    release = threading.Event()

    def blocking(text: str) -> str:
        if text == "rome":
            release.wait(60)  # a sync call cannot be cancelled: its thread is abandoned
        return text.upper()

    started = time.perf_counter()
    try:
        run = run_evals(ROWS, blocking, ["exact-match"], timeout_s=0.3, progress=False)
    finally:
        release.set()
    assert time.perf_counter() - started < 10  # asyncio.run did not wait for the thread
    errors = {r.item_id: r.error for r in run.results if r.error}
    assert list(errors) == ["b"] and errors["b"] is not None
    assert errors["b"].kind == "TimeoutError"


def test_a_hung_scorer_gets_an_error_result_and_the_others_score() -> None:
    async def slow_for_rome(ctx: assay.StepContext) -> float:
        if ctx.call.output == "ROME":
            await asyncio.sleep(3600)
        return 1.0

    hang = Scorer("hang").score(slow_for_rome)
    stuck_judge = Scorer(
        "stuck-judge", judge=JudgeConfig(model=ScriptedModel(delay_s=3600), instructions="J.")
    ).score(judge_step(lambda ctx: "score"))
    started = time.perf_counter()
    run = run_evals(ROWS, upper, [hang, stuck_judge, "exact-match"], timeout_s=0.2, progress=False)
    assert time.perf_counter() - started < 10
    assert run.status == "completed" and run.summary.item_errors == 0
    by_id = {r.item_id: r for r in run.results}
    timed_out = by_id["b"].scores["hang"]
    assert timed_out.status == "error" and timed_out.error is not None
    assert timed_out.error.kind == "TimeoutError"
    assert "'hang'" in timed_out.error.message and "0.2 s" in timed_out.error.message
    assert by_id["a"].scores["hang"].score == 1.0 and by_id["c"].scores["hang"].score == 1.0
    assert all(r.scores["exact-match"].score == 1.0 for r in run.results)
    judge_errors = [r.scores["stuck-judge"].error for r in run.results]
    assert all(e is not None and e.kind == "TimeoutError" for e in judge_errors)
    assert run.summary.scorers["hang"].errors == 1
    assert run.summary.scorers["stuck-judge"].errors == 3


def test_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        run_evals(ROWS, upper, timeout_s=0, progress=False)


def test_run_config_timeout_key(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS))
    config = make_run_config(
        {
            "data": str(data),
            "target": "tests.runner.slow_targets:hang_on_rome",
            "scorers": ["exact-match"],
            "timeout": 0.2,
            "store": False,
        }
    )
    run = run_config(config, progress=False)
    assert run.info.timeout_s == 0.2
    assert [r.item_id for r in run.results if r.error] == ["b"]


def test_cli_timeout_flag(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in ROWS))
    db = tmp_path / "cli.db"
    done = assay_cli(
        db,
        "run",
        "--data",
        str(data),
        "--target",
        "tests.runner.slow_targets:hang_on_rome",
        "--scorer",
        "exact-match",
        "--timeout",
        "0.2",
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    with open_store(f"sqlite:///{db}") as store:
        [record] = store.runs.list()
        errors = [r.error for r in store.runs.results(record.id) if r.error]
    assert len(errors) == 1 and errors[0] is not None and errors[0].kind == "TimeoutError"


# ---------------------------------------------------------------------- usage and cost
def test_target_usage_is_summed_next_to_judge_usage() -> None:
    target = ModelPromptTarget(
        "Capital: {{ input }}",
        ScriptedModel(responder=lambda messages, schema: messages[-1].content.split()[-1].upper()),
    )
    judge = Scorer(
        "judge",
        judge=JudgeConfig(
            model=ScriptedModel(responder=lambda m, s: {"score": 1}), instructions="Judge."
        ),
    ).score(judge_step(lambda ctx: "score this"))
    run = run_evals(ROWS, target, [judge, "exact-match"], progress=False)
    # the scripted model counts words: "Capital: paris" is 2 in, "PARIS" 1 out
    assert [r.usage for r in run.results] == [Usage(input_tokens=2, output_tokens=1)] * 3
    assert run.summary.target_usage == Usage(input_tokens=6, output_tokens=3)
    judge_usage = Usage()
    for result in run.results:
        judge_usage = judge_usage + result.scores["judge"].usage
    assert run.summary.usage == judge_usage and run.summary.judge_calls == 3
    assert judge_usage.input_tokens > 0 and judge_usage != run.summary.target_usage
    assert run.summary.target_cost_usd is None  # the scripted model has no price


def test_target_cost_from_a_priced_endpoint() -> None:
    prices = PriceTable()
    prices.set("priced", input=2.0, output=10.0)
    with MockOpenAIServer() as server:
        model = OpenAICompatibleModel(
            "priced", base_url=server.base_url, provider="mock", prices=prices
        )
        run = run_evals(ROWS, ModelPromptTarget("{{ input }}", model), progress=False)
    # each call: 1 prompt word, 1 completion word ("ok")
    assert run.summary.target_usage == Usage(input_tokens=3, output_tokens=3)
    assert run.summary.target_cost_usd == pytest.approx(3 * (2.0 + 10.0) / 1_000_000)
    assert run.summary.cost_usd is None and run.summary.judge_calls == 0
    caption = str(summary_table(run.record).caption)  # what `assay run` prints
    assert "target tokens 6 (3 in / 3 out)" in caption and "target cost $" in caption


def test_samples_of_a_model_prompt_target_are_kept() -> None:
    model = ScriptedModel(responder=lambda messages, schema: "x")
    target = ModelPromptTarget("{{ input }}", model, settings=ModelSettings(n=3))
    run = run_evals(ROWS[:1], target, progress=False)
    assert run.results[0].samples == ["x", "x", "x"] and run.results[0].output == "x"
    assert run.summary.target_usage.output_tokens == 3


def _reporting(text: str) -> Any:
    if text == "rome":
        return text.upper()  # reports nothing
    return {
        "output": text.upper(),
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "cost_usd": 0.5,
        "samples": [text.upper(), text],
        "warnings": ["sampled twice"],
    }


def test_usage_cost_and_samples_are_stored_and_read_back(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'usage.db'}") as store:
        run = run_stored(ROWS, _reporting, ["exact-match"], store=store, progress=False)
        results = {r.item_id: r for r in store.runs.results(run.id)}
        record = store.runs.get(run.id)
    paris = results["a"]
    assert paris.output == "PARIS" and paris.usage == Usage(input_tokens=10, output_tokens=5)
    assert paris.cost_usd == 0.5 and paris.samples == ["PARIS", "paris"]
    assert paris.warnings == ["sampled twice"]
    rome = results["b"]
    assert rome.usage is None and rome.cost_usd is None and rome.samples is None
    assert rome.warnings == []
    assert record.summary is not None
    assert record.summary.target_usage == Usage(input_tokens=20, output_tokens=10)
    assert record.summary.target_cost_usd == pytest.approx(1.0)
