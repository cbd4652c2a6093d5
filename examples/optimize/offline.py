"""Run ``optimize.yaml`` offline: a scripted task model and a scripted reflection model.

The task model stands in for a chatty assistant: it apologises and answers in a sentence
unless its system prompt says otherwise. The reflection model stands in for a strong model
reading the reflective dataset: it adds the rule the scorer diagnostics call for. Both are
``assay.ScriptedModel`` objects, so this runs without a network or an API key:

    python examples/optimize/offline.py [--db sqlite:///path.db]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from assay.models.base import ChatMessage
from assay.optimize import load_optimize_config, optimize
from assay.optimize.events import OptimizeEvent
from assay.store import open_store
from assay.testing import ScriptedModel

HERE = Path(__file__).resolve().parent
NUMBER_ONLY = "Reply with the order number only."
NO_APOLOGY = "Never apologise."


def chatty_assistant(messages: list[ChatMessage], schema: Any) -> str:
    system = messages[0].content if messages[0].role == "system" else ""
    order = re.search(r"\b\d{5}\b", messages[-1].content)
    number = order.group(0) if order else "unknown"
    if NUMBER_ONLY in system:
        return number
    sorry = "" if NO_APOLOGY in system else "I'm so sorry about that! "
    return f"{sorry}I can see your order {number}; I will look into it right away."


def reflective_editor(messages: list[ChatMessage], schema: Any) -> str:
    prompt = messages[-1].content
    current = prompt.split("```")[1].strip()
    if "no apologies: 0.00" in prompt and NO_APOLOGY not in current:
        return f"```\n{current} {NO_APOLOGY}\n```"
    if "Exact match: 0.00" in prompt and NUMBER_ONLY not in current:
        return f"```\n{current} {NUMBER_ONLY}\n```"
    return f"```\n{current}\n```"


def show(event: OptimizeEvent) -> None:
    if event.kind == "iteration":
        best = "—" if event.best_val_score is None else f"{event.best_val_score:.3f}"
        print(f"iteration {event.iteration}: {event.metric_calls} metric calls, best val {best}")
    elif event.kind == "proposed":
        print(event.diff)
    elif event.kind == "candidate":
        print(f"  candidate {event.idx}: val {event.val_score:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=None, help="Database URL (default .assay/assay.db).")
    args = parser.parse_args()
    config = load_optimize_config(HERE / "optimize.yaml")
    with open_store(args.db) as store:
        result = optimize(
            config,
            task_model=ScriptedModel(responder=chatty_assistant, name="chatty"),
            reflection_model=ScriptedModel(responder=reflective_editor, name="editor"),
            on_event=show,
            store=store,
        )
    print(result.summary)
    print("best prompt:\n" + result.best_prompt)
    return 0 if result.test is not None and result.test.verdict == "improved" else 1


if __name__ == "__main__":
    sys.exit(main())
