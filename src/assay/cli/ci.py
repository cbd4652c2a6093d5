"""``assay ci summary``: a stored run (against a baseline) as a Markdown PR comment."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.cli.common import CliError, console, open_cli_store

ci_app = typer.Typer(help="Continuous integration: summaries for pull requests.")


@ci_app.command("summary")
def ci_summary_command(
    run: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="Compare with this run (id or prefix).")
    ] = None,
    markdown: Annotated[
        bool, typer.Option("--markdown/--no-markdown", help="Markdown (the only format).")
    ] = True,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")
    ] = None,
    server_url: Annotated[
        str | None,
        typer.Option(
            "--server-url", help="Link runs to this assay server (default $ASSAY_SERVER_URL)."
        ),
    ] = None,
) -> None:
    """Per scorer mean and 95% CI vs the baseline, regressions first; fits a GitHub
    comment (65,536 characters: long lists are cut with a count)."""
    from assay.operations.ci_summary import ci_summary

    if not markdown:
        raise CliError("--no-markdown: Markdown is the only summary format")
    try:
        with open_cli_store() as store:
            text = ci_summary(run, baseline=baseline, store=store, server_url=server_url)
    except LookupError as exc:
        raise CliError(str(exc).strip("'\"")) from exc
    if output is None:
        print(text, end="")
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"--output {output}: {exc.strerror or exc}") from exc
    console.print(f"wrote {output}", highlight=False)
