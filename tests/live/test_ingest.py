"""``assay ingest``: OTel GenAI spans and JSONL items scored into a live run, once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.live.otel import TraceFormatError, otel_items
from assay.store import open_store

SRC = Path(__file__).parents[2] / "src"


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def span(n: int, question: str, answer: str) -> dict[str, Any]:
    return {
        "traceId": f"{n:032x}",
        "spanId": f"{n:016x}",
        "name": "chat gpt-4o-mini",
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.request.model", "gpt-4o-mini"),
            attr("gen_ai.usage.input_tokens", 12),
            attr("gen_ai.usage.output_tokens", 3),
            attr(
                "gen_ai.input.messages",
                json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
            ),
            attr(
                "gen_ai.output.messages",
                json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [
                                {"type": "text", "content": answer},
                                {
                                    "type": "tool_call",
                                    "id": "c1",
                                    "name": "search",
                                    "arguments": {"q": question},
                                },
                            ],
                        }
                    ]
                ),
            ),
        ],
    }


def document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    tool_span = {"traceId": "f" * 32, "spanId": "e" * 16, "name": "http", "attributes": []}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [*spans, tool_span]}]}]}


def test_genai_spans_become_items() -> None:
    items = list(otel_items(document([span(1, "What is 2+2?", "4")])))
    assert len(items) == 1  # the non-GenAI span is skipped
    item = items[0]
    assert item.id == f"{1:032x}:{1:016x}" and item.input == "What is 2+2?" and item.output == "4"
    assert item.metadata["model"] == "gpt-4o-mini" and item.metadata["input_tokens"] == 12
    assert item.metadata["tool_calls"] == [
        {"id": "c1", "name": "search", "args": {"q": "What is 2+2?"}}
    ]


def test_older_event_convention() -> None:
    old = {
        "traceId": "a" * 32,
        "spanId": "b" * 16,
        "events": [
            {"name": "gen_ai.user.message", "attributes": [attr("content", "hi")]},
            {
                "name": "gen_ai.choice",
                "attributes": [
                    attr("message", json.dumps({"role": "assistant", "content": "hello"}))
                ],
            },
        ],
    }
    (item,) = otel_items({"resourceSpans": [{"scopeSpans": [{"spans": [old]}]}]})
    assert (item.input, item.output) == ("hi", "hello")


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "resourceSpans"),
        ({"resourceSpans": [{"scopeSpans": "x"}]}, "resourceSpans[0]: 'scopeSpans'"),
        (
            {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "1"}]}]}]},
            "spans[0]: 'traceId'",
        ),
        (
            {
                "resourceSpans": [
                    {
                        "scopeSpans": [
                            {"spans": [{"traceId": "1", "spanId": "2", "attributes": {"a": 1}}]}
                        ]
                    }
                ]
            },
            "attributes must be a list",
        ),
        (
            {
                "resourceSpans": [
                    {
                        "scopeSpans": [
                            {
                                "spans": [
                                    {
                                        "traceId": "1",
                                        "spanId": "2",
                                        "attributes": [attr("gen_ai.input.messages", "[1, 2]")],
                                    }
                                ]
                            }
                        ]
                    }
                ]
            },
            "messages must be a list of objects",
        ),
    ],
)
def test_hostile_documents_name_the_place(doc: Any, message: str) -> None:
    with pytest.raises(TraceFormatError, match=message.replace("[", r"\[").replace("]", r"\]")):
        list(otel_items(doc))


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PYTHONPATH": str(SRC),
        "ASSAY_DATABASE_URL": f"sqlite:///{tmp_path / 'i.db'}",
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_ingest_twice_adds_nothing_the_second_time(tmp_path: Path) -> None:
    trace = tmp_path / "traffic.json"
    trace.write_text(json.dumps(document([span(i, f"q{i}", f"q{i}") for i in range(5)])))
    first = run_cli(tmp_path, "ingest", str(trace), "--scorers", "content-similarity", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["added"] == 5
    second = run_cli(tmp_path, "ingest", str(trace), "--scorers", "content-similarity", "--json")
    outcome = json.loads(second.stdout)
    assert (outcome["added"], outcome["skipped"], outcome["stored"]) == (0, 5, 5)
    listed = json.loads(run_cli(tmp_path, "runs", "list", "--json").stdout)
    assert [(r["info"]["name"], r["completed_results"]) for r in listed] == [("traffic", 5)]
    with open_store(f"sqlite:///{tmp_path / 'i.db'}") as store:
        rows = list(store.runs.results(outcome["run_id"]))
    assert all(r.scores["content-similarity"].score == 1.0 for r in rows)
    # recorded traffic is taken whole: the rows say so, with no sampling rate
    assert [r.meta for r in rows] == [
        {"decision": "ingested", "fate": "scored", "reason": None}
    ] * 5


def test_jsonl_items_and_a_bad_row(tmp_path: Path) -> None:
    good = tmp_path / "items.jsonl"
    good.write_text('{"id": "a", "input": "x", "output": "y"}\n\n{"id": "b", "output": "z"}\n')
    done = run_cli(
        tmp_path, "ingest", str(good), "--format", "jsonl", "-s", "exact-match", "--json"
    )
    assert done.returncode == 0 and json.loads(done.stdout)["added"] == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "output": "y"}\n{"id": "", "output": "z"}\n')
    failed = run_cli(tmp_path, "ingest", str(bad), "--format", "jsonl", "-s", "exact-match")
    assert failed.returncode != 0 and "line 2: field 'id'" in failed.stderr
    assert "Traceback" not in failed.stderr
    with open_store(f"sqlite:///{tmp_path / 'i.db'}") as store:  # nothing half-written
        assert [r.info.name for r in store.runs.list()] == ["items"]  # no run for "bad"


@pytest.mark.parametrize("fmt", ["otel-json", "jsonl"])
def test_a_file_that_is_not_text_is_one_line_naming_it(tmp_path: Path, fmt: str) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\xff\xfe\x00garbage" * 10)
    failed = run_cli(tmp_path, "ingest", str(blob), "--format", fmt, "-s", "exact-match")
    assert failed.returncode == 2
    assert failed.stderr.strip() == "error: blob.bin: not UTF-8 text (byte 0: invalid start byte)"
    listed = json.loads(run_cli(tmp_path, "runs", "list", "--json").stdout)
    assert listed == []  # nothing stored
