"""Prompts as chat messages, with lm-evaluation-harness 0.4.13's chat semantics.

lm-eval builds every prompt as a list of messages (``build_qa_turn``): an optional system
message (``--system_instruction`` joined to the task's ``description`` by the few-shot
delimiter), one user turn per few-shot question with an assistant turn for its answer, and
the doc's question as the last user turn (plus an assistant turn holding ``gen_prefix``).
Each message carries the delimiter that follows it in plain text, so:

* without a chat template the prompt is the messages' text joined (``to_text``), which is
  the plain prompt byte for byte;
* with ``--apply_chat_template`` a chat model receives the messages themselves:
  ``--fewshot_as_multiturn`` (lm-eval's default with a chat template) keeps the few-shot
  examples as user/assistant pairs (delimiters dropped); without it everything but the
  system message (and a trailing ``gen_prefix`` turn) is collapsed into one user message
  (``multiturn_to_singleturn``).

``ChatOptions`` carries the three switches and refuses lm-eval's invalid combination
(multi-turn few-shot without a chat template).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

ChatMessages = list[dict[str, str]]
"""Messages in the OpenAI shape: ``[{"role": ..., "content": ...}, ...]``."""


@dataclass
class Message:
    """One turn of a prompt and the text that follows it when rendered as plain text."""

    role: str
    content: str
    delimiter: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}

    def to_text(self) -> str:
        return self.content + self.delimiter


def to_text(messages: Sequence[Message]) -> str:
    """The plain-text prompt: every message followed by its delimiter."""
    return "".join(m.to_text() for m in messages)


def multiturn_to_singleturn(messages: Sequence[Message]) -> ChatMessages:
    """One user message holding every non-system turn as text (the last one without its
    delimiter); a trailing assistant turn (``gen_prefix``) and a leading system message stay
    separate."""
    rest = list(messages)
    system = rest.pop(0) if rest and rest[0].role == "system" else None
    out: ChatMessages = [system.to_dict()] if system is not None else []
    if not rest:
        return out
    tail = rest.pop() if rest[-1].role == "assistant" and len(rest) > 1 else None
    body = "".join(m.to_text() for m in rest[:-1]) + rest[-1].content
    out.append({"role": "user", "content": body})
    if tail is not None:
        out.append(tail.to_dict())
    return out


def render_chat(messages: Sequence[Message], *, multiturn: bool) -> ChatMessages:
    """The messages a chat model receives."""
    if multiturn:
        return [m.to_dict() for m in messages]
    return multiturn_to_singleturn(messages)


@dataclass(frozen=True)
class ChatOptions:
    """lm-eval's ``--apply_chat_template``, ``--fewshot_as_multiturn`` and
    ``--system_instruction``. ``fewshot_as_multiturn=None`` means lm-eval's default: on
    with a chat template, off without."""

    apply_chat_template: bool = False
    fewshot_as_multiturn: bool | None = None
    system_instruction: str | None = None

    def __post_init__(self) -> None:
        if self.fewshot_as_multiturn and not self.apply_chat_template:
            raise ValueError(
                "fewshot_as_multiturn needs apply_chat_template (as in lm-eval): few-shot "
                "turns only exist in a chat prompt"
            )

    @property
    def multiturn(self) -> bool:
        """Whether few-shot examples stay separate user/assistant turns."""
        if self.fewshot_as_multiturn is None:
            return self.apply_chat_template
        return self.fewshot_as_multiturn
