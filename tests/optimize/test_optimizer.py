"""End-to-end optimizations on a real SQLite store with scripted task and reflection models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.operations.stored_runs import compare_stored
from assay.optimize import (
    OptimizeConfigError,
    OptimizeResumeError,
    optimize,
    resume_optimization,
    show_optimization,
)
from assay.optimize.events import OptimizeEvent
from assay.store import Store
from assay.testing import ScriptedModel

from .conftest import TERSE_RULE, reflection_reply, task_reply


def _run(config: dict[str, Any], store: Store, **kwargs: Any) -> Any:
    return optimize(
        config,
        task_model=kwargs.pop("task_model", ScriptedModel(responder=task_reply)),
        reflection_model=kwargs.pop("reflection_model", ScriptedModel(responder=reflection_reply)),
        store=store,
        **kwargs,
    )


def test_validation_score_rises_and_the_winner_is_checked_on_test(
    base_config: dict[str, Any], store: Store
) -> None:
    events: list[OptimizeEvent] = []
    result = _run(base_config, store, on_event=events.append)

    assert result.status == "completed"
    assert result.seed_val_score == 0.0
    assert result.best_val_score == 1.0
    assert TERSE_RULE in result.best_candidate["instructions"]
    assert result.best_candidate["style"] == "Be friendly."  # round robin changed instructions
    assert TERSE_RULE in result.best_prompt
    # stopped as soon as validation was perfect, well within the budget
    assert result.stop_reason is not None and "stop_at_perfect" in result.stop_reason
    assert result.metric_calls <= 40

    test = result.test
    assert test is not None
    assert (test.seed_score, test.best_score, test.items) == (0.0, 1.0, 6)
    assert test.verdict == "improved" and test.significant
    assert [s.verdict for s in test.scorers] == ["improved"]
    assert "significant improvement" in result.summary

    kinds = [e.kind for e in events]
    assert kinds[0] == "started" and "iteration" in kinds and "proposed" in kinds
    assert kinds[-1] == "test"
    proposed = next(e for e in events if e.kind == "proposed")
    assert f"+{TERSE_RULE}" in proposed.diff  # type: ignore[union-attr]


def test_everything_is_stored(base_config: dict[str, Any], store: Store) -> None:
    result = _run(base_config, store)
    view = show_optimization(result.optimization_id[:8], store=store)

    assert view.optimization.status == "completed"
    assert view.optimization.result is not None
    assert view.optimization.result["best_idx"] == result.best_idx
    assert view.optimization.config["budget"] == {"max_metric_calls": 40}

    seed, child = view.candidates
    assert (seed.idx, seed.parents, seed.changed, seed.val_score) == (0, [], [], 0.0)
    assert (child.idx, child.parents, child.changed) == (1, [0], ["instructions"])
    assert child.val_score == 1.0 and child.iteration == 1

    # every GEPA metric call is one stored evaluation row, each a normal stored run
    searched = [e for e in view.evaluations if e.split != "test"]
    assert sum(e.metric_calls for e in searched) == result.metric_calls
    assert {e.split for e in view.evaluations} == {"train", "val", "test"}
    for evaluation in view.evaluations:
        assert evaluation.run_id is not None
        record = store.runs.get(evaluation.run_id)
        assert record.status == "completed"
        assert record.info.metadata["optimization_id"] == result.optimization_id
        assert record.info.metadata["split"] == evaluation.split

    # the reflection prompt carried the scorer diagnostics; the answer is stored
    [reflection] = view.reflections
    assert reflection.component == "instructions"
    assert "Scorer diagnostics → Exact match: 0.00" in reflection.prompt
    assert TERSE_RULE in (reflection.answer or "")

    # the held-out runs compare like any two runs
    assert result.test is not None
    comparison = compare_stored(result.test.seed_run_id, result.test.best_run_id, store=store)
    assert comparison.scorers[0].verdict == "improved"


def test_budget_is_exceeded_by_at_most_one_iteration(
    base_config: dict[str, Any], store: Store
) -> None:
    config = {**base_config, "stop_at_perfect": False, "budget": {"max_metric_calls": 25}}
    result = _run(config, store)
    one_iteration = 3 + 3 + 4  # parent minibatch + child minibatch + validation
    assert 25 <= result.metric_calls <= 25 + one_iteration
    stored = show_optimization(result.optimization_id, store=store).evaluations
    assert sum(e.metric_calls for e in stored if e.split != "test") == result.metric_calls


def test_max_iterations_stops_the_search(base_config: dict[str, Any], store: Store) -> None:
    config = {**base_config, "stop_at_perfect": False, "budget": {"max_iterations": 3}}
    result = _run(config, store)
    assert result.iterations == 3
    assert result.stop_reason == "max_iterations reached (3)"


def test_a_scorer_that_errors_on_some_rows_does_not_stop_the_search(
    base_config: dict[str, Any], store: Store, flaky_scorer: str
) -> None:
    config = {**base_config, "scorers": [{"type": "exact-match"}, {"type": flaky_scorer}]}
    result = _run(config, store)
    assert result.status == "completed"
    assert result.best_val_score == 1.0
    view = show_optimization(result.optimization_id, store=store)
    val_runs = [e for e in view.evaluations if e.split == "val"]
    errors = [
        s
        for e in val_runs
        for r in store.runs.results(e.run_id or "")
        for s in r.scores.values()
        if s.status == "error"
    ]
    assert errors, "the flaky scorer should have failed on odd rows"
    # the errors reached the reflection model as feedback, not as an exception
    assert "flaky scorer broke on this row" in view.reflections[0].prompt


def test_a_failing_target_is_a_low_score_not_a_stop(
    base_config: dict[str, Any], store: Store
) -> None:
    broken = ("0 + 1", "1 + 2", "2 + 3", "3 + 4", "11 + 12")  # 4 of 6 train rows, 1 of 4 val

    def sometimes_broken(messages: Any, schema: Any) -> Any:
        if messages[-1].content.startswith(tuple(f"What is {b}?" for b in broken)):
            return RuntimeError("endpoint exploded")
        return task_reply(messages, schema)

    result = _run(base_config, store, task_model=ScriptedModel(responder=sometimes_broken))
    assert result.status == "completed"
    assert result.best_val_score == pytest.approx(0.75)  # q11 scores 0, the other three 1
    view = show_optimization(result.optimization_id, store=store)
    # every minibatch of 3 holds a broken row: the reflection model saw the error
    assert "target failed: RuntimeError: endpoint exploded" in view.reflections[0].prompt


class Kill(BaseException):
    """Stands in for SIGKILL/Ctrl-C: not an ``Exception``, so nothing may swallow it."""


def test_kill_then_resume_finishes_the_same_optimization(
    base_config: dict[str, Any], store: Store, tmp_path: Path
) -> None:
    config = {**base_config, "stop_at_perfect": False, "budget": {"max_metric_calls": 45}}
    reference = _run({**config, "run_dir": str(tmp_path / "ref")}, store)

    seen = 0

    def kill_after_20_calls(event: OptimizeEvent) -> None:
        nonlocal seen
        if event.kind == "evaluated":
            seen += event.items
            if seen > 20:
                raise Kill

    with pytest.raises(Kill):
        _run({**config, "run_dir": str(tmp_path / "killed")}, store, on_event=kill_after_20_calls)
    [killed] = [o for o in store.optimizations.list() if o.id != reference.optimization_id]
    assert killed.status == "interrupted"
    assert "Kill" in (killed.error or "")

    events: list[OptimizeEvent] = []
    resumed = resume_optimization(
        killed.id[:10],
        task_model=ScriptedModel(responder=task_reply),
        reflection_model=ScriptedModel(responder=reflection_reply),
        store=store,
        on_event=events.append,
    )
    assert resumed.optimization_id == killed.id
    assert resumed.status == "completed"
    # the same search as the uninterrupted one: same candidates, same budget use
    assert resumed.best_candidate == reference.best_candidate
    assert resumed.candidates == reference.candidates
    assert resumed.metric_calls == reference.metric_calls
    assert resumed.iterations == reference.iterations
    # the seed's validation evaluation was read back from the store, not paid again
    first_eval = next(e for e in events if e.kind == "evaluated")
    assert first_eval.split == "val" and first_eval.reused  # type: ignore[union-attr]
    assert store.optimizations.get(killed.id).status == "completed"

    with pytest.raises(OptimizeResumeError, match="already completed"):
        resume_optimization(killed.id, store=store)


def test_resume_without_the_python_models_names_the_key(
    base_config: dict[str, Any], store: Store
) -> None:
    def stop(event: OptimizeEvent) -> None:
        if event.kind == "iteration":
            raise Kill

    with pytest.raises(Kill):
        _run(base_config, store, on_event=stop)
    [record] = store.optimizations.list()
    with pytest.raises(OptimizeConfigError, match=r"'task_model'.*passed again"):
        resume_optimization(record.id, store=store)


def test_a_single_split_is_divided_with_the_seed(
    base_config: dict[str, Any], store: Store, tmp_path: Path
) -> None:
    config = {k: v for k, v in base_config.items() if k not in ("val", "test", "run_dir")}
    first = _run({**config, "run_dir": str(tmp_path / "a")}, store)
    started: list[OptimizeEvent] = []
    second = _run({**config, "run_dir": str(tmp_path / "b")}, store, on_event=started.append)
    assert started[0].kind == "started"
    assert (started[0].train_size, started[0].val_size) == (3, 3)  # type: ignore[union-attr]
    assert first.test is None and "no test split" in first.summary
    a = show_optimization(first.optimization_id, store=store).evaluations
    b = show_optimization(second.optimization_id, store=store).evaluations
    val_a = {r.item_id for r in store.runs.results(a[0].run_id or "")}
    val_b = {r.item_id for r in store.runs.results(b[0].run_id or "")}
    assert val_a == val_b and len(val_a) == 3


def test_config_errors_name_the_key(base_config: dict[str, Any], store: Store) -> None:
    with pytest.raises(
        OptimizeConfigError,
        match=r"unknown key 'budget.max_metric_call'.*did you mean 'max_metric_calls'",
    ):
        _run({**base_config, "budget": {"max_metric_call": 3}}, store)
    with pytest.raises(
        OptimizeConfigError, match=r"unknown key 'candidates'.*did you mean 'candidate'"
    ):
        _run({**base_config, "candidates": {"a": "b"}}, store)
    with pytest.raises(OptimizeConfigError, match=r"key 'scorers'.*nope"):
        _run({**base_config, "scorers": ["nope"]}, store)
    with pytest.raises(OptimizeConfigError, match=r"key 'budget'.*at least one"):
        _run({**base_config, "budget": {}}, store)
    with pytest.raises(OptimizeConfigError, match=r"test: .*also in train/val"):
        _run({**base_config, "test": base_config["val"]}, store)
    assert store.optimizations.list() == []  # nothing stored for a bad config


def test_stored_datasets_are_pinned_to_their_version(
    base_config: dict[str, Any], store: Store
) -> None:
    from .conftest import arithmetic_rows

    store.datasets.create("arith-train")
    store.datasets.add_items("arith-train", arithmetic_rows(6))
    config = {**base_config, "train": {"dataset": "arith-train"}}
    result = _run(config, store)
    stored = store.optimizations.get(result.optimization_id).config
    assert stored["train"] == {"dataset": "arith-train", "version": 1}
    assert result.best_val_score == 1.0
    # a later change to the dataset does not change what a resume would read
    store.datasets.add_items("arith-train", arithmetic_rows(2, start=50))
    assert store.datasets.get("arith-train").version == 2


def test_a_run_dir_holding_another_optimization_is_refused(
    base_config: dict[str, Any], store: Store
) -> None:
    _run(base_config, store)
    with pytest.raises(OptimizeConfigError, match=r"key 'run_dir'.*already holds"):
        _run(base_config, store)


def test_assay_optimize_is_callable_whatever_was_imported_first(
    base_config: dict[str, Any], store: Store
) -> None:
    import subprocess
    import sys

    import assay

    # in this process the package is imported already: assay.optimize is the package
    result = assay.optimize(
        base_config,
        task_model=ScriptedModel(responder=task_reply),
        reflection_model=ScriptedModel(responder=reflection_reply),
        store=store,
    )
    assert result.best_val_score == 1.0
    # in a fresh interpreter it is the lazily loaded function
    fresh = subprocess.run(
        [
            sys.executable,
            "-c",
            "import assay; f = assay.optimize; print(f.__module__, f.__name__)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert fresh.stdout.split() == ["assay.optimize.optimizer", "optimize"], fresh.stderr


def test_an_optimization_running_in_a_live_process_is_not_resumed_twice(
    base_config: dict[str, Any], store: Store
) -> None:
    import socket
    import subprocess
    import time

    def stop(event: OptimizeEvent) -> None:
        if event.kind == "iteration":
            raise Kill

    with pytest.raises(Kill):
        _run(base_config, store, on_event=stop)
    [record] = store.optimizations.list()
    assert record.progress["lease_owner"] is None  # released when it stopped
    other = subprocess.Popen(["sleep", "30"])
    try:
        owner = f"{socket.gethostname()}:{other.pid}:abcd"
        store.optimizations.update(
            record.id,
            status="running",
            progress={
                **record.progress,
                "lease_owner": owner,
                "lease_expires_at": time.time() + 60,
            },
        )
        with pytest.raises(OptimizeResumeError, match=f"running in process {owner}"):
            resume_optimization(record.id, store=store)
    finally:
        other.kill()
        other.wait()
    # its owner is gone now: the resume goes ahead
    result = resume_optimization(
        record.id,
        task_model=ScriptedModel(responder=task_reply),
        reflection_model=ScriptedModel(responder=reflection_reply),
        store=store,
    )
    assert result.status == "completed"


class PricedModel:
    """A scripted model whose every call costs ``price`` dollars (as a priced endpoint's)."""

    def __init__(self, responder: Any, price: float, delay_s: float = 0.0) -> None:
        self.inner = ScriptedModel(responder=responder, delay_s=delay_s)
        self.price = price
        self.model_id = "priced"
        self.provider = "scripted"

    async def generate(self, messages: Any, *, schema: Any = None, settings: Any = None) -> Any:
        response = await self.inner.generate(messages, schema=schema, settings=settings)
        return response.model_copy(update={"cost_usd": self.price})


def test_max_cost_counts_task_and_reflection_spend(
    base_config: dict[str, Any], store: Store
) -> None:
    config = {**base_config, "stop_at_perfect": False, "budget": {"max_cost_usd": 0.2}}
    result = _run(
        config,
        store,
        task_model=PricedModel(task_reply, 0.01),
        reflection_model=PricedModel(reflection_reply, 0.05),
    )
    assert result.stop_reason is not None and result.stop_reason.startswith("max_cost_usd")
    view = show_optimization(result.optimization_id, store=store)
    search = sum(e.cost_usd or 0.0 for e in view.evaluations if e.split != "test")
    held_out = sum(e.cost_usd or 0.0 for e in view.evaluations if e.split == "test")
    reflection = sum(r.cost_usd or 0.0 for r in view.reflections)
    assert reflection == pytest.approx(0.05 * len(view.reflections)) and reflection > 0
    # the budget bounds the search (task + reflection), one iteration may overshoot
    one_iteration = (3 + 3 + 4) * 0.01 + 0.05
    assert 0.2 <= search + reflection <= 0.2 + one_iteration
    # the result's cost is everything spent, the held-out check included
    assert held_out == pytest.approx(2 * 6 * 0.01)
    assert result.cost_usd == pytest.approx(search + reflection + held_out)


def test_max_wall_time_stops_the_search(base_config: dict[str, Any], store: Store) -> None:
    config = {**base_config, "stop_at_perfect": False, "budget": {"max_wall_time_s": 0.5}}
    result = _run(config, store, task_model=PricedModel(task_reply, 0.0, delay_s=0.05))
    assert result.stop_reason is not None and result.stop_reason.startswith("max_wall_time_s")
    assert result.iterations >= 1


@pytest.mark.parametrize(
    ("frontier", "selection", "modules"),
    [("hybrid", "current_best", "all"), ("objective", "pareto", "round_robin")],
)
def test_objective_fronts_and_other_strategies(
    base_config: dict[str, Any], store: Store, frontier: str, selection: str, modules: str
) -> None:
    config = {
        **base_config,
        "frontier": frontier,
        "candidate_selection": selection,
        "module_selector": modules,
        "scorers": [
            {"type": "exact-match", "weight": 2},
            {"type": "check-excludes", "params": {"unwanted": "think"}},
        ],
    }
    result = _run(config, store)
    assert result.best_val_score == 1.0
    [seed, child] = show_optimization(result.optimization_id, store=store).candidates
    # the seed fails exact-match (weight 2) and says "think" (weight 1): 0 on both
    assert seed.val_score == 0.0
    expected_changed = ["instructions", "style"] if modules == "all" else ["instructions"]
    assert child.changed == expected_changed


def test_a_failed_store_write_during_reflection_is_not_swallowed(
    base_config: dict[str, Any], store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GEPA catches exceptions raised while it reflects; a lost write must still surface."""

    def broken_disk(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk I/O error")

    monkeypatch.setattr(store.optimizations, "add_reflection", broken_disk)
    with pytest.raises(OSError, match="disk I/O error"):
        _run(base_config, store)
    [record] = store.optimizations.list()
    assert record.status == "failed"
    assert record.error == "OSError: disk I/O error"


def test_gepa_stop_file_ends_the_search_with_a_stop_reason(
    base_config: dict[str, Any], store: Store, tmp_path: Path
) -> None:
    """GEPA's own stop file (``run_dir/gepa.stop``) ended a search with no stop reason
    (issue 20); the reason now says so."""
    run_dir = tmp_path / "stopped-run"
    run_dir.mkdir()
    (run_dir / "gepa.stop").write_text("", encoding="utf-8")
    config = {
        **base_config,
        "stop_at_perfect": False,
        "budget": {"max_iterations": 40},
        "run_dir": str(run_dir),
    }
    result = _run(config, store)
    assert result.iterations < 40
    assert result.stop_reason is not None and "gepa.stop" in result.stop_reason


def test_a_reward_model_is_a_gepa_objective(base_config: dict[str, Any], store: Store) -> None:
    """The reward-model scorer (issue 23) scores GEPA's rows like any scorer: the rewards
    come from a real loopback server speaking vLLM's /pooling shape."""
    from tests.scorers.test_reward_model import Server

    with Server() as server:
        reward = {
            "type": "reward-model",
            "params": {
                "base_url": f"http://127.0.0.1:{server.port}",
                "model": "rm-1",
                "api": "vllm-pooling",
                "low": 0,
                "high": 10,
            },
        }
        config = {**base_config, "scorers": [reward], "budget": {"max_metric_calls": 20}}
        result = _run(config, store)
    assert result.status == "completed"
    assert server.requests and all(path == "/pooling" for path, _ in server.requests)
    assert {body["model"] for _, body in server.requests} == {"rm-1"}
    assert result.seed_val_score is not None and 0.0 < result.seed_val_score <= 1.0
    assert result.best_val_score >= result.seed_val_score
    view = show_optimization(result.optimization_id, store=store)
    scored = [e for e in view.evaluations if e.mean_score is not None]
    assert scored and all(0.0 <= e.mean_score <= 1.0 for e in scored)
