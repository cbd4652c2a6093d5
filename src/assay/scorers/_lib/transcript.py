"""A conversation as the multi-turn judge reads it: every assistant turn of an output, as a
numbered transcript.

Kept apart from ``multi_turn_judge`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.messages.chat import effective_role, get_assistant_message, get_text_content


def assistant_turns(output: Any) -> list[str]:
    """Every assistant turn's text, in order, trimmed, empties dropped."""
    if isinstance(output, str):
        texts = [output]
    elif isinstance(output, list):
        texts = []
        for message in output:
            if isinstance(message, str):
                texts.append(message)
            elif isinstance(message, Mapping) and effective_role(message) == "assistant":
                texts.append(get_text_content(message))
    elif isinstance(output, Mapping):
        texts = [get_assistant_message(output) or ""]
    else:
        texts = []
    return [text.strip() for text in texts if text.strip()]


def transcript(turns: list[str]) -> str:
    """``Assistant turn i: …`` paragraphs, numbered from 1."""
    return "\n\n".join(f"Assistant turn {i}: {turn}" for i, turn in enumerate(turns, start=1))
