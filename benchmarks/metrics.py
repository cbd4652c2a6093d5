"""Throughput of assay's task metrics against the libraries they wrap (issue 10).

Over N prediction/reference pairs built from STS-B (sentence2 as the prediction, sentence1
as the reference, cycling through train + dev + test), in one run:

* ``direct``: the library called the plain way: ``sacrebleu.corpus_bleu`` /
  ``corpus_chrf`` on the lists, ``rouge_score.RougeScorer.score`` in a loop, ``==`` for
  exact match; then a mean where the metric is a mean;
* ``assay (batch)``: assay's metric function plus its registered aggregation:
  ``exact_match``/``rouge`` called once on all pairs (then mean), ``bleu``/``chrf`` called
  per pair for its corpus item (then the sacrebleu corpus aggregation);
* ``assay (per doc)``: what a task does per doc, ``process_generate_until`` for every pair,
  then ``aggregate_metrics`` (without stderr);
* lm-eval's own metric functions when ``lm_eval`` is importable (else "not installed").

Overhead is direct items/s ÷ assay items/s (goal ≤ 1.2×). A second table times lm-eval's
bootstrap stderr (100,000 resamples) through ``stderr_for`` against the literal
lm-eval loop, extrapolated from 2,000 resamples where both give the same value. Every
path's value is checked to be the same number. Usage::

    .venv/bin/python benchmarks/metrics.py [--pairs 20000] [--repeat 1] [--data DIR]
        [--metrics exact_match bleu chrf rouge] [--no-per-doc]

The default (20,000 pairs) runs in about two minutes on 2 shared cores; the RESULTS row uses
``--pairs 100000``. The STS-B files come from ``../shared/data/stsb/`` unless ``--data``
names another directory with ``stsb_{train,dev,test}.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "stsb"
METRICS = ("exact_match", "bleu", "chrf", "rouge")


def load_pairs(directory: Path, n: int) -> tuple[list[str], list[str]]:
    rows: list[dict[str, Any]] = []
    for split in ("train", "dev", "test"):
        path = directory / f"stsb_{split}.jsonl"
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    refs = [rows[i % len(rows)]["sentence1"] for i in range(n)]
    preds = [rows[i % len(rows)]["sentence2"] for i in range(n)]
    return refs, preds


REPEAT = 1


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """The best wall time of ``REPEAT`` calls, and the value."""
    best, value = math.inf, None
    for _ in range(REPEAT):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


# --------------------------------------------------------------------------- direct


def direct(metric: str, refs: list[str], preds: list[str]) -> Any:
    import sacrebleu

    if metric == "exact_match":
        return sum(p == r for p, r in zip(preds, refs, strict=True)) / len(preds)
    if metric == "bleu":
        return sacrebleu.corpus_bleu(preds, [refs]).score
    if metric == "chrf":
        return sacrebleu.corpus_chrf(preds, [refs]).score
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    sums = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    for r, p in zip(refs, preds, strict=True):
        scores = scorer.score(r, p)
        for key in sums:
            sums[key] += scores[key].fmeasure
    return {key: value / len(preds) for key, value in sums.items()}


# --------------------------------------------------------------------------- assay


def assay_batch(metric: str, refs: list[str], preds: list[str]) -> Any:
    from assay.tasks.metrics import TASK_AGGREGATIONS, TASK_METRICS

    entry = TASK_METRICS.get(metric)
    if metric in ("bleu", "chrf"):  # a corpus item per doc: (the doc's references, prediction)
        values: Any = [item for r, p in zip(refs, preds, strict=True) for item in entry.fn(r, [p])]
    else:  # exact_match and rouge take the pairs at once (references paired with predictions)
        values = entry.fn(refs, preds)
    if isinstance(values, dict):
        aggregate = TASK_AGGREGATIONS.get(entry.aggregation).fn
        out = {key: aggregate(v) for key, v in values.items()}
        return out["exact_match"] if metric == "exact_match" else out
    return TASK_AGGREGATIONS.get(entry.aggregation).fn(values)


def assay_per_doc(metric: str, refs: list[str], preds: list[str]) -> Any:
    from assay.tasks.metrics import aggregate_metrics, aggregation_for, process_generate_until

    raw: dict[tuple[str, str], list[Any]] = {}
    sources: dict[str, str] = {}
    entries = [(metric, {})]
    for r, p in zip(refs, preds, strict=True):
        values = process_generate_until(p, r, entries, choices=None, multiple_targets=False)
        sources.update(values.sources)
        for key, value in values.items():
            raw.setdefault((key, "none"), []).append(value)
    aggregations = {key: aggregation_for(key, sources) for key, _ in raw}
    out = aggregate_metrics(raw, aggregations, bootstrap_iters=0)
    if metric == "rouge":
        return {key: out[f"{key},none"] for key in ("rouge1", "rouge2", "rougeL")}
    return out[f"{metric},none"]


def lm_eval_path(metric: str, refs: list[str], preds: list[str]) -> Any:
    from lm_eval.api import metrics as lm  # type: ignore[import-not-found]

    if metric == "exact_match":
        return lm.exact_match_hf_evaluate(predictions=preds, references=refs)["exact_match"]
    if metric in ("bleu", "chrf"):
        return getattr(lm, metric)(list(zip(refs, preds, strict=True)))
    return None  # lm-eval has no registered rouge


def literal_bootstrap(statistic: Callable[[list[Any]], Any], xs: list[Any], iters: int) -> float:
    """lm-eval's single-process bootstrap, written out plainly (the reference timing)."""
    import random

    replicates = []
    chunk = min(1000, iters)
    for i in range(iters // chunk):
        rnd = random.Random(i)
        replicates.extend(statistic(rnd.choices(xs, k=len(xs))) for _ in range(chunk))
    mu = sum(replicates) / len(replicates)
    return math.sqrt(sum((x - mu) ** 2 for x in replicates) / (len(replicates) - 1))


def stderr_table(items_count: int, iters: int, reference_iters: int) -> None:
    """Seconds for lm-eval's bootstrap stderr of ``items_count`` items with ``iters``
    resamples: assay (vectorised, same values) vs the literal loop, extrapolated from
    ``reference_iters`` resamples (checked equal at that size)."""
    import random
    import warnings

    from assay.tasks.metrics import TASK_AGGREGATIONS, stderr_for

    rnd = random.Random(0)
    numbers = [rnd.gauss(-2.0, 1.0) for _ in range(items_count)]
    labels = [(rnd.randrange(2), rnd.randrange(2)) for _ in range(items_count)]
    print(f"\nstderr: {items_count:,} items, {iters:,} bootstrap resamples")
    print("| aggregation | assay s | literal lm-eval loop s (extrapolated) | speed-up |")
    print("|---|---|---|---|")
    for name in ("median", "perplexity", "matthews_corrcoef", "f1"):
        items: list[Any] = list(labels) if name in ("matthews_corrcoef", "f1") else numbers
        fn = TASK_AGGREGATIONS.get(name).fn
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_ref, v_ref = timed(lambda f=fn, xs=items: literal_bootstrap(f, xs, reference_iters))
            small = stderr_for(name, items, bootstrap_iters=reference_iters)
        assert small == v_ref, (name, small, v_ref)
        t_assay, _ = timed(lambda n=name, xs=items: stderr_for(n, xs, bootstrap_iters=iters))
        t_literal = t_ref * iters / reference_iters
        print(f"| {name} | {t_assay:.2f} | {t_literal:.1f} | {t_literal / t_assay:.0f}× |")


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return all(abs(a[k] - b[k]) <= 1e-12 for k in a)
    return bool(abs(a - b) <= 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20_000, help="100000 for the RESULTS row")
    parser.add_argument("--repeat", type=int, default=1, help="best of N timings per path")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--metrics", nargs="*", default=list(METRICS), choices=METRICS)
    parser.add_argument("--no-per-doc", action="store_true", help="skip the per-doc path")
    parser.add_argument(
        "--stderr-items", type=int, default=1000, help="items for the stderr table (0: skip)"
    )
    args = parser.parse_args()
    global REPEAT
    REPEAT = max(1, args.repeat)

    refs, preds = load_pairs(args.data, args.pairs)
    try:
        import lm_eval  # type: ignore[import-not-found]  # noqa: F401

        have_lm_eval = True
    except ImportError:
        have_lm_eval = False
    n = len(preds)
    for metric in args.metrics:  # warm up: imports, registry loading, scorer construction
        direct(metric, refs[:50], preds[:50])
        assay_batch(metric, refs[:50], preds[:50])
        assay_per_doc(metric, refs[:50], preds[:50])
    print(f"{n:,} STS-B pairs; {platform.python_implementation()} {platform.python_version()}")
    if args.metrics:
        header = "| metric | direct items/s | assay batch items/s | overhead "
        header += "| assay per-doc items/s | overhead | lm-eval items/s | same value |"
        print(header)
        print("|---|---|---|---|---|---|---|---|")
    for metric in args.metrics:
        t_direct, v_direct = timed(lambda m=metric: direct(m, refs, preds))
        t_batch, v_batch = timed(lambda m=metric: assay_batch(m, refs, preds))
        per_doc = "skipped"
        per_doc_ratio = "—"
        agree = same(v_direct, v_batch)
        if not args.no_per_doc:
            t_doc, v_doc = timed(lambda m=metric: assay_per_doc(m, refs, preds))
            per_doc = f"{n / t_doc:,.0f}"
            per_doc_ratio = f"{t_doc / t_direct:.2f}×"
            agree = agree and same(v_direct, v_doc)
        lm = "not installed"
        if have_lm_eval:
            t_lm, v_lm = timed(lambda m=metric: lm_eval_path(m, refs, preds))
            lm = "no rouge metric" if v_lm is None else f"{n / t_lm:,.0f}"
        print(
            f"| {metric} | {n / t_direct:,.0f} | {n / t_batch:,.0f} | {t_batch / t_direct:.2f}× "
            f"| {per_doc} | {per_doc_ratio} | {lm} | {'yes' if agree else 'NO'} |",
            flush=True,
        )
    if args.stderr_items:
        stderr_table(args.stderr_items, 100_000, 2_000)


if __name__ == "__main__":
    main()
