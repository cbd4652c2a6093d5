"""Tests for assay.messages.chat (reference §3.1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.messages.chat import (
    effective_role,
    extract_agent_response_messages,
    extract_input_messages,
    get_assistant_message,
    get_combined_system_prompt,
    get_conversation_history,
    get_reasoning,
    get_system_messages,
    get_text_content,
    get_user_message,
    input_texts,
    is_agent_input,
    is_agent_output,
    output_texts,
    text_of,
)
from assay.testing.runs import create_agent_test_run, create_test_message, create_test_run

CASES_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "scorer_cases.json"


def db_message(role: str, content: Any) -> dict[str, Any]:
    return {"id": "m", "role": role, "content": content, "createdAt": "2024-01-01T00:00:00.000Z"}


def parts_message(role: str, *texts: str, **content_extra: Any) -> dict[str, Any]:
    content = {"format": 2, "parts": [{"type": "text", "text": t} for t in texts]}
    content.update(content_extra)
    return db_message(role, content)


def signal(
    content_metadata: Any = None, top_type: str | None = None, text: str = "hi"
) -> dict[str, Any]:
    content: dict[str, Any] = {"format": 2, "parts": [{"type": "text", "text": text}]}
    if content_metadata is not None:
        content["metadata"] = content_metadata
    message = db_message("signal", content)
    if top_type is not None:
        message["type"] = top_type
    return message


# --- get_text_content -----------------------------------------------------------------------


class TestGetTextContent:
    def test_string_content(self) -> None:
        assert get_text_content({"role": "user", "content": "hello"}) == "hello"

    def test_empty_string_content_is_returned_as_is(self) -> None:
        assert get_text_content({"role": "user", "content": ""}) == ""

    def test_part_list_uses_last_text_part(self) -> None:
        msg = {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "first"},
                {"type": "image", "url": "x"},
                {"type": "text", "text": "last"},
                {"type": "tool-call", "toolName": "t"},
            ],
        }
        assert get_text_content(msg) == "last"

    def test_part_list_without_text_parts(self) -> None:
        assert get_text_content({"content": [{"type": "image"}]}) == ""
        assert get_text_content({"content": []}) == ""

    def test_part_list_last_text_part_without_text(self) -> None:
        assert (
            get_text_content({"content": [{"type": "text", "text": "a"}, {"type": "text"}]}) == ""
        )

    def test_legacy_content_content_wins_over_parts(self) -> None:
        msg = parts_message("assistant", "from parts", content="flat")
        assert get_text_content(msg) == "flat"

    def test_empty_legacy_content_falls_through_to_text(self) -> None:
        msg = db_message("assistant", {"content": "", "text": "t", "parts": []})
        assert get_text_content(msg) == "t"

    def test_parts_last_text_part(self) -> None:
        msg = parts_message("assistant", "one", "two", content="")
        assert get_text_content(msg) == "two"

    def test_parts_without_text(self) -> None:
        msg = db_message("assistant", {"format": 2, "parts": [{"type": "step-start"}]})
        assert get_text_content(msg) == ""

    def test_no_content(self) -> None:
        assert get_text_content({"role": "assistant"}) == ""
        assert get_text_content({"role": "assistant", "content": None}) == ""
        assert get_text_content(db_message("assistant", {"format": 2})) == ""

    def test_non_mapping_message(self) -> None:
        assert get_text_content("just a string") == ""

    def test_none_message_raises(self) -> None:
        with pytest.raises(ValueError, match="cannot be null"):
            get_text_content(None)

    def test_create_test_message(self) -> None:
        assert get_text_content(create_test_message("hello there", "user")) == "hello there"


# --- text_of --------------------------------------------------------------------------------


class TestTextOf:
    def test_string(self) -> None:
        assert text_of("x") == "x"
        assert text_of("") is None

    def test_list_last_text_part(self) -> None:
        value = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, "junk"]
        assert text_of(value) == "b"
        assert text_of([{"type": "text", "text": 3}]) is None
        assert text_of([]) is None

    def test_list_last_text_part_may_be_empty(self) -> None:
        # Unlike a bare string, an empty last text part is returned as ''.
        assert text_of([{"type": "text", "text": "a"}, {"type": "text", "text": ""}]) == ""

    def test_dict_content_then_text_then_body_then_parts(self) -> None:
        assert text_of({"content": "c", "text": "t", "body": "b"}) == "c"
        assert text_of({"content": "", "text": "t", "body": "b"}) == "t"
        assert text_of({"text": "", "body": "b", "parts": [{"type": "text", "text": "p"}]}) == "b"
        assert text_of({"parts": [{"type": "text", "text": "p"}]}) == "p"
        assert text_of({"other": 1}) is None

    def test_nested_mastra_message(self) -> None:
        assert text_of(parts_message("user", "a", "b")) == "b"
        assert text_of(create_test_message("flat", "user")) == "flat"

    def test_other_values(self) -> None:
        assert text_of(None) is None
        assert text_of(42) is None


# --- effective_role -------------------------------------------------------------------------


class TestEffectiveRole:
    def test_plain_roles(self) -> None:
        assert effective_role({"role": "user"}) == "user"
        assert effective_role({"role": "tool"}) == "tool"
        assert effective_role({"role": 5}) is None
        assert effective_role({}) is None
        assert effective_role(None) is None

    def test_signal_tag_name_first(self) -> None:
        msg = signal({"signal": {"tagName": "user", "type": "assistant"}}, top_type="system")
        assert effective_role(msg) == "user"

    def test_signal_type_second(self) -> None:
        msg = signal({"signal": {"type": "assistant"}}, top_type="system")
        assert effective_role(msg) == "assistant"

    def test_signal_top_level_type_last(self) -> None:
        assert effective_role(signal({"signal": {}}, top_type="user")) == "user"
        assert effective_role(signal(None, top_type="user")) == "user"

    def test_signal_without_any_role(self) -> None:
        assert effective_role(signal({"signal": {"tagName": 3}})) is None


# --- get_user_message -----------------------------------------------------------------------


class TestGetUserMessage:
    def test_string(self) -> None:
        assert get_user_message("hello") == "hello"

    def test_agent_input_first_user_message(self) -> None:
        run = create_agent_test_run(
            input_messages=[
                create_test_message("sys", "system", id="s"),
                create_test_message("first", "user", id="u1"),
                create_test_message("second", "user", id="u2"),
            ],
            output=[],
        )
        assert get_user_message(run["input"]) == "first"

    def test_signal_user_message(self) -> None:
        msg = signal({"signal": {"tagName": "user"}}, text="from signal")
        assert get_user_message({"inputMessages": [msg]}) == "from signal"

    def test_first_user_message_without_text_falls_through(self) -> None:
        empty = db_message("user", {"format": 2, "parts": []})
        later = create_test_message("later", "user")
        # Only the first user message is considered; then `messages`, then `prompt`.
        assert get_user_message({"inputMessages": [empty, later], "prompt": "p"}) == "p"
        assert get_user_message({"inputMessages": [empty, later]}) is None

    def test_messages_key(self) -> None:
        value = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]}
        assert get_user_message(value) == "q"

    def test_openai_content_parts(self) -> None:
        msg = {
            "role": "user",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        }
        assert get_user_message({"messages": [msg]}) == "b"

    def test_prompt_text_content_input_user_order(self) -> None:
        assert get_user_message({"prompt": "p", "text": "t"}) == "p"
        assert get_user_message({"text": "t", "content": "c"}) == "t"
        assert get_user_message({"content": "c", "input": "i"}) == "c"
        assert get_user_message({"input": {"text": "i"}, "user": "u"}) == "i"
        assert get_user_message({"user": [{"type": "text", "text": "u"}]}) == "u"

    def test_prompt_empty_string_is_kept(self) -> None:
        assert get_user_message({"prompt": "", "text": "t"}) == ""

    def test_unrecognised(self) -> None:
        assert get_user_message({"foo": "bar"}) is None
        assert get_user_message(None) is None
        assert get_user_message(12) is None

    def test_bare_list_yields_none(self) -> None:
        # The legacy createTestRun input is a bare list; the reference returns undefined.
        assert get_user_message(create_test_run("q", "a")["input"]) is None


# --- get_assistant_message ------------------------------------------------------------------


class TestGetAssistantMessage:
    def test_string(self) -> None:
        assert get_assistant_message("out") == "out"

    def test_list_uses_last_assistant_with_text(self) -> None:
        output = [
            create_test_message("first", "assistant", id="a1"),
            create_test_message("second", "assistant", id="a2"),
            db_message(
                "assistant",
                {"format": 2, "parts": [{"type": "tool-invocation", "toolInvocation": {}}]},
            ),
            create_test_message("user text", "user", id="u"),
        ]
        assert get_assistant_message(output) == "second"

    def test_list_signal_assistant(self) -> None:
        msg = signal({"signal": {"type": "assistant"}}, text="signalled")
        assert get_assistant_message([msg]) == "signalled"

    def test_list_without_assistant_text(self) -> None:
        assert get_assistant_message([create_test_message("q", "user")]) is None
        assert get_assistant_message([]) is None

    def test_openai_list(self) -> None:
        output = [
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
            {"role": "tool", "tool_call_id": "c", "content": "{}"},
            {"role": "assistant", "content": "final"},
        ]
        assert get_assistant_message(output) == "final"

    def test_dict_text_and_content(self) -> None:
        assert get_assistant_message({"text": "t", "content": "c"}) == "t"
        assert get_assistant_message({"role": "assistant", "text": ""}) == ""
        assert get_assistant_message({"content": "c"}) == "c"
        assert get_assistant_message(create_test_run("q", "legacy")["output"]) == "legacy"

    def test_dict_structured_content(self) -> None:
        assert get_assistant_message(parts_message("assistant", "x", "y")) == "y"
        assert get_assistant_message({"content": [{"type": "text", "text": "z"}]}) == "z"
        # content of the content: {content: {content: {content: 'deep'}}}
        assert get_assistant_message({"content": {"content": {"content": "deep"}}}) == "deep"
        assert get_assistant_message({"content": {"format": 2, "parts": []}}) is None

    def test_dict_assistant_without_content(self) -> None:
        assert get_assistant_message({"role": "assistant"}) is None

    def test_dict_other_role(self) -> None:
        assert get_assistant_message({"role": "user", "text": "t"}) is None
        assert get_assistant_message(None) is None


# --- get_reasoning --------------------------------------------------------------------------


class TestGetReasoning:
    def test_content_reasoning_string(self) -> None:
        msg = parts_message("assistant", "answer", reasoning="because")
        assert get_reasoning([msg]) == "because"

    def test_reasoning_parts_details_and_plain(self) -> None:
        content = {
            "format": 2,
            "parts": [
                {
                    "type": "reasoning",
                    "details": [
                        {"type": "text", "text": "step 1, "},
                        {"type": "redacted", "data": "x"},
                        {"type": "text", "text": "step 2"},
                    ],
                },
                {"type": "text", "text": "answer"},
                {"type": "reasoning", "reasoning": "plain"},
                {"type": "reasoning", "reasoning": ""},
            ],
        }
        assert get_reasoning([db_message("assistant", content)]) == "step 1, step 2\nplain"

    def test_uses_first_assistant_only(self) -> None:
        first = create_test_message("no reasoning", "assistant", id="a1")
        second = parts_message("assistant", "x", reasoning="late")
        assert get_reasoning([create_test_message("q", "user"), first, second]) is None
        assert get_reasoning([second, first]) == "late"

    def test_no_reasoning(self) -> None:
        assert get_reasoning([]) is None
        assert get_reasoning(None) is None
        assert get_reasoning("text") is None
        content = {"format": 2, "parts": [{"type": "reasoning", "details": []}]}
        assert get_reasoning([db_message("assistant", content)]) is None

    def test_openai_reasoning_content(self) -> None:
        msg = {"role": "assistant", "content": "4", "reasoning_content": "2+2"}
        assert get_reasoning([msg]) == "2+2"
        assert get_reasoning([{"role": "assistant", "content": "4"}]) is None


# --- system messages ------------------------------------------------------------------------


class TestSystemMessages:
    def test_all_sources_in_order(self) -> None:
        run_input = {
            "systemMessages": [
                {"role": "system", "content": "Be nice."},
                {"role": "system", "content": [{"type": "text", "text": "A"}, {"type": "text"}]},
                {"role": "system", "content": ""},
                {"role": "system", "content": 5},
            ],
            "inputMessages": [
                create_test_message("from input", "system"),
                create_test_message("user", "user"),
            ],
            "messages": [{"role": "system", "content": "from messages"}],
            "taggedSystemMessages": {
                "memory": [{"role": "system", "content": "remember"}, {"role": "system"}],
                "bad": "not a list",
            },
        }
        expected = ["Be nice.", "A ", "from input", "from messages", "remember"]
        assert get_system_messages(run_input) == expected
        assert get_combined_system_prompt(run_input) == "\n\n".join(expected)

    def test_parts_joined_by_space(self) -> None:
        run_input = {
            "systemMessages": [
                {
                    "content": [
                        {"type": "text", "text": "a"},
                        {"type": "x"},
                        {"type": "text", "text": "b"},
                    ]
                }
            ]
        }
        assert get_system_messages(run_input) == ["a b"]

    def test_signal_system_is_not_collected(self) -> None:
        # The system filter uses the raw role.
        msg = signal({"signal": {"tagName": "system"}}, text="sig")
        assert get_system_messages({"inputMessages": [msg]}) == []

    def test_non_mapping(self) -> None:
        assert get_system_messages("x") == []
        assert get_combined_system_prompt(None) == ""


# --- conversation history -------------------------------------------------------------------


class TestConversationHistory:
    def remembered(self) -> list[dict[str, Any]]:
        return [
            create_test_message(
                f"  message {i}  ", "user" if i % 2 == 0 else "assistant", id=str(i)
            )
            for i in range(12)
        ]

    def test_last_ten_by_default(self) -> None:
        run = create_agent_test_run(output=[], remembered_messages=self.remembered())
        history = get_conversation_history(run["input"])
        assert history is not None
        lines = history.split("\n")
        assert len(lines) == 10
        assert lines[0] == "user: message 2"
        assert lines[-1] == "assistant: message 11"

    def test_max_messages(self) -> None:
        run = create_agent_test_run(output=[], remembered_messages=self.remembered())
        assert get_conversation_history(run["input"], max_messages=2) == (
            "user: message 10\nassistant: message 11"
        )
        assert get_conversation_history(run["input"], max_messages=None) == (
            get_conversation_history(run["input"])
        )
        assert get_conversation_history(run["input"], max_messages=0) is None
        assert get_conversation_history(run["input"], max_messages=-1) is None

    def test_skips_empty_and_roleless(self) -> None:
        remembered = [
            create_test_message("   ", "user", id="a"),
            {"id": "b", "content": "no role", "createdAt": "x"},
            "junk",
            signal({"signal": {"tagName": "user"}}, text="sig"),
        ]
        run = create_agent_test_run(output=[], remembered_messages=remembered)
        assert get_conversation_history(run["input"]) == "user: sig"

    def test_empty_or_not_agent(self) -> None:
        run = create_agent_test_run(output=[])
        assert get_conversation_history(run["input"]) is None
        assert get_conversation_history({"rememberedMessages": self.remembered()}) is None
        assert get_conversation_history("text") is None


# --- extract_* ------------------------------------------------------------------------------


class TestExtract:
    def test_extract_input_messages_all_roles(self) -> None:
        run = create_agent_test_run(
            input_messages=[create_test_message("s", "system"), create_test_message("u", "user")],
            output=[],
        )
        assert extract_input_messages(run["input"]) == ["s", "u"]

    def test_extract_input_messages_missing(self) -> None:
        assert extract_input_messages(None) == []
        assert extract_input_messages({"inputMessages": None}) == []
        assert extract_input_messages("x") == []

    def test_extract_agent_response_messages(self) -> None:
        output = [
            create_test_message("a1", "assistant"),
            create_test_message("u", "user"),
            signal({"signal": {"tagName": "assistant"}}, text="sig"),
            {"role": "assistant", "content": [{"type": "text", "text": "a2"}]},
        ]
        # Raw role: the signal message is not an assistant message here.
        assert extract_agent_response_messages(output) == ["a1", "a2"]
        assert extract_agent_response_messages(None) == []


# --- shape predicates -----------------------------------------------------------------------


class TestPredicates:
    def test_is_agent_input(self) -> None:
        assert is_agent_input(create_agent_test_run(output=[])["input"])
        assert not is_agent_input({"inputMessages": []})
        assert not is_agent_input(create_agent_test_run(output=[], input_messages=None)["input"])
        bad = create_agent_test_run(output=[])["input"] | {"taggedSystemMessages": []}
        assert not is_agent_input(bad)
        assert not is_agent_input([])

    def test_is_agent_output(self) -> None:
        assert is_agent_output([create_test_message("x", "assistant")])
        assert is_agent_output([])
        assert not is_agent_output([{"role": "assistant", "content": "x"}])
        msg = create_test_message("x", "assistant")
        del msg["createdAt"]
        assert not is_agent_output([msg])
        assert not is_agent_output({"id": "x"})


# --- input_texts / output_texts -------------------------------------------------------------


class TestInputTexts:
    def test_plain(self) -> None:
        assert input_texts("hello") == ["hello"]
        assert input_texts("") == [""]
        assert input_texts(None) == []

    def test_agent_input_all_roles(self) -> None:
        run = create_agent_test_run(
            input_messages=[
                create_test_message("system prompt", "system"),
                create_test_message("question", "user"),
                create_test_message("", "user"),
            ],
            output=[],
        )
        assert input_texts(run["input"]) == ["system prompt", "question", ""]

    def test_partial_agent_input(self) -> None:
        assert input_texts({"inputMessages": [{"role": "user", "content": "q"}]}) == ["q"]

    def test_null_input_messages_raises(self) -> None:
        run = create_agent_test_run(input_messages=None, output=None)
        with pytest.raises(ValueError, match="Inputs cannot be null or undefined"):
            input_texts(run["input"])

    def test_non_list_input_messages_raises(self) -> None:
        with pytest.raises(ValueError, match="inputMessages"):
            input_texts({"inputMessages": "text"})

    def test_null_message_raises(self) -> None:
        with pytest.raises(ValueError):
            input_texts({"inputMessages": [None]})
        with pytest.raises(ValueError):
            input_texts([None])

    def test_message_lists(self) -> None:
        messages = [
            {"role": "system", "content": "s"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            "bare",
            create_test_message("db", "user"),
        ]
        assert input_texts(messages) == ["s", "b", "bare", "db"]
        assert input_texts({"messages": messages}) == ["s", "b", "bare", "db"]

    def test_legacy_test_run_input(self) -> None:
        assert input_texts(create_test_run("question", "answer")["input"]) == ["question"]

    def test_dicts(self) -> None:
        assert input_texts({"text": "t", "content": "c"}) == ["t"]
        assert input_texts({"content": "c"}) == ["c"]
        assert input_texts({"content": [{"type": "text", "text": "p"}]}) == ["p"]
        assert input_texts({"content": {"parts": [{"type": "text", "text": "q"}]}}) == ["q"]
        assert input_texts({"prompt": "p"}) == ["p"]

    def test_unsupported(self) -> None:
        with pytest.raises(ValueError, match="Unsupported"):
            input_texts({"foo": 1})
        with pytest.raises(ValueError, match="Unsupported"):
            input_texts(3)


class TestOutputTexts:
    def test_plain(self) -> None:
        assert output_texts("out") == ["out"]
        assert output_texts(None) == []

    def test_every_message_not_only_assistant(self) -> None:
        output = [
            create_test_message("one", "assistant", id="1"),
            create_test_message("two", "user", id="2"),
            create_test_message("three", "assistant", id="3"),
        ]
        assert output_texts(output) == ["one", "two", "three"]

    def test_openai_transcript_skips_tool_results_by_default(self) -> None:
        output = [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 20}'},
            {"role": "assistant", "content": [{"type": "text", "text": "It is 20."}]},
        ]
        assert output_texts(output) == ["", "It is 20."]
        assert output_texts(output, include_tool_messages=True) == ["", '{"temp": 20}', "It is 20."]

    def test_legacy_output_dict(self) -> None:
        assert output_texts(create_test_run("q", "answer")["output"]) == ["answer"]
        assert output_texts({"role": "assistant", "content": "c"}) == ["c"]
        assert output_texts(parts_message("assistant", "x", "y")) == ["y"]

    def test_null_message_raises(self) -> None:
        with pytest.raises(ValueError):
            output_texts([create_test_message("x", "assistant"), None])

    def test_unsupported(self) -> None:
        with pytest.raises(ValueError, match="Unsupported"):
            output_texts({"steps": []})


def _build_messages(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        create_test_message(
            m["content"], m["role"], id=f"m{i}", tool_invocations=m.get("toolInvocations")
        )
        for i, m in enumerate(raw)
    ]


def test_fixture_inputs_and_outputs_roundtrip() -> None:
    """Every case built with createTestMessage semantics yields the case's raw texts."""
    cases = json.loads(CASES_PATH.read_text())
    checked = 0
    for case in cases:
        raw_input = (case.get("input") or {}).get("inputMessages")
        raw_output = case.get("output")
        if not isinstance(raw_input, list) or not isinstance(raw_output, list):
            continue
        run = create_agent_test_run(
            input_messages=_build_messages(raw_input), output=_build_messages(raw_output)
        )
        assert input_texts(run["input"]) == [m["content"] for m in raw_input], case["id"]
        assert output_texts(run["output"]) == [m["content"] for m in raw_output], case["id"]
        checked += 1
    assert checked > 50


def test_fixture_null_inputs_case_raises() -> None:
    cases = {c["id"]: c for c in json.loads(CASES_PATH.read_text())}
    case = cases["completeness/null-inputs"]
    run = create_agent_test_run(
        input_messages=case["input"]["inputMessages"], output=case["output"]
    )
    with pytest.raises(ValueError):
        input_texts(run["input"])
