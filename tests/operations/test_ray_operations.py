"""``assay tasks run``, ``assay calibrate`` and optimization batches on the Ray backend:
each gives the same stored results as the same work done locally, with the backend and
the worker count recorded on every run it stores.

Real parts only: a local Ray (2 CPUs, no dashboard, shut down when the module ends), a
SQLite file (or PostgreSQL when ``ASSAY_TEST_POSTGRES_URL`` names one), and model and
judge calls over HTTP to a loopback mock whose answers are deterministic. The model cache
is off in this process and in the Ray workers, so both runs really call the mock.

One module for the three operations: starting Ray costs ~10 s on the shared 2-core
machine, once here rather than once per operation. Without Ray installed the module is
skipped, except under CI, where a missing Ray fails (the dev extra installs it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.calibration.run import calibrate
from assay.models.providers import reset_resolved_models
from assay.models.reliability import reset_limiters
from assay.operations.tasks import load_task, run_task
from assay.optimize import optimize, resume_optimization
from assay.optimize.events import OptimizeEvent
from assay.store import Store, open_store
from assay.testing import ScriptedModel
from assay.testing.openai_server import MockOpenAIServer
from tests.operations.ray_targets import judge_reply, mock_judge, task_answer
from tests.optimize.conftest import arithmetic_rows, reflection_reply, task_reply, write_jsonl
from tests.optional import required_module
from tests.store.conftest import postgres_schema_url

ray = required_module("ray")

REPO = Path(__file__).resolve().parents[2]
POSTGRES_ENV = "ASSAY_TEST_POSTGRES_URL"
WORKER_ENV = {
    "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
    "ASSAY_CACHE": "off",
}
"""What the Ray workers need: ``assay`` and ``tests`` importable by name, and no model
cache (a cached answer would hide whether a worker called the mock)."""

__all__ = ["postgres_schema_url"]


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One local Ray for the module, started from a scratch folder (the workers' files
    land there, never in the repository) with ``WORKER_ENV`` in its environment."""
    saved = {key: os.environ.get(key) for key in WORKER_ENV}
    here = Path.cwd()
    os.chdir(tmp_path_factory.mktemp("ray"))
    os.environ.update(WORKER_ENV)
    try:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
        yield
    finally:
        ray.shutdown()
        os.chdir(here)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Default stores land in the test's folder; models and limiters are fresh per test."""
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.setenv("ASSAY_CACHE", "off")
    monkeypatch.chdir(tmp_path)
    reset_limiters()
    reset_resolved_models()
    yield
    reset_limiters()
    reset_resolved_models()


@pytest.fixture
def store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Store]:
    """PostgreSQL (a fresh schema) when the test server is named, else an SQLite file."""
    url = (
        request.getfixturevalue("postgres_schema_url")
        if os.environ.get(POSTGRES_ENV)
        else f"sqlite:///{tmp_path / 'store.db'}"
    )
    with open_store(url) as opened:
        yield opened


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    """Answers a task prompt with its sum, and a judge prompt with the answer's score."""

    def respond(body: dict[str, Any]) -> str | dict[str, Any]:
        text = " ".join(str(m["content"]) for m in body["messages"])
        return judge_reply(text) if "GRADE" in text else task_answer(text)

    with MockOpenAIServer(responder=respond) as running:
        yield running


