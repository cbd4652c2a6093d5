"""Tests for assay.messages.tool_calls (reference §3.2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.messages.tool_calls import (
    ToolCallInfo,
    ToolCalls,
    all_tool_invocations,
    extract_tool_calls,
    extract_tool_results,
    extract_trajectory,
    merge_tool_invocations,
)
from assay.testing.runs import create_test_message, create_tool_invocation

CASES_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "scorer_cases.json"


def inv(
    call_id: str | None, name: str = "tool", state: str = "result", **extra: Any
) -> dict[str, Any]:
    invocation: dict[str, Any] = {
        "toolCallId": call_id,
        "toolName": name,
        "args": {},
        "state": state,
    }
    invocation.update(extra)
    return invocation


def part(invocation: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool-invocation", "toolInvocation": invocation}


def message(
    parts: list[dict[str, Any]] | None = None, legacy: list[Any] | None = None
) -> dict[str, Any]:
    content: dict[str, Any] = {
        "format": 2,
        "parts": [{"type": "text", "text": "x"}, *(parts or [])],
    }
    if legacy is not None:
        content["toolInvocations"] = legacy
    return {"id": "m", "role": "assistant", "content": content, "createdAt": "2024-01-01T00:00:00Z"}


def ids(invocations: list[dict[str, Any]]) -> list[Any]:
    return [i.get("toolCallId") for i in invocations]


def openai_call(call_id: str, name: str, arguments: Any = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- merge_tool_invocations -----------------------------------------------------------------


class TestMerge:
    def test_no_invocations(self) -> None:
        assert merge_tool_invocations(message()) == []
        assert merge_tool_invocations(None) == []
        assert merge_tool_invocations({"role": "assistant", "content": "text"}) == []

    def test_parts_only(self) -> None:
        assert ids(merge_tool_invocations(message([part(inv("a")), part(inv("b"))]))) == ["a", "b"]

    def test_legacy_only(self) -> None:
        assert ids(merge_tool_invocations(message(legacy=[inv("a"), inv("b")]))) == ["a", "b"]

    def test_parts_win_on_duplicate_ids(self) -> None:
        thrown = inv("a", state="output-error", errorText="boom")
        merged = merge_tool_invocations(message([part(thrown)], legacy=[inv("a", state="call")]))
        assert merged == [thrown]

    def test_legacy_only_inserted_before_next_shared_anchor(self) -> None:
        msg = message(
            [part(inv("p1")), part(inv("b")), part(inv("p2")), part(inv("d"))],
            legacy=[inv("a"), inv("b"), inv("c"), inv("d"), inv("e")],
        )
        assert ids(merge_tool_invocations(msg)) == ["p1", "a", "b", "p2", "c", "d", "e"]

    def test_anchor_behind_cursor_is_not_reused(self) -> None:
        # Parts order b, a; legacy order a, x, b. Anchor b (legacy index 2) flushes the
        # legacy-only x before it (a is in parts, so it is not flushed); anchor a (index 0) is
        # then behind the cursor and a is simply appended in parts order.
        msg = message([part(inv("b")), part(inv("a"))], legacy=[inv("a"), inv("x"), inv("b")])
        assert ids(merge_tool_invocations(msg)) == ["x", "b", "a"]

    def test_legacy_duplicate_ids_last_position_wins(self) -> None:
        msg = message([part(inv("a"))], legacy=[inv("a"), inv("x"), inv("a"), inv("y")])
        # Anchor position of "a" is 2 (JS Map keeps the last entry); x is inserted before it.
        assert ids(merge_tool_invocations(msg)) == ["x", "a", "y"]

    def test_legacy_without_id_is_kept(self) -> None:
        msg = message([part(inv("a"))], legacy=[inv(None, name="anon"), inv("a")])
        merged = merge_tool_invocations(msg)
        assert [i["toolName"] for i in merged] == ["anon", "tool"]

    def test_parts_without_id_do_not_anchor(self) -> None:
        msg = message([part(inv(None, name="p"))], legacy=[inv("a")])
        assert [i["toolName"] for i in merge_tool_invocations(msg)] == ["p", "tool"]

    def test_junk_entries_are_ignored_but_keep_positions(self) -> None:
        msg = message(
            [{"type": "tool-invocation"}, {"type": "tool-invocation", "toolInvocation": None}],
            legacy=[None, "junk", inv("a")],
        )
        assert ids(merge_tool_invocations(msg)) == ["a"]

    def test_does_not_mutate(self) -> None:
        msg = message([part(inv("b"))], legacy=[inv("a"), inv("b")])
        before = json.dumps(msg, sort_keys=True)
        merge_tool_invocations(msg)
        assert json.dumps(msg, sort_keys=True) == before

    def test_openai_tool_calls(self) -> None:
        msg = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                openai_call("c1", "search", '{"q": "x"}'),
                openai_call("c2", "noargs", ""),
            ],
        }
        merged = merge_tool_invocations(msg)
        assert merged == [
            {"toolCallId": "c1", "toolName": "search", "args": {"q": "x"}, "state": "call"},
            {"toolCallId": "c2", "toolName": "noargs", "args": {}, "state": "call"},
        ]
        answered = merge_tool_invocations(msg, {"c1": {"hits": 1}})
        assert answered[0]["state"] == "result"
        assert answered[0]["result"] == {"hits": 1}
        assert answered[1]["state"] == "call"

    def test_openai_invalid_json_arguments_kept_raw(self) -> None:
        msg = {"role": "assistant", "tool_calls": [openai_call("c1", "f", "{not json")]}
        assert merge_tool_invocations(msg)[0]["args"] == "{not json"

    def test_openai_calls_after_mastra_ones_without_duplicates(self) -> None:
        msg = message([part(inv("a"))])
        msg["tool_calls"] = [openai_call("a", "dup"), openai_call("b", "new"), "junk"]
        assert ids(merge_tool_invocations(msg)) == ["a", "b"]


# --- extract_tool_calls ---------------------------------------------------------------------


class TestExtractToolCalls:
    def test_states(self) -> None:
        msg = message(
            [
                part(inv("1", "done", "result")),
                part(inv("2", "pending", "call")),
                part(inv("3", "thrown", "output-error", errorText="x")),
                part(inv("4", "streaming", "partial-call")),
                part(inv("5", "denied", "output-denied")),
                part(inv("6", "", "result")),
                part({"toolCallId": "7", "state": "result"}),
            ]
        )
        calls = extract_tool_calls([msg])
        assert calls.tools == ["done", "pending", "thrown"]
        assert [i.invocation_index for i in calls.tool_call_infos] == [0, 1, 2]

    def test_indices_and_fallback_ids(self) -> None:
        output = [
            create_test_message("hi", "user"),
            message(
                [part(inv("x", "skipped", "partial-call")), part(inv(None, "anon"))],
                legacy=[inv("L", "legacy")],
            ),
        ]
        calls = extract_tool_calls(output)
        assert calls == ToolCalls(
            tools=["anon", "legacy"],
            tool_call_infos=[
                ToolCallInfo("anon", "1-1", 1, 1),
                ToolCallInfo("legacy", "L", 1, 2),
            ],
        )
        assert calls.to_dict() == {
            "tools": ["anon", "legacy"],
            "toolCallInfos": [
                {"toolName": "anon", "toolCallId": "1-1", "messageIndex": 1, "invocationIndex": 1},
                {"toolName": "legacy", "toolCallId": "L", "messageIndex": 1, "invocationIndex": 2},
            ],
        }

    def test_empty_and_non_list(self) -> None:
        assert extract_tool_calls([]) == ToolCalls()
        assert extract_tool_calls(None).tools == []
        assert extract_tool_calls("text").tool_call_infos == []

    def test_openai_transcript(self) -> None:
        output = [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [openai_call("c1", "get_weather"), openai_call("c2", "search")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 20}'},
            {"role": "assistant", "content": "It is 20."},
        ]
        calls = extract_tool_calls(output)
        assert calls.tools == ["get_weather", "search"]
        assert [(i.tool_call_id, i.message_index) for i in calls.tool_call_infos] == [
            ("c1", 1),
            ("c2", 1),
        ]
        states = [i["state"] for i in all_tool_invocations(output)]
        assert states == ["result", "call"]

    def test_openai_tool_message_before_call_does_not_answer_it(self) -> None:
        output = [
            {"role": "tool", "tool_call_id": "c1", "content": "early"},
            {"role": "assistant", "tool_calls": [openai_call("c1", "f")]},
        ]
        assert [i["state"] for i in all_tool_invocations(output)] == ["call"]


def _case_output(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        create_test_message(
            m["content"], m["role"], id=f"msg-{i}", tool_invocations=m.get("toolInvocations")
        )
        for i, m in enumerate(case["output"])
    ]


def _tool_call_accuracy_cases() -> list[dict[str, Any]]:
    cases = json.loads(CASES_PATH.read_text())
    return [c for c in cases if c["scorer"] == "tool-call-accuracy-code"]


def test_tool_call_accuracy_cases_exist() -> None:
    assert len(_tool_call_accuracy_cases()) == 17


@pytest.mark.parametrize("case", _tool_call_accuracy_cases(), ids=lambda c: c["id"])
def test_fixture_actual_tools(case: dict[str, Any]) -> None:
    calls = extract_tool_calls(_case_output(case))
    expected_names = [
        inv["toolName"]
        for m in case["output"]
        for inv in m.get("toolInvocations") or []
        if inv["state"] in ("result", "call", "output-error")
    ]
    assert calls.tools == expected_names
    pre = (case.get("reference_step_results") or {}).get("preprocessStepResult")
    if pre is not None:
        assert calls.tools == pre["actualTools"]
        assert calls.to_dict()["toolCallInfos"] == pre["toolCallInfos"]


def test_fixture_checks_tool_cases() -> None:
    """calledTool / didNotCall / maxToolCalls / toolOrder / usedNoTools fixtures count the same."""
    cases = json.loads(CASES_PATH.read_text())
    checked = 0
    for case in cases:
        if not case["scorer"].startswith("checks.") or not isinstance(case.get("output"), list):
            continue
        calls = extract_tool_calls(_case_output(case))
        raw = [inv["toolName"] for m in case["output"] for inv in m.get("toolInvocations") or []]
        assert calls.tools == raw, case["id"]
        checked += 1
    assert checked > 10


# --- extract_tool_results -------------------------------------------------------------------


class TestExtractToolResults:
    def test_only_results_with_a_result(self) -> None:
        msg = message(
            [
                part(inv("1", "ok", "result", args={"a": 1}, result={"v": 1})),
                part(inv("2", "noresult", "result")),
                part(inv("3", "thrown", "output-error", errorText="x")),
                part(inv("4", "pending", "call", result={"v": 4})),
                part(inv(None, "anon", "result", args=None, result=0)),
            ]
        )
        assert extract_tool_results([msg]) == [
            {"toolName": "ok", "toolCallId": "1", "args": {"a": 1}, "result": {"v": 1}},
            {"toolName": "anon", "toolCallId": "", "args": {}, "result": 0},
        ]

    def test_openai_results(self) -> None:
        output = [
            {"role": "assistant", "tool_calls": [openai_call("c1", "f", '{"x": 1}')]},
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "[1, 2]"}]},
            {"role": "assistant", "tool_calls": [openai_call("c2", "g")]},
            {"role": "tool", "tool_call_id": "c2", "content": "plain text"},
        ]
        assert extract_tool_results(output) == [
            {"toolName": "f", "toolCallId": "c1", "args": {"x": 1}, "result": [1, 2]},
            {"toolName": "g", "toolCallId": "c2", "args": {}, "result": "plain text"},
        ]

    def test_empty(self) -> None:
        assert extract_tool_results([]) == []
        assert extract_tool_results(None) == []


# --- all_tool_invocations -------------------------------------------------------------------


def test_all_tool_invocations_any_state_across_messages() -> None:
    output = [
        message([part(inv("1", state="partial-call"))], legacy=[inv("0", state="call")]),
        create_test_message("no tools", "assistant"),
        message(legacy=[inv("2", result={"error": "timeout"})]),
    ]
    assert ids(all_tool_invocations(output)) == ["1", "0", "2"]
    assert all_tool_invocations(None) == []


# --- extract_trajectory ---------------------------------------------------------------------


class TestExtractTrajectory:
    def test_steps(self) -> None:
        output = [
            message(
                [
                    part(inv("1", "search", "result", args={"q": "x"}, result={"hits": 2})),
                    part(inv("2", "scalar", "result", args="raw", result=[1, 2])),
                    part(inv("3", "flagged", "result", args={}, result={"e": 1}, isError=True)),
                    part(inv("4", "pending", "call", args=None, result={"ignored": True})),
                    part(inv("5", "thrown", "output-error", errorText="boom")),
                    part(inv("6", "partial", "partial-call")),
                ]
            ),
        ]
        trajectory = extract_trajectory(output)
        assert trajectory["rawOutput"] is output
        assert trajectory["steps"] == [
            {
                "stepType": "tool_call",
                "name": "search",
                "toolArgs": {"q": "x"},
                "toolResult": {"hits": 2},
                "success": True,
            },
            {
                "stepType": "tool_call",
                "name": "scalar",
                "toolArgs": {"value": "raw"},
                "toolResult": {"value": [1, 2]},
                "success": True,
            },
            {
                "stepType": "tool_call",
                "name": "flagged",
                "toolArgs": {},
                "toolResult": {"e": 1},
                "success": False,
            },
            {"stepType": "tool_call", "name": "pending", "success": False},
            {"stepType": "tool_call", "name": "thrown", "toolArgs": {}, "success": False},
        ]

    def test_scalar_zero_result_is_wrapped(self) -> None:
        output = [message([part(inv("1", "n", "result", args=0, result=0))])]
        step = extract_trajectory(output)["steps"][0]
        assert step["toolArgs"] == {"value": 0}
        assert step["toolResult"] == {"value": 0}

    def test_merged_order_across_messages(self) -> None:
        output = [
            message([part(inv("b", "B"))], legacy=[inv("a", "A"), inv("b", "B")]),
            message(legacy=[inv("c", "C", "call")]),
        ]
        assert [s["name"] for s in extract_trajectory(output)["steps"]] == ["A", "B", "C"]

    def test_openai(self) -> None:
        output = [
            {"role": "assistant", "tool_calls": [openai_call("c1", "f", '{"x": 1}')]},
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
        ]
        assert extract_trajectory(output)["steps"] == [
            {
                "stepType": "tool_call",
                "name": "f",
                "toolArgs": {"x": 1},
                "toolResult": {"value": 42},
                "success": True,
            }
        ]

    def test_empty(self) -> None:
        assert extract_trajectory([]) == {"steps": [], "rawOutput": []}


def test_create_tool_invocation_thrown_call_via_parts() -> None:
    thrown = create_tool_invocation(
        "c2", "saveTool", {"value": "x"}, state="output-error", error_text="Save failed"
    )
    msg = create_test_message(
        "That failed.",
        "assistant",
        parts=[{"type": "text", "text": "That failed."}, part(thrown)],
    )
    assert extract_tool_calls([msg]).tools == ["saveTool"]
    assert extract_tool_results([msg]) == []
    assert extract_trajectory([msg])["steps"][0]["success"] is False
