"""The options of ``assay run``, ``assay calibrate`` and ``assay tasks run``, declared once
as ``Annotated`` aliases.

Why a module of its own: a command function then reads as what it does (parse → call →
print) instead of a hundred lines of declarations, and an option two commands share
(``--name``, ``--progress``, ``--store``) is written once, so its flag
name, default and help text cannot drift apart between commands. Flag names, defaults and
help texts are a contract with scripts and CI files: change them only on purpose
(``tests/cli/test_options.py`` and the ``--help`` tests read them).

The ``--backend``/``--ray-address``/``--workers`` trio of the commands that execute stored
runs lives in ``cli/backend_flags.py`` with the check that goes with it (``assay run`` has
its own ``--backend`` help and shares the other two).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# Shared by several commands.
NameOpt = Annotated[str | None, typer.Option("--name", help="A name for the run.")]
ProgressOpt = Annotated[
    bool | None,
    typer.Option("--progress/--no-progress", help="Show a progress bar (default: on a terminal)."),
]
_STORE_HELP = "Keep the run in the database."
StoreOpt = Annotated[bool | None, typer.Option("--store/--no-store", help=_STORE_HELP)]
"""Unset (``None``) means "the config's, else yes" (``assay run``)."""
StoreFlag = Annotated[bool, typer.Option("--store/--no-store", help=_STORE_HELP)]
"""A plain yes/no with a default of its command's own (``assay tasks run``)."""
JsonPathOpt = Annotated[str | None, typer.Option("--json", help="Write JSON results.")]
ReportOpt = Annotated[str | None, typer.Option("--report", help="Write an HTML report.")]

# assay run
RunConfigArg = Annotated[
    Path | None, typer.Argument(help="A run config (YAML). Flags override its fields.")
]
DataOpt = Annotated[str | None, typer.Option("--data", help="A data file.")]
DatasetOpt = Annotated[str | None, typer.Option("--dataset", help="A stored dataset.")]
VersionOpt = Annotated[int | None, typer.Option("--version", help="Dataset version.")]
TargetOpt = Annotated[
    str | None, typer.Option("--target", help="pkg.module:attr, or a JSON target config.")
]
ScorerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scorer",
        "-s",
        help="Scorer type id, JSON config, or a scorer config YAML file (repeatable).",
    ),
]
ItemConcurrencyOpt = Annotated[
    int | None, typer.Option("--concurrency", "-c", help="Items in flight at once (default 8).")
]
RepeatsOpt = Annotated[
    int | None, typer.Option("--repeats", help="Times each item runs (default 1).")
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        help="Pass level 0..1 on each scorer's normalized scale (0 worst, 1 best); a "
        "scorer config's own 'threshold' is on its own scale and wins.",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help="Seconds per item for the target call and for each scorer call (default: none).",
    ),
]
RunBackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="'local' (default) or 'ray': score on Ray workers over the store "
        "(pip install 'assay[ray]'; docs/scale-out.md).",
    ),
]
FailUnderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-under",
        help="SCORER=VALUE: exit 1 when the scorer's mean is on the bad side of VALUE "
        "(below it, or above it for lower-is-better scorers). Repeatable.",
    ),
]
RunGateOnOpt = Annotated[
    str,
    typer.Option(
        "--gate-on",
        help="What --fail-under checks: 'mean', or 'ci' (the pessimistic 95% CI bound).",
    ),
]
MaxErrorsOpt = Annotated[
    str | None,
    typer.Option(
        "--max-errors",
        help="Exit 1 when more than N results (or P% of them) have a target or scorer error.",
    ),
]
ItemLimitOpt = Annotated[
    int | None, typer.Option("--limit", help="Run at most the first N items (a smoke test).")
]
SampleOpt = Annotated[
    int | None, typer.Option("--sample", help="Run a random sample of N items (see --seed).")
]
SeedOpt = Annotated[
    int | None,
    typer.Option("--seed", help="Seed of --sample (default 0): same seed, same items."),
]
IdsOpt = Annotated[
    str | None, typer.Option("--ids", help="Run only these item ids, comma-separated: a,b.")
]
RequireCalibratedOpt = Annotated[
    bool | None,
    typer.Option(
        "--require-calibrated",
        help="Stop before the first item (exit 2) unless every scorer has a passing "
        "calibration certificate matching its current prompt, model and params.",
    ),
]

