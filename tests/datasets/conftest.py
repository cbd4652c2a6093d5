"""Shared sample items: one of each value shape a dataset field can hold."""

from __future__ import annotations

import pytest

from assay.types import Item


@pytest.fixture
def items() -> list[Item]:
    """Strings, structured values, ``None``s and metadata, to exercise every encoder path."""
    return [
        Item(id="capital", input="What is the capital of France?", expected_output="Paris"),
        Item(
            id="chat",
            input=[{"role": "user", "content": "hi"}],
            output="Hello! How can I help?",
            context=["passage one", "passage two"],
            metadata={"topic": "greeting", "difficulty": 2, "tags": ["a", "b"]},
        ),
        Item(id="judged", output="a stored answer", expected_output={"label": "good"}),
        Item(id="unicode", input='Ça va? 日本語 — “quotes”, commas, "double"\nnewline'),
    ]


@pytest.fixture
def tricky_items() -> list[Item]:
    """Values that only an exact (non-CSV) format can round-trip: scalars and JSON-ish text."""
    return [
        Item(id="1", input="42", expected_output=42),
        Item(id="2", input="null", output="true", expected_output=True),
        Item(id="3", input=" [1, 2] ", expected_output=[1, 2]),
        Item(id="4", input='"quoted"', context={"k": None}),
        Item(id="5", input="", expected_output=1.5, metadata={"n": None, "x": {"y": [1]}}),
        Item(id="6", input="-not a number", output="{broken json"),
    ]
