"""Run ``optimize_judge.yaml`` offline: a scripted judge and a scripted reflection model.

The judge stands in for an LLM that reads its rules literally: it says an answer fabricates
only for the kinds of evidence its prompt tells it to distrust (a refusal followed by the
content anyway; tables, charts and code; specific figures, dates and links). The reflection
model stands in for a strong model reading the disagreements: it adds the rule that the
judge's misses call for. Both are ``assay.ScriptedModel`` objects, so this runs without a
network or an API key (a plumbing demonstration, not a trustworthy judge: the keyword
heuristics were written while looking at this sample):

    python examples/optimize_judge/offline.py [--db sqlite:///path.db] [--min kappa=0.3]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from assay.models.base import ChatMessage
from assay.optimize.events import OptimizeEvent
from assay.optimize.judge import optimize_judge, write_best_scorer
from assay.store import open_store
from assay.testing import ScriptedModel

HERE = Path(__file__).resolve().parent
RULES = {
    "refusal": "An answer that says it cannot do the task and then does it anyway is "
    "usually made up.",
    "artefact": "Tables, charts, code and drawings must be right cell by cell; invented "
    "values are fabrication.",
    "figures": "Specific figures, dates, statistics and links the user did not give are "
    "fabricated unless they are common knowledge.",
}
FIGURES = re.compile(
    r"\b(1[5-9]\d\d|20\d\d)\b|\d+(\.\d+)?\s?%|\$\s?\d|\b\d+\.\d+\b|https?://|\b\d{1,3}(,\d{3})+\b"
)


def evidence(answer: str) -> set[str]:
    """Which kinds of suspicious evidence an answer shows."""
    found = set()
    if "as an ai language model" in answer.lower():
        found.add("refusal")
    if "```" in answer or answer.count("|") >= 6:
        found.add("artefact")
    if FIGURES.search(answer):
        found.add("figures")
    return found


def literal_judge(messages: list[ChatMessage], schema: Any) -> str:
    system = messages[0].content if messages[0].role == "system" else ""
    user = messages[-1].content
    answer = user.split("<<<DATA", 1)[-1]
    prompt = system + user.split("<<<DATA", 1)[0]
    distrusted = [kind for kind in evidence(answer) if RULES[kind] in prompt]
    if distrusted:
        return json.dumps({"satisfied": False, "reasoning": f"Suspicious {distrusted[0]}."})
    return json.dumps({"satisfied": True, "reasoning": "Nothing I was told to distrust."})


def rule_adder(messages: list[ChatMessage], schema: Any) -> str:
    prompt = messages[-1].content
    current = prompt.split("```")[1].strip("\n")
    wanted: list[str] = []
    for example in prompt.split("# Example")[1:]:
        if "DISAGREES" in example and "human label 'yes'" in example:
            wanted += [RULES[k] for k in sorted(evidence(example)) if RULES[k] not in current]
    added = " ".join(dict.fromkeys(wanted[:1])) or "Be careful."
    return f"```\n{current}\n{added}\n```"


def show(event: OptimizeEvent) -> None:
    if event.kind == "candidate":
        print(f"  candidate {event.idx}: val kappa {event.val_score:.3f}")
    elif event.kind == "proposed":
        print(event.diff)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=None, help="Database URL (default .assay/assay.db).")
    parser.add_argument("--min", default=None, help="A gate, e.g. kappa=0.3.")
    parser.add_argument("--write-best", default=None, help="Write the winner's scorer YAML.")
    args = parser.parse_args()
    gates = {}
    if args.min:
        name, _, value = args.min.partition("=")
        gates = {name: float(value)}
    with open_store(args.db) as store:
        result = optimize_judge(
            HERE / "optimize_judge.yaml",
            judge_model=ScriptedModel(responder=literal_judge, name="literal-judge"),
            reflection_model=ScriptedModel(responder=rule_adder, name="rule-adder"),
            on_event=show,
            store=store,
            **({"min": gates} if gates else {}),
        )
    print(result.summary)
    for name, text in result.best_candidate.items():
        print(f"--- {name}:\n{text}")
    if args.write_best:
        write_best_scorer(result, args.write_best)
    return 1 if result.gates and not result.passed else 0


if __name__ == "__main__":
    sys.exit(main())
