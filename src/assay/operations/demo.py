"""The offline demo: score the bundled example dataset with the code scorers.

Kept in the library (not the CLI) so the same demo runs from Python:
``asyncio.run(assay.operations.demo.run_demo())``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.extras import MissingExtraError
from assay.models.cache import ModelCache
from assay.scoring.registry import create_scorer
from assay.scoring.scorer import Scorer
from assay.types import ScoreResult

if TYPE_CHECKING:
    from assay.store import Store

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


def demo_judge(cache: ModelCache | None = None) -> tuple[Scorer | None, list[str], Any]:
    """The judge scorer of the demo and the notes to print about it.

    ``$ASSAY_JUDGE_MODEL`` when set; otherwise the embedded SmolLM2-135M (a smoke-test model:
    it proves the plumbing, its verdicts mean nothing), its answers cached in ``cache`` (the
    store's model cache table) so a second demo makes no model call.
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
    cached = CachedModel(local_model(), cache=cache)
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
    run_id: str | None = None
    report_path: Path | None = None

    def mean(self, scorer_key: str) -> float | None:
        values = [
            r.scores[scorer_key].score
            for r in self.rows
            if scorer_key in r.scores and r.scores[scorer_key].score is not None
        ]
        return sum(values) / len(values) if values else None  # type: ignore[arg-type]


def default_demo_path() -> Path:
    """The bundled dataset: ``examples/support.jsonl`` in a checkout, else the package copy."""
    checkout = Path(__file__).resolve().parents[3] / "examples" / "support.jsonl"
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


def demo_scorers(judge: Scorer | None, notes: list[str] | None = None) -> list[Scorer]:
    """The demo's scorers. Scorers meant for some rows only are gated with ``Scorer.when``:
    the judge runs on rows marked ``judge`` (the embedded model is slow), tool-call accuracy
    on rows that name an ``expected_tool``; elsewhere they are ``not_scorable``.

    A scorer whose install extra is missing (completeness without ``assay[nlp]``) is left
    out with a line in ``notes``, as the judge is without the local model: the demo's set-up
    line installs the core and the embedded model only."""
    scorers = []
    for type_id, params in DEMO_SCORERS:
        try:
            scorers.append(create_scorer(type_id, **params))
        except MissingExtraError as exc:
            if notes is not None:
                notes.append(f"{type_id} scorer skipped: {exc}")
    scorers.append(
        create_scorer("tool-call-accuracy-code", expected_tool="get_weather").when(
            lambda run: run.metadata.get("expected_tool") == "get_weather"
        )
    )
    if judge is not None:
        scorers.append(judge.when(lambda run: bool(run.metadata.get("judge"))))
    return scorers


async def run_demo(
    path: Path | None = None,
    *,
    judge: bool = True,
    store: Store | None = None,
    report_dir: Path | None = None,
) -> DemoReport:
    """Score the demo dataset's stored outputs with the code scorers (and, with ``judge``,
    one judge scorer) as a stored run, and write its HTML report.

    The run goes to ``store`` (default: ``open_store()``, i.e. ``.assay/assay.db``); the
    report to ``report_dir`` (default ``.assay/reports``).
    """
    from assay.analysis.report_html import write_html_report
    from assay.operations.stored_runs import run_stored_async
    from assay.store import open_store

    data = path or default_demo_path()
    items = load_jsonl(data)
    own = store is None
    store = store or open_store()
    try:
        notes: list[str] = []
        cache_stats: Any = None
        judge_scorer = None
        if judge:
            judge_scorer, notes, cache_stats = demo_judge(store.model_cache())
        scorers = demo_scorers(judge_scorer, notes)
        run = await run_stored_async(
            items, None, scorers, store=store, name="demo", concurrency=8, progress=False
        )
        if cache_stats is not None:
            notes.append(
                f"judge model cache: {cache_stats.hits} hits, {cache_stats.misses} misses "
                "(stored in the database; a second run is served from it)"
            )
        record = store.runs.get(run.id)
        results = list(store.runs.results(run.id))
        folder = report_dir or Path(".assay") / "reports"
        report_path = write_html_report(folder / f"demo-{run.id[:8]}.html", record, results)
    finally:
        if own:
            store.close()
    rows = [
        DemoRow(
            result.item_id,
            {k: v for k, v in result.scores.items() if v.reason != "not applicable"},
        )
        for result in results
    ]
    labels = {scorer.id: scorer.label for scorer in scorers}
    return DemoReport(labels, rows, notes, run_id=run.id, report_path=report_path)
