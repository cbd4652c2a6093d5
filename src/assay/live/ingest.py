"""``ingest``: score recorded traffic offline and store it as a live run.

Why ids already stored are not scored again (rather than scored and refused at write):
re-ingesting a file must add nothing and cost nothing; the judge is the expensive part.
The write is still idempotent (``store.live.write``) for two ingests racing.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from assay.live.otel import TraceFormatError, otel_items
from assay.live.runs import open_live_run
from assay.runner.scorer_set import build_scorers
from assay.store.codec import chunked
from assay.store.engine import Store
from assay.summary.accumulator import SummaryAccumulator
from assay.targets.base import jsonable
from assay.types import Item, ItemResult, ScoreResult, TargetSpec

IngestFormat = Literal["otel-json", "jsonl"]


def read_items(path: Path, fmt: IngestFormat) -> Iterator[Item]:
    """The items of a trace file: OTLP JSON (one document, or one per line as the OTel
    file exporter writes) or JSONL of items (``id``, ``input``, ``output``, ...)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    if fmt == "otel-json":
        try:
            documents = [json.loads(text)]
        except json.JSONDecodeError:
            documents = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        documents.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise TraceFormatError(f"line {n}: not JSON ({exc.msg})") from None
        for document in documents:
            yield from otel_items(document)
        return
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceFormatError(f"line {n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise TraceFormatError(f"line {n}: expected a JSON object")
        try:
            yield Item.model_validate(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "row"
            raise TraceFormatError(f"line {n}: field {field!r}: {first['msg']}") from None


async def _score(item: Item, scorers: Sequence[Any], limit: asyncio.Semaphore) -> ItemResult:
    async with limit:
        started = time.time()
        results: list[ScoreResult] = await asyncio.gather(
            *(
                scorer.run(
                    output=item.output,
                    input=item.input,
                    ground_truth=item.expected_output,
                    context=item.context,
                    call_id=item.id,
                    metadata=item.metadata,
                )
                for scorer in scorers
            )
        )
    return ItemResult(
        item_id=item.id,
        input=jsonable(item.input),
        output=jsonable(item.output),
        expected_output=jsonable(item.expected_output),
        scores={s.id: r for s, r in zip(scorers, results, strict=True)},
        started_at=started,
        completed_at=time.time(),
    )


async def ingest_async(
    store: Store,
    path: Path,
    *,
    fmt: IngestFormat,
    scorers: Sequence[Any],
    name: str | None = None,
    concurrency: int = 8,
) -> dict[str, Any]:
    """Score the file's items not yet in the live run ``name`` (default: the file's stem)
    and store them; returns the run id and what was added, skipped and failed. The file is
    read through once first: a malformed line stores nothing (no run, no rows) instead of
    the rows before it and a run left running."""
    built = build_scorers(scorers)
    if not built:
        raise ValueError("scorers: ingest needs at least one scorer")
    name = name or path.stem
    for _ in read_items(path, fmt):  # a bad file fails here, before any run exists
        pass
    target = TargetSpec(kind="stored-output", label=f"ingest:{path.name}", config={"format": fmt})
    run_id, _ = open_live_run(store, name, "all", target, built, concurrency=concurrency)
    known = store.runs.completed_keys(run_id)
    position = store.live.next_position(run_id)
    limit = asyncio.Semaphore(concurrency)
    added = skipped = failed = 0
    for chunk in chunked(read_items(path, fmt), 200):
        fresh = [item for item in chunk if (item.id, 0) not in known]
        skipped += len(chunk) - len(fresh)
        results = await asyncio.gather(*(_score(item, built, limit) for item in fresh))
        rows = []
        fates: list[tuple[str, str | None]] = []
        for result in results:
            errors = any(s.status == "error" for s in result.scores.values())
            fate, reason = ("failed", "scorer_error") if errors else ("scored", None)
            # recorded traffic is taken whole: no sampling decision, so no rate
            meta = {"decision": "ingested", "fate": fate, "reason": reason}
            rows.append(result.model_copy(update={"position": position, "meta": meta}))
            position += 1
            fates.append((fate, reason))
        counted = await asyncio.to_thread(store.live.write, run_id, rows, fates=fates)
        added += sum(v for k, v in counted.items() if k == "scored" and isinstance(v, int))
        failed += sum((counted.get("failed") or {}).values())
        known.update((item.id, 0) for item in fresh)
    record = store.runs.get(run_id)
    accumulator = SummaryAccumulator(record.info.scorers)
    for result in store.runs.results(run_id):
        accumulator.add(result)
    summary = accumulator.summary(record.info.scorers, threshold=None, duration_s=None)
    store.runs.finish(run_id, "completed", summary)
    return {
        "run_id": run_id,
        "name": name,
        "added": added,
        "failed": failed,
        "skipped": skipped,
        "stored": store.runs.get(run_id).completed_results,
    }
