"""Chat templates with lm-eval's semantics (issue 28): the prompt a chat model receives for
doc 0 of real tasks equals lm-eval 0.4.13's, with ``apply_chat_template``,
``fewshot_as_multiturn`` and ``system_instruction``.

``lmeval_chat_cases.json`` holds lm-eval's own rendering (``make_chat_cases.py``); one test
also renders the same cases with the installed lm-eval and skips only when it is not
importable.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from assay.operations.tasks import TaskRunError, load_task, run_task
from assay.tasks.chat import ChatOptions, Message, multiturn_to_singleturn, to_text
from assay.tasks.config import TaskConfig
from assay.tasks.task import Task
from assay.tasks.yaml_loader import load_task_config
from assay.testing.scripted import ScriptedModel

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lmeval"
CASES: list[dict[str, Any]] = json.loads(
    (FIXTURES / "lmeval_chat_cases.json").read_text(encoding="utf-8")
)["cases"]
IDS = [
    f"{c['task']}-{'chat' if c['options']['apply_chat_template'] else 'text'}"
    f"{'-multiturn' if c['options']['fewshot_as_multiturn'] else ''}"
    f"{'-system' if c['options']['system_instruction'] else ''}"
    for c in CASES
]


def assay_prompt(case: dict[str, Any]) -> Any:
    config = load_task_config(FIXTURES / "task_code" / case["path"])
    assert isinstance(config, TaskConfig)
    splits = case["splits"]
    eval_split = "test" if "test" in splits else "validation"
    pool = [doc for name, docs in splits.items() if name != eval_split for doc in docs]
    task = Task(config, docs=splits[eval_split], fewshot_docs=pool or None)
    return task.contexts(chat=ChatOptions(**case["options"]))[0].context


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_doc_0_prompt_equals_lmevals(case: dict[str, Any]) -> None:
    assert assay_prompt(case) == case["prompt"]


def test_the_cases_cover_five_tasks_few_shot_and_gen_prefix() -> None:
    assert len({c["task"] for c in CASES}) >= 5
    chats = [c["prompt"] for c in CASES if c["options"]["apply_chat_template"]]
    assert any(sum(m["role"] == "assistant" for m in p) >= 5 for p in chats)  # few-shot turns
    assert any(p[-1]["role"] == "assistant" for p in chats)  # gen_prefix
    assert any(p[0]["role"] == "system" for p in chats)


@pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="lm-eval is not installed")
def test_lmevals_own_rendering_today(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        import lm_eval.api.task  # noqa: F401
    except ImportError as exc:  # installed without the dependencies its tasks need
        pytest.skip(f"lm-eval is not importable: {exc}")
    spec = importlib.util.spec_from_file_location(
        "make_chat_cases", FIXTURES / "make_chat_cases.py"
    )
    assert spec is not None and spec.loader is not None
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    for case in CASES:
        live = maker.lmeval_prompt(
            FIXTURES / "task_code" / case["path"], case["splits"], case["options"]
        )
        assert live == case["prompt"], case["task"]
        assert assay_prompt(case) == live


def test_a_chat_model_receives_the_messages(tmp_path: Path) -> None:
    case = next(
        c
        for c in CASES
        if c["task"] == "gsm8k"
        and c["options"]["apply_chat_template"]
        and c["options"]["system_instruction"]
    )
    task = load_task(FIXTURES / "task_code" / case["path"], docs=case["splits"]["test"][:1])
    task = Task(task.config, docs=case["splits"]["test"][:1], fewshot_docs=case["splits"]["train"])
    model = ScriptedModel(script=["The answer is 10.\n#### 10"])
    run_task(task, model=model, stored=False, progress=False, chat=ChatOptions(**case["options"]))
    sent = [m.model_dump() for m in model.calls[0].messages]
    assert sent == case["prompt"]


def test_without_a_chat_template_the_model_gets_one_user_message() -> None:
    case = next(c for c in CASES if c["task"] == "triviaqa")
    task = Task(
        load_task_config(FIXTURES / "task_code" / case["path"]),  # type: ignore[arg-type]
        docs=case["splits"]["validation"][:1],
    )
    model = ScriptedModel(script=["City 1"])
    run_task(task, model=model, stored=False, progress=False)
    assert [m.role for m in model.calls[0].messages] == ["user"]
    assert model.calls[0].messages[0].content == "Question: Which city is number 1?\nAnswer:"


def test_multiturn_without_a_chat_template_is_refused() -> None:
    with pytest.raises(ValueError, match="needs apply_chat_template"):
        ChatOptions(apply_chat_template=False, fewshot_as_multiturn=True)
    assert ChatOptions(apply_chat_template=True).multiturn is True  # lm-eval's default
    assert ChatOptions(apply_chat_template=True, fewshot_as_multiturn=False).multiturn is False


def test_a_chat_template_on_a_loglikelihood_task_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mc.yaml"
    path.write_text(
        "task: mc\ndataset_path: x\noutput_type: multiple_choice\ndoc_to_text: '{{q}}'\n"
        "doc_to_choice: ['a', 'b']\ndoc_to_target: 0\n"
    )
    task = load_task(path, docs=[{"q": "?"}])
    with pytest.raises(TaskRunError, match="multiple_choice: a chat template applies to"):
        run_task(
            task,
            predictions={0: [[-1.0, True], [-2.0, False]]},
            stored=False,
            progress=False,
            chat=ChatOptions(apply_chat_template=True),
        )


def test_singleturn_keeps_system_and_gen_prefix_apart() -> None:
    messages = [
        Message("system", "sys"),
        Message("user", "Q1", " "),
        Message("assistant", "A1", "\n\n"),
        Message("user", "Q2", " "),
        Message("assistant", "Prefix"),
    ]
    assert multiturn_to_singleturn(messages) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Q1 A1\n\nQ2"},
        {"role": "assistant", "content": "Prefix"},
    ]
    assert to_text(messages) == "sysQ1 A1\n\nQ2 Prefix"