def _rows(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    """A run's stored results item by item: output, error, and every score's status,
    value and values."""
    return sorted(
        (
            r.item_id,
            r.repeat,
            r.output,
            r.error.message if r.error else None,
            sorted((k, s.status, s.score, s.values) for k, s in r.scores.items()),
        )
        for r in store.runs.results(run_id)
    )


def _backend(store: Store, run_id: str) -> tuple[str, int | None]:
    info = store.runs.get(run_id).info
    return info.backend, info.workers


# ------------------------------------------------------------------------ tasks run


@pytest.mark.usefixtures("local_ray")
def test_a_task_run_on_ray_stores_what_the_local_run_stores(
    tmp_path: Path, store: Store, server: MockOpenAIServer
) -> None:
    """A generation task and a multiple-choice task (loglikelihood requests: sent per doc,
    so they go through the work units like any item) on a model behind the mock."""
    docs = [
        {"a": i, "b": i + 1, "answer": str(2 * i + 1 + (i % 4 == 0)), "gold": i % 3}
        for i in range(24)
    ]
    gen = tmp_path / "gen.yaml"
    gen.write_text(
        "task: add\ndataset_path: x\noutput_type: generate_until\n"
        "doc_to_text: 'What is {{a}} + {{b}}?'\ndoc_to_target: '{{answer}}'\n"
        "metric_list:\n  - metric: exact_match\n",
        encoding="utf-8",
    )
    mc = tmp_path / "mc.yaml"
    mc.write_text(
        "task: pick\ndataset_path: x\noutput_type: multiple_choice\n"
        "doc_to_text: 'Q: {{a}}\\nA:'\ndoc_to_choice: ['yes', 'No', 'maybe so']\n"
        "doc_to_target: gold\nmetric_list:\n  - metric: acc\n  - metric: acc_norm\n",
        encoding="utf-8",
    )
    for path in (gen, mc):
        runs = {
            name: run_task(
                load_task(path, docs=docs),
                model="openai-compatible/mock-lm",
                base_url=server.base_url,
                store=store,
                bootstrap_iters=100,
                progress=False,
                concurrency=4,
                **options,
            )
            for name, options in (("local", {}), ("ray", {"backend": "ray", "workers": 2}))
        }
        local, on_ray = runs["local"], runs["ray"]
        assert _backend(store, on_ray.run.id) == ("ray", 2)
        assert _backend(store, local.run.id) == ("local", None)
        assert store.runs.get(on_ray.run.id).status == "completed"
        assert len(_rows(store, on_ray.run.id)) == len(docs)
        assert _rows(store, on_ray.run.id) == _rows(store, local.run.id)
        assert on_ray.report["per_doc"] == local.report["per_doc"]
        assert on_ray.report["aggregate"] == local.report["aggregate"]
        assert store.work_units.remaining(on_ray.run.id) == 0
    # the generation task: 3 of 4 answers match (every fourth doc's answer is off by one)
    gen_runs = [r for r in store.runs.list() if r.info.name == "task add"]
    assert {r.summary.scorers["exact_match,none"].mean for r in gen_runs if r.summary} == {0.75}
    assert len(server.completion_requests) == 2 * len(docs)  # both runs called the model


# ------------------------------------------------------------------------ calibrate


@pytest.mark.usefixtures("local_ray")
def test_a_calibration_on_ray_gives_the_local_statistics(
    tmp_path: Path, store: Store, server: MockOpenAIServer
) -> None:
    """A judge on the mock (its score is in the answer it grades) against human labels."""
    rows = [
        {
            "id": f"i{k:02d}",
            "input": f"q{k}",
            "output": "0.9" if (k % 2 == 0) != (k in (3, 10)) else "0.1",
            "metadata": {"human": "yes" if k % 2 == 0 else "no"},
        }
        for k in range(30)
    ]
    data = tmp_path / "labels.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    judge = mock_judge(server.base_url)
    config = {
        "data": str(data),
        "label": "human",
        "label_map": {"yes": 1, "no": 0},
        "kind": "binary",
        "threshold": 0.5,
        "resamples": 200,
        "min": {"accuracy": 0.5},
    }
    local = calibrate(config, scorers=[judge], store=store, progress=False)
    on_ray = calibrate(config, scorers=[judge], store=store, progress=False, backend="ray")
    [cal_local], [cal_ray] = local.scorers, on_ray.scorers
    assert _backend(store, cal_ray.run_id) == ("ray", 2)
    assert _backend(store, cal_local.run_id) == ("local", None)
    assert _rows(store, cal_ray.run_id) == _rows(store, cal_local.run_id)
    assert len(_rows(store, cal_ray.run_id)) == 30
    assert cal_ray.statistics == cal_local.statistics
    assert cal_ray.statistics["accuracy"]["value"] == pytest.approx(28 / 30)
    assert cal_ray.confusion_matrix == cal_local.confusion_matrix
    assert cal_ray.passed and cal_local.passed and cal_ray.certificate is not None
    judged = [r for r in server.chat_requests if "GRADE" in json.dumps(r.body)]
    assert len(judged) == 60  # both runs asked the judge about every item


# ------------------------------------------------------------------------ optimize


class Kill(BaseException):
    """Stands in for SIGKILL/Ctrl-C: not an ``Exception``, so nothing may swallow it."""


def _optimize_config(tmp_path: Path) -> dict[str, Any]:
    data = {
        split: write_jsonl(tmp_path / f"{split}.jsonl", arithmetic_rows(n, start=start))
        for split, n, start in (("train", 6, 0), ("val", 4, 10), ("test", 4, 20))
    }
    return {
        "name": "arith",
        "candidate": {"instructions": "You solve arithmetic."},
        **data,
        "scorers": [{"type": "exact-match"}],
        "budget": {"max_metric_calls": 20},
        "concurrency": 4,
    }


def _models() -> dict[str, ScriptedModel]:
    """Deterministic task and reflection models (the task model is shipped to workers)."""
    return {
        "task_model": ScriptedModel(responder=task_reply, name="task"),
        "reflection_model": ScriptedModel(responder=reflection_reply, name="reflect"),
    }


def _steps(store: Store, optimization_id: str) -> list[tuple[str, str, float | None]]:
    return [
        (e.split, e.candidate_hash, e.mean_score)
        for e in store.optimizations.evaluations(optimization_id)
    ]


@pytest.mark.usefixtures("local_ray")
def test_an_optimization_on_ray_takes_the_same_steps_as_locally(
    tmp_path: Path, store: Store
) -> None:
    """The same seeded optimization twice: every evaluation batch (a stored run) on Ray
    scores what the local one scored, so GEPA takes the same steps to the same winner."""
    config = _optimize_config(tmp_path)
    results = {}
    for backend in ("local", "ray"):
        results[backend] = optimize(
            {**config, "run_dir": str(tmp_path / f"gepa-{backend}")},
            store=store,
            backend=backend,  # type: ignore[arg-type]
            **_models(),
        )
    local, on_ray = results["local"], results["ray"]
    assert on_ray.best_candidate == local.best_candidate
    assert on_ray.best_val_score == local.best_val_score == 1.0
    assert _steps(store, on_ray.optimization_id) == _steps(store, local.optimization_id)
    steps = {
        backend: store.optimizations.evaluations(result.optimization_id)
        for backend, result in results.items()
    }
    assert len(steps["ray"]) >= 3
    for ray_step, local_step in zip(steps["ray"], steps["local"], strict=True):
        if ray_step.run_id is None or local_step.run_id is None:
            continue
        assert _backend(store, ray_step.run_id) == ("ray", 2)
        assert _backend(store, local_step.run_id) == ("local", None)
        assert _rows(store, ray_step.run_id) == _rows(store, local_step.run_id)
        assert store.work_units.remaining(ray_step.run_id) == 0

    # killed after its first evaluations (locally), resumed on Ray: the same search
    def kill_after_the_seed(event: OptimizeEvent) -> None:
        if event.kind == "evaluated" and event.split == "train":  # type: ignore[union-attr]
            raise Kill

    with pytest.raises(Kill):
        optimize(
            {**config, "run_dir": str(tmp_path / "gepa-killed")},
            store=store,
            on_event=kill_after_the_seed,
            **_models(),
        )
    [killed] = [o for o in store.optimizations.list() if o.status == "interrupted"]
    existing = {r.info.id for r in store.runs.list()}
    resumed = resume_optimization(killed.id, store=store, backend="ray", **_models())
    assert resumed.status == "completed"
    assert resumed.best_candidate == local.best_candidate
    assert _steps(store, killed.id)[-1] == _steps(store, local.optimization_id)[-1]
    # evaluations the resume ran (a reused one points at the killed session's local run)
    new_runs = {e.run_id for e in store.optimizations.evaluations(killed.id)} - existing - {None}
    assert new_runs and {_backend(store, r) for r in new_runs if r} == {("ray", 2)}