# assay calibrate
CalibrationConfigArg = Annotated[Path, typer.Argument(help="A calibration config (YAML).")]
StatisticsJsonOpt = Annotated[
    str | None, typer.Option("--json", help="Write every statistic with its CI here.")
]
MinOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--min",
        help="METRIC=VALUE: exit 1 when the statistic's lower 95% CI bound (--gate-on ci, the "
        "default) or its estimate (--gate-on point) is below VALUE, e.g. --min kappa=0.6. "
        "Repeatable; adds to the config's 'min'.",
    ),
]
CalibrationGateOnOpt = Annotated[
    str | None,
    typer.Option(
        "--gate-on",
        help="What --min checks: 'ci' (the lower 95% CI bound; default) or 'point'.",
    ),
]
RequireOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--require",
        help="STATISTIC: exit 1 unless this statistic is defined with a CI (e.g. roc_auc "
        "is undefined when the humans used one class only); an unknown name exits 2 before "
        "the first judge call. Repeatable; adds to the config's 'require'.",
    ),
]
DisagreementsOpt = Annotated[
    str | None,
    typer.Option(
        "--disagreements",
        help="Write the most-disagreeing items (input, output, label, score, reason) as a "
        "JSONL dataset file for `assay datasets import`.",
    ),
]
CalibrationReportOpt = Annotated[
    str | None, typer.Option("--report", help="Write an HTML report with the calibration.")
]
CalibrationProgressOpt = Annotated[
    bool | None,
    typer.Option("--progress/--no-progress", help="Show a progress bar (default: terminal)."),
]
PpiOpt = Annotated[
    str | None,
    typer.Option(
        "--ppi",
        help="RUN: the judge-corrected (PPI++) mean of each scorer of this stored run, from "
        "its items that carry the config's label; printed and written as 'judge_corrected' "
        "in --json.",
    ),
]

# assay tasks run
TaskFileArg = Annotated[Path, typer.Argument(help="A task YAML.")]
ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="The model (any assay model string).")
]
DocLimitOpt = Annotated[int | None, typer.Option("--limit", help="Only the first N docs.")]
NumFewshotOpt = Annotated[
    int | None, typer.Option("--num-fewshot", help="Few-shot examples per prompt.")
]
DocsOpt = Annotated[
    Path | None,
    typer.Option("--docs", help="Docs (JSONL/CSV/Parquet) replacing the task's dataset."),
]
PredictionsOpt = Annotated[
    Path | None,
    typer.Option(
        "--predictions",
        help='Recorded responses, JSONL lines {"doc_id": i, "responses": R}; no model.',
    ),
]
TaskJsonOpt = Annotated[
    Path | None,
    typer.Option("--json", help="Write per_doc and aggregate (lm-eval's shape) here."),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="An OpenAI-compatible endpoint.")
]
DocConcurrencyOpt = Annotated[
    int | None, typer.Option("--concurrency", "-c", help="Docs in flight at once.")
]
BootstrapItersOpt = Annotated[
    int,
    typer.Option("--bootstrap-iters", help="Bootstrap resamples for stderr (lm-eval's)."),
]
ApplyChatTemplateOpt = Annotated[
    bool,
    typer.Option(
        "--apply-chat-template",
        help="Send the prompt as chat messages, as lm-eval does (generate_until tasks).",
    ),
]
FewshotAsMultiturnOpt = Annotated[
    bool | None,
    typer.Option(
        "--fewshot-as-multiturn/--no-fewshot-as-multiturn",
        help="Few-shot examples as user/assistant turns (default: on with a chat template).",
        show_default=False,
    ),
]
SystemInstructionOpt = Annotated[
    str | None,
    typer.Option("--system-instruction", help="A system message put before the prompt."),
]
