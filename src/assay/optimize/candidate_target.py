"""A candidate (named text components) as a model-prompt target.

The components form the system message, in the seed's order, separated by a blank line;
the user message is the config's Jinja2 ``prompt`` over the item. Component texts are
literal: a reflection model may well write ``{{`` or ``{%`` into a prompt, and that text
must reach the task model as written, not be executed as a template. They are therefore
wrapped in ``{% raw %}`` blocks, with any ``endraw`` tag inside emitted as a string
expression.

Using ``ModelPromptTarget`` itself (rather than a look-alike) keeps every evaluation a
normal stored run: the target's spec records the exact system text, its fingerprint
changes with the candidate, and reports show it like any other model prompt.
"""

from __future__ import annotations

import re

from assay.fingerprint import digest
from assay.models.base import Model, ModelSettings
from assay.targets.model_prompt import ModelPromptTarget

_ENDRAW = re.compile(r"\{%-?\s*endraw\s*-?%\}")


def literal_template(text: str) -> str:
    """A Jinja2 template that renders to exactly ``text``."""
    parts: list[str] = []
    last = 0
    for match in _ENDRAW.finditer(text):
        parts.append("{% raw %}" + text[last : match.start()] + "{% endraw %}")
        parts.append("{{ " + repr(match.group(0)) + " }}")
        last = match.end()
    parts.append("{% raw %}" + text[last:] + "{% endraw %}")
    return "".join(parts)


def system_text(candidate: dict[str, str]) -> str:
    """The system message of ``candidate``: its non-empty components, in order."""
    return "\n\n".join(text for text in candidate.values() if text.strip())


def candidate_hash(candidate: dict[str, str]) -> str:
    """What makes two candidates the same: their component names and texts, in order."""
    return digest({"components": [[k, v] for k, v in candidate.items()]})[:32]


def candidate_target(
    candidate: dict[str, str],
    prompt: str,
    model: Model,
    *,
    settings: ModelSettings | None = None,
) -> ModelPromptTarget:
    """The model-prompt target that runs ``candidate``."""
    system = system_text(candidate)
    return ModelPromptTarget(
        prompt, model, system=literal_template(system) if system else None, settings=settings
    )
