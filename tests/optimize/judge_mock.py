"""A scripted toxicity judge whose agreement with people depends on its prompt, a scripted
reflection model that proposes the rules its disagreements call for, and labelled data.

The judge flags plain insults always. Two kinds of reply it gets wrong until its prompt says
otherwise: dismissive brush-offs (people label them toxic; flagged only once
``DISMISSIVE_RULE`` is in the prompt) and blunt criticism of work (people label it fine;
flagged until ``CRITICISM_RULE`` is in the prompt). So a better prompt really agrees more."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from assay.models.base import ChatMessage

DISMISSIVE_RULE = "Dismissive brush-offs of a person count as toxic."
CRITICISM_RULE = "Blunt criticism of work, not of the person, is not toxic."

INSULTS = ("idiot", "moron", "pathetic")
DISMISSIVE = ("nobody asked", "who cares")
CRITICISM = ("is wrong", "is sloppy")

_SUBJECTS = ("the plan", "your draft", "the budget", "this patch", "the talk", "the survey")


def labelled_rows(per_group: int = 10) -> list[dict[str, Any]]:
    """``4 * per_group`` replies with a human ``label`` column: insults and brush-offs are
    toxic, polite replies and criticism of work are fine."""
    rows: list[dict[str, Any]] = []
    for i in range(per_group):
        subject = _SUBJECTS[i % len(_SUBJECTS)]
        groups = {
            "insult": (f"Only an {INSULTS[i % 3]} would write {subject} #{i}.", "toxic"),
            "brushoff": (f"{DISMISSIVE[i % 2].capitalize()} about {subject} #{i}?", "toxic"),
            "polite": (f"Thanks for {subject} #{i}; I will read it today.", "ok"),
            "criticism": (f"Frankly, {subject} #{i} {CRITICISM[i % 2]} in two places.", "ok"),
        }
        for group, (text, label) in groups.items():
            rows.append(
                {
                    "id": f"{group}-{i}",
                    "input": f"What do you think of {subject} #{i}?",
                    "output": text,
                    "label": label,
                }
            )
    return rows


def write_rows(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return str(path)


def _response(user: str) -> str:
    found = re.search(r"<<<DATA response>>>\n(.*?)\n<<<END DATA>>>", user, re.S)
    return found.group(1) if found else ""


def toxic_verdict(text: str, prompt: str) -> bool:
    lowered = text.lower()
    if any(word in lowered for word in INSULTS):
        return True
    if any(marker in lowered for marker in DISMISSIVE):
        return DISMISSIVE_RULE in prompt
    if any(marker in lowered for marker in CRITICISM):
        return CRITICISM_RULE not in prompt
    return False


def judge_reply(messages: list[ChatMessage], schema: dict[str, Any] | None) -> str:
    """One verdict for the reply's one opinion, as the toxicity judge's answer model asks."""
    system = messages[0].content if messages[0].role == "system" else ""
    user = messages[-1].content
    text = _response(user)
    prompt = system + "\n" + user.replace(text, "")
    toxic = toxic_verdict(text, prompt)
    reason = "it attacks or brushes off the person" if toxic else "it addresses the work politely"
    return json.dumps({"verdicts": [{"verdict": "yes" if toxic else "no", "reason": reason}]})


def reflection_reply(messages: list[ChatMessage], schema: dict[str, Any] | None) -> str:
    """Adds the rule each disagreement in the reflective dataset calls for."""
    prompt = messages[-1].content
    current = prompt.split("```")[1].strip()
    wanted: list[str] = []
    for example in prompt.split("# Example")[1:]:
        if "DISAGREES" not in example:
            continue
        lowered = example.lower()
        if any(m in lowered for m in DISMISSIVE) and DISMISSIVE_RULE not in current:
            wanted.append(DISMISSIVE_RULE)
        if any(m in lowered for m in CRITICISM) and CRITICISM_RULE not in current:
            wanted.append(CRITICISM_RULE)
    added = " ".join(dict.fromkeys(wanted)) or "Be careful."
    return f"```\n{current} {added}\n```"


def useless_reflection(messages: list[ChatMessage], schema: dict[str, Any] | None) -> str:
    """Proposes a rewording that changes nothing the judge reads."""
    current = messages[-1].content.split("```")[1].strip()
    return f"```\n{current} Think it over.\n```"


# ---------------------------------------------------------------- a pairwise judge
POSITION_RULE = "The order of the two responses means nothing; prefer the one that explains."


def pair_rows(n: int = 24) -> list[dict[str, Any]]:
    """Pairs of answers, one explained ("because ...") and one bare, in alternating order;
    people prefer the explained one (``A``: the first output, ``B``: the second)."""
    rows = []
    for i in range(n):
        explained = f"Use option {i}, because it halves the cost."
        bare = f"Use option {i}."
        first, second, label = (explained, bare, "A") if i % 2 else (bare, explained, "B")
        rows.append(
            {
                "id": f"pair-{i}",
                "input": f"Which option for case {i}?",
                "output": [first, second],
                "label": label,
            }
        )
    return rows


def pairwise_reply(messages: list[ChatMessage], schema: dict[str, Any] | None) -> str:
    """Prefers whichever response is shown first (position bias) unless the prompt says
    the order means nothing; then prefers the one that explains."""
    system = messages[0].content if messages[0].role == "system" else ""
    user = messages[-1].content
    shown = re.findall(r"<<<DATA response (?:A|B)>>>\n(.*?)\n<<<END DATA>>>", user, re.S)
    prompt = system + user.split("<<<DATA", 1)[0]
    if POSITION_RULE in prompt and len(shown) == 2:
        preferred = "first" if "because" in shown[0] else "second"
    else:
        preferred = "first"
    return json.dumps({"preferred": preferred, "reason": f"the {preferred} one reads better"})


def pairwise_reflection(messages: list[ChatMessage], schema: dict[str, Any] | None) -> str:
    prompt = messages[-1].content
    current = prompt.split("```")[1].strip()
    if "POSITION BIAS" in prompt and POSITION_RULE not in current:
        return f"```\n{current} {POSITION_RULE}\n```"
    return f"```\n{current} Be careful.\n```"
