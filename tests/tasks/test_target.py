"""Task runs on a live model: the OpenAI-compatible client against a real mock server.

The mock's ``/v1/completions`` is deterministic (a token's logprob is -0.25 per character,
a token is greedy when it has no capital letter; see ``assay.testing.openai_server``), so
the expected per-doc values below are computed by hand from the continuations, and the
chat route answers generation requests from a responder that reads the prompt.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.models.providers import reset_resolved_models
from assay.models.reliability import reset_limiters
from assay.models.resolve import UnknownModelError
from assay.operations.tasks import load_task, run_task, task_items
from assay.tasks.target import TaskTarget, cut_at_stop
from assay.testing.openai_server import MockOpenAIServer, MockReply, mock_tokens
from tests.optional import required_module

MODEL = "openai-compatible/mock-lm"


@pytest.fixture(autouse=True)
def _fresh_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    reset_limiters()
    reset_resolved_models()
    monkeypatch.setenv("ASSAY_CACHE_PATH", str(tmp_path / "cache.db"))
    yield
    reset_limiters()
    reset_resolved_models()


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer() as running:
        yield running


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    return write(path, "".join(json.dumps(r) + "\n" for r in rows))


def mock_ll(continuation: str) -> float:
    return sum(-0.25 * len(token) for token in mock_tokens(continuation))


def test_multiple_choice_on_a_model(tmp_path: Path, server: MockOpenAIServer) -> None:
    jsonl(
        tmp_path / "mc.jsonl",
        [
            {"q": "Pick", "choices": ["a long answer", "B"], "gold": 0},
            {"q": "Pick", "choices": ["x", "yy", "Zzz"], "gold": 2},
        ],
    )
    yaml = write(
        tmp_path / "mc.yaml",
        "task: mc\ndataset_path: mc.jsonl\ntest_split: train\noutput_type: multiple_choice\n"
        'doc_to_text: "Q: {{q}}\\nA:"\ndoc_to_choice: choices\ndoc_to_target: gold\n'
        "metric_list:\n  - metric: acc\n  - metric: acc_norm\n",
    )
    report = run_task(
        load_task(yaml), model=MODEL, base_url=server.base_url, stored=False, progress=False
    ).report
    assert report["errors"] == []
    expected_acc, expected_norm = [], []
    for choices, gold in ((["a long answer", "B"], 0), (["x", "yy", "Zzz"], 2)):
        lls = [mock_ll(" " + c) for c in choices]
        expected_acc.append(float(lls.index(max(lls)) == gold))
        normed = [ll / len(c) for ll, c in zip(lls, choices, strict=True)]
        expected_norm.append(float(normed.index(max(normed)) == gold))
    assert report["aggregate"]["acc,none"] == pytest.approx(sum(expected_acc) / 2)
    assert report["aggregate"]["acc_norm,none"] == pytest.approx(sum(expected_norm) / 2)
    first = report["per_doc"][0]["filtered"]
    assert first == [[mock_ll(" a long answer"), True], [mock_ll(" B"), False]]
    prompts = [p for r in server.completion_requests for p in (r.body or {})["prompt"]]
    assert "Q: Pick\nA: a long answer" in prompts


def test_loglikelihood_and_rolling_on_a_model(tmp_path: Path, server: MockOpenAIServer) -> None:
    jsonl(
        tmp_path / "ll.jsonl",
        [{"ctx": "The cat", "next": " sat down"}, {"ctx": "A", "next": " Dog"}],
    )
    ll_yaml = write(
        tmp_path / "ll.yaml",
        "task: ll\ndataset_path: ll.jsonl\ntest_split: train\noutput_type: loglikelihood\n"
        "doc_to_text: ctx\ndoc_to_target: next\n",
    )
    report = run_task(
        load_task(ll_yaml), model=MODEL, base_url=server.base_url, stored=False, progress=False
    ).report
    lls = [mock_ll(" sat down"), mock_ll(" Dog")]
    assert report["aggregate"]["perplexity,none"] == pytest.approx(math.exp(-sum(lls) / 2))
    assert report["aggregate"]["acc,none"] == pytest.approx(0.5)  # " Dog" is not greedy

    jsonl(tmp_path / "text.jsonl", [{"page": "the cat sat"}, {"page": "a dog ran far"}])
    rolling_yaml = write(
        tmp_path / "rolling.yaml",
        "task: rolling\ndataset_path: text.jsonl\ntest_split: train\n"
        "output_type: loglikelihood_rolling\ndoc_to_target: page\n",
    )
    report = run_task(
        load_task(rolling_yaml), model=MODEL, base_url=server.base_url, stored=False, progress=False
    ).report
    rolled = [mock_ll(" cat sat"), mock_ll(" dog ran far")]  # the first token has no logprob
    words = [3, 4]
    assert report["aggregate"]["word_perplexity,none"] == pytest.approx(
        math.exp(-sum(rolled) / sum(words))
    )
    assert report["aggregate"]["bits_per_byte,none"] == pytest.approx(
        -sum(rolled) / (len("the cat sat") + len("a dog ran far")) / math.log(2)
    )


def test_generation_with_repeats_filters_and_a_scorer_metric(
    tmp_path: Path, server: MockOpenAIServer
) -> None:
    """Sampled repeats (n), stop sequences, majority vote, and an assay scorer (a code
    scorer) in the task's metric_list next to lm-eval's exact_match."""
    jsonl(
        tmp_path / "math.jsonl",
        [{"question": "1+1", "answer": "2"}, {"question": "2+2", "answer": "4"}],
    )
    yaml = write(
        tmp_path / "gen.yaml",
        "task: gen\ndataset_path: math.jsonl\ntest_split: train\noutput_type: generate_until\n"
        'doc_to_text: "Q: {{question}}\\nA:"\ndoc_to_target: answer\nrepeats: 3\n'
        'generation_kwargs:\n  until: ["\\n\\n"]\n  do_sample: true\n  temperature: 0.7\n'
        "filter_list:\n"
        "  - name: maj\n    filter:\n      - function: regex\n        regex_pattern: '(\\d+)'\n"
        "      - function: majority_vote\n      - function: take_first\n"
        "  - name: first\n    filter:\n      - function: take_first\n"
        "metric_list:\n  - metric: exact_match\n  - metric: content-similarity\n",
    )

    def answer(body: dict[str, Any]) -> MockReply:
        prompt = body["messages"][-1]["content"]
        if "1+1" in prompt:
            return MockReply(samples=["2\n\nignored", "3", "2"])
        return MockReply(samples=["5", "4", "5"])

    server.responder = answer
    outcome = run_task(
        load_task(yaml), model=MODEL, base_url=server.base_url, stored=False, progress=False
    )
    report = outcome.report
    assert report["errors"] == []
    body = server.chat_requests[0].body or {}
    assert body["n"] == 3 and body["stop"] == ["\n\n"] and body["temperature"] == 0.7
    rows = {(r["doc"], r["filter"]): r for r in report["per_doc"]}
    assert rows[(0, "maj")]["filtered"] == "2"
    assert rows[(1, "maj")]["filtered"] == "5"
    assert rows[(0, "first")]["filtered"] == "2"  # cut at the stop sequence
    assert report["aggregate"]["exact_match,maj"] == pytest.approx(0.5)
    assert report["aggregate"]["exact_match,first"] == pytest.approx(0.5)
    assert "content-similarity,first" in report["aggregate"]
    summary = outcome.run.summary.scorers
    assert summary["content-similarity,maj"].mean == pytest.approx(0.5)


def test_a_model_without_loglikelihood_is_an_item_error(
    tmp_path: Path, server: MockOpenAIServer
) -> None:
    jsonl(tmp_path / "mc.jsonl", [{"q": "Pick", "choices": ["a", "b"], "gold": 0}])
    yaml = write(
        tmp_path / "mc.yaml",
        "task: mc\ndataset_path: mc.jsonl\ntest_split: train\noutput_type: multiple_choice\n"
        "doc_to_text: q\ndoc_to_choice: choices\ndoc_to_target: gold\n",
    )
    server.completions = False  # an endpoint without /v1/completions cannot score
    report = run_task(
        load_task(yaml), model=MODEL, base_url=server.base_url, stored=False, progress=False
    ).report
    assert report["aggregate"] == {}
    assert len(report["errors"]) == 1 and "completions" in report["errors"][0]["error"]


def test_cut_at_stop() -> None:
    assert cut_at_stop("a\n\nb\nc", ["\n\n", "c"]) == "a"
    assert cut_at_stop("abc", []) == "abc"
    assert cut_at_stop("abc", ["", "z"]) == "abc"


def test_a_group_runs_its_tasks_and_aggregates_them(
    tmp_path: Path, server: MockOpenAIServer
) -> None:
    """Two multiple-choice subtasks (one by name, one by tag), micro-averaged by size."""
    for name, rows in (
        ("one", [{"q": "a", "choices": ["x", "Yy"], "gold": 0}]),
        (
            "two",
            [
                {"q": "b", "choices": ["x", "Yy"], "gold": 1},
                {"q": "c", "choices": ["x", "Yy"], "gold": 0},
                {"q": "d", "choices": ["x", "Yy"], "gold": 0},
            ],
        ),
    ):
        jsonl(tmp_path / f"{name}.jsonl", rows)
        write(
            tmp_path / f"{name}.yaml",
            f"task: mc_{name}\ntag: [mc_tag_{name}]\ndataset_path: {name}.jsonl\n"
            "test_split: train\noutput_type: multiple_choice\ndoc_to_text: q\n"
            "doc_to_choice: choices\ndoc_to_target: gold\nmetric_list:\n  - metric: acc\n",
        )
    group = write(
        tmp_path / "group.yaml",
        "group: mc_all\ntask: [mc_one, mc_tag_two]\naggregate_metric_list:\n"
        "  - metric: acc\n    weight_by_size: true\n",
    )
    from assay.operations.tasks import run_group

    outcome = run_group(group, model=MODEL, base_url=server.base_url, stored=False, progress=False)
    # " x" (-0.5, greedy) beats " Yy" (-0.75): gold 0 is right, gold 1 wrong
    assert outcome.tasks["mc_one"].report["aggregate"]["acc,none"] == 1.0
    assert outcome.tasks["mc_two"].report["aggregate"]["acc,none"] == pytest.approx(2 / 3)
    assert outcome.aggregate["acc,none"] == pytest.approx(3 / 4)  # micro: 3 of 4 docs


def test_multiple_choice_on_the_embedded_local_model() -> None:
    """The README's example: the local model scores each choice; the per-doc values are
    exactly its loglikelihoods of ``" " + choice`` after the prompt."""
    import asyncio

    from assay.models.resolve import resolve_model

    examples = Path(__file__).parents[2] / "examples" / "tasks"
    task = load_task(examples / "capitals.yaml")
    report = run_task(task, model="local/smollm2", stored=False, progress=False).report
    assert report["errors"] == []
    model = resolve_model("local/smollm2")
    for row, context in zip(report["per_doc"], task.contexts(), strict=True):
        choices = task.doc_to_choice(context.doc)
        direct = asyncio.run(
            model.loglikelihood([(str(context.context), f" {c}") for c in choices])  # type: ignore[attr-defined]
        )
        assert [pair[0] for pair in row["filtered"]] == pytest.approx([d.logprob for d in direct])
    acc = report["aggregate"]["acc,none"]
    assert 0.0 <= acc <= 1.0


def test_a_task_run_is_not_silently_resumed_as_another_target(tmp_path: Path) -> None:
    from assay.targets.resolve import TargetResolutionError, target_from_spec
    from assay.tasks.target import PredictionsTarget, TaskTarget

    task = load_task(Path(__file__).parents[2] / "examples" / "tasks" / "arith.yaml")
    for target in (
        TaskTarget(task, MODEL, base_url="http://127.0.0.1:9"),
        PredictionsTarget(task, {}),
    ):
        assert target.spec.kind == "task"
        with pytest.raises(TargetResolutionError, match="benchmark task"):
            target_from_spec(target.spec)


async def test_a_task_target_on_a_model_string_pickles_and_the_copy_answers(
    tmp_path: Path, server: MockOpenAIServer
) -> None:
    """What a Ray worker receives (``tasks run --backend ray``): the task and the model
    string, from which the worker builds its own client; a used target ships as well.
    Shipped with Ray's cloudpickle, as the Ray backend does (a task's loaders are local
    functions, which the standard pickle refuses)."""
    cloudpickle = _ray_cloudpickle()
    jsonl(tmp_path / "mc.jsonl", [{"q": "Pick", "choices": ["a long answer", "B"], "gold": 0}])
    yaml = write(
        tmp_path / "mc.yaml",
        "task: mc\ndataset_path: mc.jsonl\ntest_split: train\noutput_type: multiple_choice\n"
        'doc_to_text: "Q: {{q}}\\nA:"\ndoc_to_choice: choices\ndoc_to_target: gold\n',
    )
    task = load_task(yaml)
    target = TaskTarget(task, MODEL, base_url=server.base_url)
    [item] = task_items(task)
    first = await target.execute(item)
    copy = cloudpickle.loads(cloudpickle.dumps(target))
    assert (await copy.execute(item)).output == first.output
    assert first.output == [[mock_ll(" a long answer"), True], [mock_ll(" B"), False]]
    assert copy.spec == target.spec
    with pytest.raises(UnknownModelError):  # a bad model string still fails at once
        TaskTarget(task, "nope/x")


def _ray_cloudpickle() -> Any:
    """Ray's cloudpickle; without Ray the test is skipped, except under CI (the dev extra
    installs Ray, so its absence is a failure there)."""
    return required_module("ray.cloudpickle")
