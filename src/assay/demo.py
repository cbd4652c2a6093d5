"""The offline demo: score the bundled example dataset with the code scorers.

Kept in the library (not the CLI) so the same demo runs from Python:
``asyncio.run(assay.demo.run_demo())``.
"""

from __future__ import annotations

import asyncio
import json
import os
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
    "toxicity": "toxicity*",
}

JUDGE_TYPE = "toxicity"
"""The demo's judge scorer: one judge call per item with ``reason="template"``."""

JUDGE_HOWTO = (
    "Examples: ASSAY_JUDGE_MODEL=openai/gpt-4o-mini assay demo (with OPENAI_API_KEY); "
    "ASSAY_JUDGE_MODEL=ollama/llama3.1; ASSAY_JUDGE_MODEL=openai-compatible/<model> with "
    "ASSAY_BASE_URL=http://host:port/v1."
)


def demo_judge() -> tuple[Scorer | None, list[str], Any]:
    """The judge scorer of the demo and the notes to print about it.

    ``$ASSAY_JUDGE_MODEL`` when set; otherwise the embedded SmolLM2-135M (a smoke-test model:
    it proves the plumbing, its verdicts mean nothing), cached in ``.assay/cache.db``.
    """
    spec = os.environ.get("ASSAY_JUDGE_MODEL")
    if spec:
        scorer = create_scorer(JUDGE_TYPE, reason="template", model=spec)
        return scorer, [f"* {JUDGE_TYPE} (rows marked judge) judged by {spec}."], None
    from assay.models.cache import CachedModel
    from assay.models.local import (
        SMOKE_TEST_NOTICE,
        LocalModelUnavailableError,
        local_model,
        require_local_model_packages,
    )

    try:
        require_local_model_packages()
    except LocalModelUnavailableError as exc:
        return None, [f"judge scorer skipped: {exc}", JUDGE_HOWTO], None
    cached = CachedModel(local_model())
    scorer = create_scorer(JUDGE_TYPE, reason="template").with_judge_model(cached)
    notes = [f"* {JUDGE_TYPE} (rows marked judge): {SMOKE_TEST_NOTICE}", JUDGE_HOWTO]
    return scorer, notes, cached.stats


@dataclass(frozen=True)
class DemoRow:
    id: str
    scores: dict[str, ScoreResult]


@dataclass(frozen=True)
class DemoReport:
    scorer_labels: dict[str, str]
    rows: list[DemoRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

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


async def run_demo(path: Path | None = None, *, judge: bool = True) -> DemoReport:
    """Score every row of the demo dataset with the code scorers (and, with ``judge``, one
    judge scorer), concurrently."""
    items = load_jsonl(path or default_demo_path())
    scorers: dict[str, Scorer] = {
        type_id: create_scorer(type_id, **params) for type_id, params in DEMO_SCORERS
    }
    notes: list[str] = []
    cache_stats: Any = None
    if judge:
        judge_scorer, notes, cache_stats = demo_judge()
        if judge_scorer is not None:
            scorers[JUDGE_TYPE] = judge_scorer
    labels = {key: scorer.label for key, scorer in scorers.items()}
    labels["tool-call-accuracy-code"] = "Tool Call Accuracy"

    async def score_item(index: int, item: dict[str, Any]) -> DemoRow:
        chosen = {key: s for key, s in scorers.items() if key != JUDGE_TYPE}
        if JUDGE_TYPE in scorers and (item.get("metadata") or {}).get("judge"):
            chosen[JUDGE_TYPE] = scorers[JUDGE_TYPE]
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
    if cache_stats is not None:
        notes.append(
            f"judge model cache: {cache_stats.hits} hits, {cache_stats.misses} misses "
            "(.assay/cache.db; a second run is served from it)"
        )
    order = [key for key, _ in DEMO_SCORERS] + ["tool-call-accuracy-code"]
    order += [key for key in labels if key not in order]
    return DemoReport({key: labels[key] for key in order}, list(rows), notes)
