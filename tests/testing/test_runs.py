"""Tests for assay.testing.runs (reference §3.3)."""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from typing import Any

from assay.testing.runs import (
    create_agent_test_run,
    create_test_message,
    create_test_run,
    create_tool_invocation,
    create_trajectory_test_run,
    is_closer_to,
    now_iso,
)

ISO_MS_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


class TestCreateTestMessage:
    def test_defaults(self) -> None:
        msg = create_test_message("Hello", "user")
        assert msg["id"] == "test-message"
        assert msg["role"] == "user"
        assert msg["content"] == {
            "format": 2,
            "parts": [{"type": "text", "text": "Hello"}],
            "content": "Hello",
        }
        assert ISO_MS_Z.match(msg["createdAt"])
        json.dumps(msg)  # JSON-friendly

    def test_tool_invocations_go_to_legacy_array(self) -> None:
        invocations: list[dict[str, Any]] = [
            {
                "toolCallId": "call-1",
                "toolName": "weatherTool",
                "args": {"location": "Paris"},
                "result": {"temp": 22},
                "state": "result",
                "errorText": "dropped",
                "isError": False,
            },
            {"toolCallId": "call-2", "toolName": "t", "args": {}, "state": "call"},
        ]
        msg = create_test_message("Checking", "assistant", id="a1", tool_invocations=invocations)
        assert msg["id"] == "a1"
        assert msg["content"]["parts"] == [{"type": "text", "text": "Checking"}]
        assert msg["content"]["toolInvocations"] == [
            {
                "toolCallId": "call-1",
                "toolName": "weatherTool",
                "args": {"location": "Paris"},
                "result": {"temp": 22},
                "state": "result",
            },
            {"toolCallId": "call-2", "toolName": "t", "args": {}, "state": "call"},
        ]

    def test_empty_tool_invocations_omit_the_key(self) -> None:
        assert (
            "toolInvocations"
            not in create_test_message("x", "assistant", tool_invocations=[])["content"]
        )
        assert "toolInvocations" not in create_test_message("x", "assistant")["content"]

    def test_parts_replace_default_text_part(self) -> None:
        parts = [{"type": "step-start"}]
        msg = create_test_message("flat", "assistant", parts=parts)
        assert msg["content"]["parts"] == [{"type": "step-start"}]
        assert msg["content"]["parts"] is not parts
        assert msg["content"]["content"] == "flat"
        assert create_test_message("flat", "assistant", parts=[])["content"]["parts"] == []

    def test_created_at_override(self) -> None:
        msg = create_test_message("x", "user", created_at="2024-01-01T00:00:00.000Z")
        assert msg["createdAt"] == "2024-01-01T00:00:00.000Z"


class TestCreateToolInvocation:
    def test_defaults(self) -> None:
        assert create_tool_invocation("c1", "weather", {"city": "NYC"}, result={"t": 1}) == {
            "toolCallId": "c1",
            "toolName": "weather",
            "args": {"city": "NYC"},
            "result": {"t": 1},
            "state": "result",
        }

    def test_thrown_call(self) -> None:
        thrown = create_tool_invocation(
            "c2", "save", {"v": "x"}, state="output-error", error_text="Save failed"
        )
        assert thrown == {
            "toolCallId": "c2",
            "toolName": "save",
            "args": {"v": "x"},
            "state": "output-error",
            "errorText": "Save failed",
        }

    def test_is_error_and_missing_args(self) -> None:
        flagged = create_tool_invocation("c3", "t", result={"ok": False}, is_error=True)
        assert flagged["args"] == {}
        assert flagged["isError"] is True
        assert create_tool_invocation("c4", "t", is_error=False)["isError"] is False


class TestCreateAgentTestRun:
    def test_defaults(self) -> None:
        output = [create_test_message("Hi", "assistant")]
        run = create_agent_test_run(output=output)
        assert run["input"] == {
            "inputMessages": [],
            "rememberedMessages": [],
            "systemMessages": [],
            "taggedSystemMessages": {},
        }
        assert run["output"] is output
        assert run["request_context"] == {}
        assert uuid.UUID(run["run_id"])
        assert create_agent_test_run(output=[])["run_id"] != run["run_id"]

    def test_values(self) -> None:
        inputs = [create_test_message("Hello", "user")]
        run = create_agent_test_run(
            input_messages=inputs,
            output=[],
            remembered_messages=[create_test_message("old", "user")],
            system_messages=[{"role": "system", "content": "Be nice"}],
            tagged_system_messages={"memory": [{"role": "system", "content": "m"}]},
            request_context={"user": "u1"},
            run_id="run-1",
        )
        assert run["input"]["inputMessages"] == inputs
        assert run["input"]["rememberedMessages"][0]["content"]["content"] == "old"
        assert run["input"]["systemMessages"] == [{"role": "system", "content": "Be nice"}]
        assert run["input"]["taggedSystemMessages"] == {
            "memory": [{"role": "system", "content": "m"}]
        }
        assert run["request_context"] == {"user": "u1"}
        assert run["run_id"] == "run-1"

    def test_explicit_none_is_kept(self) -> None:
        # JS defaults apply only to `undefined`; `null` survives (the null-input cases).
        run = create_agent_test_run(input_messages=None, output=None, tagged_system_messages=None)
        assert run["input"]["inputMessages"] is None
        assert run["input"]["taggedSystemMessages"] is None
        assert run["input"]["rememberedMessages"] == []
        assert run["output"] is None


class TestCreateTrajectoryTestRun:
    def test_trajectory_is_output(self) -> None:
        trajectory = {
            "steps": [{"stepType": "tool_call", "name": "search", "toolArgs": {"q": "t"}}]
        }
        expected = {"steps": [{"name": "search"}], "ordering": "strict"}
        run = create_trajectory_test_run(
            input_messages=[create_test_message("Do X", "user", id="u1")],
            trajectory=trajectory,
            expected_trajectory=expected,
            run_id="r",
        )
        assert run["output"] is trajectory
        assert run["expected_trajectory"] == expected
        assert run["input"]["inputMessages"][0]["id"] == "u1"
        assert run["run_id"] == "r"

    def test_without_expectation(self) -> None:
        run = create_trajectory_test_run(trajectory={"steps": []})
        assert "expected_trajectory" not in run
        assert run["input"]["systemMessages"] == []


def test_create_test_run_legacy_shape() -> None:
    assert create_test_run("What is 2+2?", "4", {"topic": "math"}) == {
        "input": [{"role": "user", "content": "What is 2+2?"}],
        "output": {"role": "assistant", "text": "4"},
        "additional_context": {"topic": "math"},
        "request_context": {},
    }
    assert create_test_run("q", "a", request_context={"k": 1})["request_context"] == {"k": 1}


def test_is_closer_to() -> None:
    assert is_closer_to(0.6, 1, 0)
    assert not is_closer_to(0.3, 1, 0)
    assert not is_closer_to(0.5, 1, 0)  # ties are not closer
    assert is_closer_to(-2, -3, 5)


def test_now_iso_is_utc_ms() -> None:
    value = now_iso()
    assert ISO_MS_Z.match(value)
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert parsed.utcoffset() is not None
