"""``assay live status NAME``: a monitor's counts, rates, budget and latest scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from assay.cli.common import CliError, console, open_cli_store, when

live_app = typer.Typer(help="Live scoring: monitors of running applications.")


@live_app.command("status")
def live_status_command(
    name: Annotated[str, typer.Argument(help="The monitor's name.")],
    recent: Annotated[int, typer.Option("--recent", "-n", help="How many latest rows.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Counts (observed, eligible, sampled, scored, dropped, failed), rates, budget used
    and the latest scores of the monitor's current live run."""
    from assay.live.status import LiveRunNotFoundError, live_status

    with open_cli_store() as store:
        try:
            status = live_status(store, name, recent=recent)
        except LiveRunNotFoundError as exc:
            raise CliError(str(exc)) from exc
    if as_json:
        print(json.dumps(status, indent=2))
        return
    counts = status["counts"]
    budget = status["budget"] or {}
    console.print(f"monitor: {name}  run: {status['run_id']}  period: {status['period']}")
    console.print(f"status: {status['status']}  updated: {when(status['updated_at'])}")
    console.print(
        f"rate: {status['rate']}  observed sample rate: "
        + (
            "-"
            if status["observed_sample_rate"] is None
            else f"{status['observed_sample_rate']:.3f}"
        )
    )
    console.print(
        "observed {observed}  eligible {eligible}  sampled {sampled}  scored {scored}  "
        "duplicate {duplicate}  "
        "not sampled {not_sampled}  filtered out {filtered_out}".format(**counts)
    )
    console.print(f"dropped: {counts['dropped'] or '-'}  failed: {counts['failed'] or '-'}")
    console.print(f"stored results: {status['stored_results']}")
    if budget.get("limit_usd") is not None:
        console.print(
            f"budget: ${budget.get('spent_usd', 0.0):.6f} of ${budget['limit_usd']} per "
            f"{budget.get('window_s', 0):g}s window"
        )
    for row in status["recent"]:
        scores = ", ".join(
            f"{k}={'-' if v is None else f'{v:.3f}'}" for k, v in row["scores"].items()
        )
        note = "; ".join(row["warnings"])
        console.print(f"  {row['id']}  {scores or note}")


def ingest_command(
    file: Annotated[Path, typer.Argument(help="The trace file.", exists=True, dir_okay=False)],
    fmt: Annotated[
        str, typer.Option("--format", help="otel-json (OTLP JSON GenAI spans) or jsonl (items).")
    ] = "otel-json",
    scorers: Annotated[
        list[str] | None, typer.Option("--scorers", "-s", help="Scorer type ids (repeatable).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="The live run's name.")] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Items scored at once.")
    ] = 8,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Score recorded traffic with SCORERS and store it as a live run; items already
    stored (same trace and span ids) are skipped, so re-ingesting adds nothing."""
    import asyncio

    from assay.live.ingest import ingest_async
    from assay.live.otel import TraceFormatError

    if fmt not in ("otel-json", "jsonl"):
        raise CliError(f"--format: expected otel-json or jsonl, got {fmt!r}")
    names = [s for entry in scorers or [] for s in entry.split(",") if s.strip()]
    if not names:
        raise CliError("--scorers: give at least one scorer type id")
    with open_cli_store() as store:
        try:
            outcome = asyncio.run(
                ingest_async(
                    store,
                    file,
                    fmt=fmt,  # type: ignore[arg-type]
                    scorers=names,
                    name=name,
                    concurrency=concurrency,
                )
            )
        except TraceFormatError as exc:
            raise CliError(f"{file.name}: {exc}") from exc
        except (KeyError, ValueError) as exc:
            raise CliError(str(exc).strip("'\"")) from exc
    if as_json:
        print(json.dumps(outcome, indent=2))
        return
    console.print(
        f"{outcome['name']}: added {outcome['added']}, failed {outcome['failed']}, "
        f"already stored {outcome['skipped']}; run {outcome['run_id']} has "
        f"{outcome['stored']} results"
    )
