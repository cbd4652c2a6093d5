"""The offline demo: score the bundled example dataset with the code scorers.

Kept in the library (not the CLI) so the same demo runs from Python:
``asyncio.run(assay.demo.run_demo())``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from assay.scoring.registry import create_scorer
from assay.scoring.scorer import Scorer
from assay.types import ScoreResult

DEMO_SCORERS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("content-similarity", {"compare_to": "ground_truth"}),
    ("keyword-coverage", {"compare_to": "ground_truth"}),
    ("textual-difference", {"compare_to": "ground_truth"}),
    ("completeness", {"compare_to": "ground_truth"}),
    ("tone", {}),
)
"""Text scorers of every row; the reference compares input with output, the demo compares
the answer with the expected answer (``compare_to="ground_truth"``)."""


SHORT_LABELS = {
    "content-similarity": "dice",
    "keyword-coverage": "keywords",
    "textual-difference": "lcs ratio",
    "completeness": "complete",
    "tone": "tone",
    "tool-call-accuracy-code": "tool call",
}


@dataclass(frozen=True)
class DemoRow:
    id: str
    scores: dict[str, ScoreResult]


@dataclass(frozen=True)
class DemoReport:
    scorer_labels: dict[str, str]
    rows: list[DemoRow] = field(default_factory=list)

    def mean(self, scorer_key: str) -> float | None:
        values = [
            r.scores[scorer_key].score
            for r in self.rows
            if scorer_key in r.scores and r.scores[scorer_key].score is not None
        ]
        return sum(values) / len(values) if values else None  # type: ignore[arg-type]


def default_demo_path() -> Path:
    """The bundled dataset: ``examples/support.jsonl`` in a checkout, else the package copy."""
    checkout = Path(__file__).resolve().parents[2] / "examples" / "support.jsonl"
    if checkout.exists():
        return checkout
    return Path(str(resources.files("assay").joinpath("data/support.jsonl")))


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSONL file of items; a bad line is reported with its number."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {number}: invalid JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or "output" not in row:
            raise ValueError(f"{path}: line {number}: an item needs an 'output' field")
        rows.append(row)
    return rows


async def run_demo(path: Path | None = None) -> DemoReport:
    """Score every row of the demo dataset with the code scorers, concurrently."""
    items = load_jsonl(path or default_demo_path())
    scorers: dict[str, Scorer] = {
        type_id: create_scorer(type_id, **params) for type_id, params in DEMO_SCORERS
    }
    labels = {key: scorer.label for key, scorer in scorers.items()}
    labels["tool-call-accuracy-code"] = "Tool Call Accuracy"

    async def score_item(index: int, item: dict[str, Any]) -> DemoRow:
        chosen = dict(scorers)
        expected_tool = (item.get("metadata") or {}).get("expected_tool")
        if expected_tool:
            chosen["tool-call-accuracy-code"] = create_scorer(
                "tool-call-accuracy-code", expected_tool=expected_tool
            )
        results = await asyncio.gather(
            *(
                scorer.run(
                    input=item.get("input"),
                    output=item["output"],
                    ground_truth=item.get("expected_output"),
                )
                for scorer in chosen.values()
            )
        )
        return DemoRow(str(item.get("id", index)), dict(zip(chosen, results, strict=True)))

    rows = await asyncio.gather(*(score_item(i, item) for i, item in enumerate(items)))
    return DemoReport(labels, list(rows))
