"""Size of the HTML report of a 1,000-item run (issue 27).

Workload (synthetic, seeded, shaped like a RAG question-answering eval with judges): each
item has an input of a question plus retrieved context (``--input-chars``, default 1,800
characters), an expected answer (``--expected-chars``, 300) and the application's answer
(``--output-chars``, 1,200); three scorers: ``exact-match`` (0/1, no reason) and two judge
scorers (``faithfulness``, ``relevance``) with reasons of ``--reason-chars`` (400) and
named values. Text is words drawn with Zipf-like frequencies from a fixed vocabulary, so
it wraps and clips the way prose does.

Prints the report's size in bytes and MB and how those bytes split between the charts
(``<svg>`` elements), the item table and everything else. Goal: ≤ 1.5 MB at 1,000 items.

Run: ``.venv/bin/python benchmarks/report_size.py [--items 1000] [--out report.html]``.
"""

from __future__ import annotations

import argparse
import random
import re
import time
from pathlib import Path

from assay.analysis.report_html import render_html_report
from assay.summary.accumulator import SummaryAccumulator
from assay.types import (
    ItemResult,
    RunInfo,
    RunRecord,
    ScoreResult,
    ScorerSpec,
    TargetSpec,
)

_SYLLABLES = ["ka", "lo", "mi", "re", "tan", "vo", "sel", "di", "pra", "un", "est", "or", "ba"]


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words, key=len)  # short words first: they get the high frequencies


def _text(rng: random.Random, vocab: list[str], weights: list[float], chars: int) -> str:
    out: list[str] = []
    length = 0
    while length < chars:
        sentence = rng.choices(vocab, weights, k=rng.randint(6, 18))
        sentence[0] = sentence[0].capitalize()
        piece = " ".join(sentence) + "."
        out.append(piece)
        length += len(piece) + 1
    return " ".join(out)[:chars]


def build(
    items: int,
    *,
    input_chars: int,
    expected_chars: int,
    output_chars: int,
    reason_chars: int,
    seed: int = 27,
) -> tuple[RunRecord, list[ItemResult]]:
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    specs = [
        ScorerSpec(id="exact-match", label="Exact match"),
        ScorerSpec(id="faithfulness", label="Faithfulness"),
        ScorerSpec(id="relevance", label="Answer relevance"),
    ]
    results = []
    for k in range(items):

        def text(chars: int) -> str:
            return _text(rng, vocab, weights, chars)

        def judged(sid: str, value: float) -> ScoreResult:
            return ScoreResult(
                scorer_id=sid,
                scorer_label=sid,
                call_id="r",
                status="ready",
                score=value,
                reason=text(reason_chars),
                values={"claims": float(rng.randint(1, 12)), "supported": value},
            )

        scores = {
            "exact-match": ScoreResult(
                scorer_id="exact-match",
                scorer_label="exact-match",
                call_id="r",
                status="ready",
                score=float(rng.random() < 0.4),
            ),
            "faithfulness": judged("faithfulness", round(rng.betavariate(5, 2), 3)),
            "relevance": judged("relevance", round(rng.betavariate(4, 2), 3)),
        }
        question = text(160)
        results.append(
            ItemResult(
                item_id=f"item-{k:05d}",
                position=k,
                input={"question": question, "context": text(max(0, input_chars - 190))},
                output=text(output_chars),
                expected_output=text(expected_chars),
                latency_ms=rng.uniform(200, 3000),
                scores=scores,
            )
        )
    acc = SummaryAccumulator(specs)
    for r in results:
        acc.add(r)
    info = RunInfo(
        id="run-report-size",
        name="rag-qa",
        dataset_id="ds-rag",
        dataset_name="rag-qa",
        dataset_version=1,
        target=TargetSpec(kind="callable", label="app:answer", ref="app:answer"),
        scorers=specs,
        threshold=0.5,
        total_items=items,
    )
    record = RunRecord.model_validate(
        {
            "info": info,
            "status": "completed",
            "summary": acc.summary(specs, threshold=0.5, duration_s=60.0),
            "started_at": 1.7e9,
            "completed_at": 1.7e9 + 60.0,
        }
    )
    return record, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--input-chars", type=int, default=1800)
    parser.add_argument("--expected-chars", type=int, default=300)
    parser.add_argument("--output-chars", type=int, default=1200)
    parser.add_argument("--reason-chars", type=int, default=400)
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args()
    record, results = build(
        args.items,
        input_chars=args.input_chars,
        expected_chars=args.expected_chars,
        output_chars=args.output_chars,
        reason_chars=args.reason_chars,
    )
    start = time.process_time()
    html = render_html_report(record, results)
    cpu = time.process_time() - start
    size = len(html.encode("utf-8"))
    svg = sum(len(m.encode("utf-8")) for m in re.findall(r"<svg\b.*?</svg>", html, re.S))
    table = re.search(r'<section id="items">.*?</section>', html, re.S)
    table_bytes = len(table.group(0).encode("utf-8")) if table else 0
    print(
        f"items {args.items:,} · input {args.input_chars} · expected {args.expected_chars} · "
        f"output {args.output_chars} · reasons {args.reason_chars} chars"
    )
    print(f"report {size:,} bytes = {size / 1e6:.2f} MB ({size / args.items:,.0f} bytes/item)")
    print(
        f"  charts (svg) {svg:,} · item table {table_bytes:,} · rest {size - svg - table_bytes:,}"
    )
    print(f"  render {cpu:.2f} s CPU")
    if args.out is not None:
        args.out.write_text(html, encoding="utf-8")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
