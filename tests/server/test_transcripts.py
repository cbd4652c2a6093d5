"""Trajectories as conversations: messages, tool calls and their results."""

from __future__ import annotations

from assay.server.transcripts import MAX_TURNS, transcript_of


def test_messages_tool_calls_and_results_in_order() -> None:
    turns = transcript_of(
        {
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "weather?"},
            ]
        },
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "weather", "content": {"temp": -3}},
            {"role": "assistant", "content": [{"type": "text", "text": "It is -3 °C."}]},
        ],
    )
    assert turns is not None
    assert [(t.source, t.role) for t in turns] == [
        ("input", "system"),
        ("input", "user"),
        ("output", "assistant"),
        ("output", "tool"),
        ("output", "assistant"),
    ]
    assert turns[2].tool_calls[0].name == "weather" and '"Oslo"' in turns[2].tool_calls[0].arguments
    assert turns[3].tool_call_id == "c1" and '"temp": -3' in turns[3].text
    assert turns[4].text == "It is -3 °C."


def test_values_that_are_not_messages_are_no_transcript() -> None:
    assert transcript_of("question", "answer") is None
    assert transcript_of([{"content": "no role"}], {"messages": "x"}) is None
    assert transcript_of([1, 2], None) is None
    hostile = [
        {"role": "user", "content": "<script>x</script>", "tool_calls": [{"function": 5}, 7]}
    ]
    (turn,) = transcript_of(hostile, None) or []
    assert turn.text == "<script>x</script>" and turn.tool_calls[0].name == "(unnamed tool)"
    many = transcript_of([{"role": "user", "content": "x"}] * (MAX_TURNS + 10), None)
    assert many is not None and len(many) == MAX_TURNS
