"""A Markdown summary of runs for a pull-request comment: per scorer mean and CI against a
baseline, regressions first, links to the stored runs.

A GitHub comment holds at most 65,536 characters. Everything that grows with the data (rows
per run and scorer, regressed items) is added in order of importance while it fits, and what
did not fit is counted in one closing line, so the comment is never refused and never ends
mid-table. Names from the data are escaped (a ``|`` would break the table, a backtick the
code span) and long ones shortened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.analysis.compare import RunComparison, ScorerComparison
from assay.types import RunRecord, ScorerSummary

GITHUB_COMMENT_LIMIT = 65_536
ITEMS_PER_SCORER = 10
_NAME_MAX = 120
_ORDER = {"regressed": 0, "insufficient_data": 1, "not_significant": 2, None: 3, "improved": 4}
_MARK = {"regressed": "🔴", "improved": "🟢", "not_significant": "⚪", "insufficient_data": "⚪"}


@dataclass(frozen=True)
class SummaryEntry:
    """One run, with its baseline run and the comparison against it when there is one."""

    record: RunRecord
    baseline: RunRecord | None = None
    comparison: RunComparison | None = None


def escape_cell(text: str, limit: int = _NAME_MAX) -> str:
    """``text`` safe in a table cell: one line, pipes escaped, at most ``limit`` chars."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return flat.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def _code(text: str) -> str:
    flat = " ".join(str(text).split())[:_NAME_MAX].replace("`", "'")
    return f"`{flat}`"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _run_link(record: RunRecord, server_url: str | None) -> str:
    label = escape_cell(record.info.name or record.id[:8])
    if server_url:
        return f"[{label}]({server_url.rstrip('/')}/runs/{record.id})"
    return f"{label} (`{record.id[:8]}`)" if record.info.name else f"`{record.id[:8]}`"


def _row(
    entry: SummaryEntry,
    key: str,
    s: ScorerSummary | None,
    c: ScorerComparison | None,
    url: str | None,
) -> tuple[int, str]:
    verdict = c.verdict if c is not None else None
    mean = _num(s.mean if s is not None else None)
    if s is not None and s.ci_low is not None and s.ci_high is not None:
        mean += f" [{s.ci_low:.3g}, {s.ci_high:.3g}]"
    if c is not None and c.delta is not None:
        delta = f"{c.delta:+.3g}"
        if c.ci_low is not None and c.ci_high is not None:
            delta += f" [{c.ci_low:+.3g}, {c.ci_high:+.3g}]"
        base = _num(c.mean_a)
        what = f"{verdict.replace('_', ' ')} (n={c.n_paired})" if verdict else ""
    else:
        delta, base = "—", "—"
        what = "no baseline" if entry.baseline is None else "no paired items"
    mark = _MARK.get(verdict or "", "")
    line = (
        f"| {mark} | {_run_link(entry.record, url)} | {escape_cell(key)} | {mean} | {base} | "
        f"{delta} | {what} |"
    )
    return _ORDER.get(verdict, 3), line


def ci_markdown(
    entries: Sequence[SummaryEntry],
    *,
    server_url: str | None = None,
    title: str = "assay",
    limit: int = GITHUB_COMMENT_LIMIT,
) -> str:
    """The Markdown comment (at most ``limit`` characters; see the module docstring)."""
    rows: list[tuple[int, str, int]] = []
    regressions = 0
    for n, entry in enumerate(entries):
        summary = entry.record.summary
        scorers = dict(summary.scorers) if summary is not None else {}
        compared = {c.scorer_id: c for c in entry.comparison.scorers} if entry.comparison else {}
        for key in list(scorers) + [k for k in compared if k not in scorers]:
            order, line = _row(entry, key, scorers.get(key), compared.get(key), server_url)
            regressions += order == 0
            rows.append((order, line, n))
    rows.sort(key=lambda r: (r[0], r[2]))
    head = [f"### {escape_cell(title, 200)}", ""]
    counts = f"**{len(entries)} run(s)**, {regressions} significant regression(s)"
    tags = sorted({t for e in entries for t in e.record.info.tags if t.startswith("git.")})
    if tags:
        counts += " · " + ", ".join(_code(t) for t in tags[:4])
    head += [counts, ""]
    if not rows:
        return "\n".join([*head, "_No scores._", ""])[:limit]
    table = [
        "| | run | scorer | mean [95% CI] | baseline | Δ [95% CI] | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    details = _regressed_items(entries)
    reserve = 300  # the closing line that counts what was cut
    out = "\n".join([*head, *table])
    shown_rows = 0
    for _, line, _ in rows:
        if len(out) + len(line) + 1 + reserve > limit:
            break
        out += "\n" + line
        shown_rows += 1
    shown_details = 0
    if shown_rows == len(rows) and details:
        section = "\n\n**Regressed items** (worst first)\n"
        if len(out) + len(section) + reserve <= limit:
            out += section
            for line in details:
                if len(out) + len(line) + 1 + reserve > limit:
                    break
                out += "\n" + line
                shown_details += 1
    cut_rows, cut_items = len(rows) - shown_rows, len(details) - shown_details
    if cut_rows or cut_items:
        parts = []
        if cut_rows:
            parts.append(f"{cut_rows} more row(s)")
        if cut_items:
            parts.append(f"{cut_items} more regressed item(s)")
        out += (
            f"\n\n_… {' and '.join(parts)} not shown: a comment holds {limit:,} characters; "
            "see `assay runs compare` or the web UI._"
        )
    return out + "\n"


def _regressed_items(entries: Sequence[SummaryEntry]) -> list[str]:
    lines = []
    for entry in entries:
        if entry.comparison is None:
            continue
        name = escape_cell(entry.record.info.name or entry.record.id[:8])
        for c in entry.comparison.scorers:
            if c.verdict != "regressed":
                continue
            for d in c.regressed[:ITEMS_PER_SCORER]:
                lines.append(
                    f"- {name} · {escape_cell(c.scorer_id)} · {_code(d.item_id)}: "
                    f"{d.score_a:.3g} → {d.score_b:.3g} ({d.delta:+.3g})"
                )
            if len(c.regressed) > ITEMS_PER_SCORER:
                lines.append(
                    f"- {name} · {escape_cell(c.scorer_id)}: "
                    f"and {len(c.regressed) - ITEMS_PER_SCORER} more item(s)"
                )
    return lines
