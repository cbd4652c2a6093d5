"""The pytest session's side of assay: scores recorded per test, stored as runs at the end.

Created by the first assay test of a session (``session_for``) and kept in the config's
stash by the plugin (``assay_pytest``), which calls ``finish`` at the end of the session and
``report`` for the terminal summary. A session that never used assay never builds one.

At the end, every test that called ``assert_score`` becomes one stored run (its cases are the
run's items, named by their parametrize ids, so a rerun of the same suite pairs item by item
with ``runs compare``); every ``assay_eval`` call was stored as it ran. All of them carry the
session's tags: ``assay.session=<id>``, ``pytest``, and the git commit and branch when there
is a repository (``git.commit=...``, ``git.branch=...``; CI variables first). Then come the
baseline comparisons and updates and the Markdown summary (``--assay-summary``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.summary.accumulator import SummaryAccumulator
from assay.types import Item, ItemResult, RunInfo, RunRecord, ScorerSpec, TargetSpec

if TYPE_CHECKING:
    import pytest

    from assay.analysis.compare import RunComparison
    from assay.store import Store

PLUGIN_MODULE = "assay_pytest"
MAX_RUN_LINES = 20
"""Runs listed one line each in the terminal summary; more are counted."""
DEFAULT_BASELINE = "default"


def plugin() -> Any:
    """The loaded plugin module, or ``None`` (pytest not running it, or ``-p no:assay``)."""
    return sys.modules.get(PLUGIN_MODULE)


def session_for(config: pytest.Config) -> AssaySession | None:
    """The session's ``AssaySession``, created on first use; ``None`` without the plugin."""
    module = plugin()
    if module is None:
        return None
    state: AssaySession | None = config.stash.get(module.SESSION_KEY, None)
    if state is None:
        state = AssaySession(config)
        config.stash[module.SESSION_KEY] = state
    return state


def current_test() -> pytest.Item | None:
    """The test whose body is running, as the plugin saw it (``None`` outside pytest)."""
    module = plugin()
    return None if module is None else module.current_item()


def configured_db_url() -> str | None:
    """``--assay-db`` of the running pytest session, if any (else the default store)."""
    module = plugin()
    config = None if module is None else module.current_config()
    return None if config is None else config.getoption("assay_db", None)


def test_group(node: pytest.Item) -> str:
    """A test's id without its parametrize suffix: the run its cases go to."""
    original = getattr(node, "originalname", None)
    if original and node.name != original and node.nodeid.endswith(node.name):
        return node.nodeid[: len(node.nodeid) - len(node.name)] + str(original)
    return str(node.nodeid)


@dataclass
class CaseGroup:
    """The ``assert_score`` cases of one test function (all its parametrizations)."""

    name: str
    path: str | None
    items: list[Item] = field(default_factory=list)
    results: list[ItemResult] = field(default_factory=list)
    specs: dict[str, ScorerSpec] = field(default_factory=dict)
    target: TargetSpec | None = None
    repeats: int = 1
    started: float = field(default_factory=time.time)
    ids: dict[str, int] = field(default_factory=dict)

    def case_id(self, base: str) -> str:
        """``base`` the first time, then ``base#2``, ``base#3``: unique item ids."""
        seen = self.ids.get(base, 0) + 1
        self.ids[base] = seen
        return base if seen == 1 else f"{base}#{seen}"


@dataclass
class Entry:
    """One stored run of the session with its baseline and comparison (when asked for)."""

    record: RunRecord
    baseline: RunRecord | None = None
    comparison: RunComparison | None = None


class AssaySession:
    """What one pytest session did with assay (see the module docstring)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.id = uuid.uuid4().hex[:12]
        self.baseline: str | None = config.getoption("assay_baseline", None)
        self.update_baseline: bool = bool(config.getoption("assay_update_baseline", False))
        self.summary_path: str | None = config.getoption("assay_summary", None)
        self.db_url: str | None = config.getoption("assay_db", None)
        self.storing = not config.getoption("assay_no_store", False)
        self.groups: dict[str, CaseGroup] = {}
        self.run_ids: list[str] = []
        self.entries: list[Entry] = []
        self.lines: list[str] = []
        self._store: Store | None = None
        self._tags: list[str] | None = None

    # ------------------------------------------------------------------ while tests run
    def store(self) -> Store:
        """The session's store, opened on first use (``--assay-db``, else the default)."""
        if self._store is None:
            from assay.store import open_store

            self._store = open_store(self.db_url)
        return self._store

    @property
    def tags(self) -> list[str]:
        if self._tags is None:
            self._tags = [f"assay.session={self.id}", "pytest", *git_tags(self.config.rootpath)]
        return self._tags

    def record_case(
        self,
        node: pytest.Item,
        item: Item,
        results: list[ItemResult],
        specs: list[ScorerSpec],
        target: TargetSpec,
    ) -> str:
        """Keep one ``assert_score`` case (its repeats) for the test's run; its item id."""
        name = test_group(node)
        group = self.groups.get(name)
        if group is None:
            path = str(getattr(node, "path", "") or "") or None
            group = self.groups[name] = CaseGroup(name=name, path=path)
        callspec = getattr(node, "callspec", None)
        case_id = group.case_id(callspec.id if callspec is not None else "case")
        position = len(group.items)
        group.items.append(item.model_copy(update={"id": case_id}))
        group.results.extend(
            r.model_copy(update={"item_id": case_id, "position": position}) for r in results
        )
        for spec in specs:
            group.specs.setdefault(spec.id, spec)
        group.target = group.target or target
        group.repeats = max(group.repeats, max((r.repeat for r in results), default=0) + 1)
        return case_id

    def record_run(self, run_id: str) -> None:
        """An ``assay_eval`` run stored while its test ran."""
        self.run_ids.append(run_id)

    # ------------------------------------------------------------------ at the end
    def finish(self, session: pytest.Session) -> None:
        """Store the case runs, compare and update baselines (only from a session that
        passed), write the summary; a significant regression turns a passing session's exit
        status into 1."""
        import pytest

        if not self.storing:
            if self.baseline or self.update_baseline or self.summary_path:
                self.lines.append(
                    "baselines and the summary need stored runs: nothing done (--assay-no-store)"
                )
            return
        try:
            db = self.store()
            for group in self.groups.values():
                if group.results:
                    self.entries.append(Entry(self._store_group(db, group)))
            self.entries += [Entry(db.runs.get(run_id)) for run_id in self.run_ids]
            regressions = self._compare(db) if self.baseline else 0
            if (
                self.update_baseline
                and session.exitstatus == pytest.ExitCode.OK
                and not regressions
            ):
                self._update_baselines(db)
            elif self.update_baseline:
                self.lines.append(
                    f"baseline {self._baseline_tag()!r} not updated: the session failed"
                )
            if self.summary_path:
                self._write_summary()
        except Exception as exc:  # the session's verdict must not hide behind a traceback
            self.lines.append(f"error: could not finish the session's runs: {exc}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        if self.entries:
            self.lines[0:0] = [_scores_line(e.record) for e in self.entries[:MAX_RUN_LINES]]
            if len(self.entries) > MAX_RUN_LINES:
                more = len(self.entries) - MAX_RUN_LINES
                self.lines.insert(MAX_RUN_LINES, f"... and {more} more run(s)")
            hint = f"`assay runs list --tag assay.session={self.id}`"
            git = " ".join(t for t in self.tags if t.startswith("git."))
            self.lines.insert(
                0,
                f"{len(self.entries)} run(s) stored (session {self.id}{', ' + git if git else ''})"
                f" · {hint}",
            )
        if regressions and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _store_group(self, db: Store, group: CaseGroup) -> RunRecord:
        specs = list(group.specs.values())
        info = RunInfo(
            id=uuid.uuid4().hex,
            name=group.name,
            data_source=group.path,
            target=group.target or TargetSpec(kind="stored-output", label="stored outputs"),
            scorers=specs,
            concurrency=1,
            repeats=group.repeats,
            total_items=len(group.items),
            metadata={"pytest": {"test": group.name}},
            created_at=group.started,
            tags=self.tags,
        )
        db.runs.create(info, group.items)
        db.runs.mark_started(info.id)
        db.runs.write_results(info.id, group.results)
        accumulator = SummaryAccumulator(specs)
        for result in group.results:
            accumulator.add(result)
        summary = accumulator.summary(
            specs,
            threshold=None,
            duration_s=time.time() - group.started,
            repeats=group.repeats,
        )
        db.runs.finish(info.id, "completed", summary)
        return db.runs.get(info.id)

    def _baseline_tag(self) -> str:
        name = self.baseline or DEFAULT_BASELINE
        return name if "=" in name else f"baseline={name}"

    def _compare(self, db: Store) -> int:
        from assay.analysis.gates import check_regressions
        from assay.operations.stored_runs import compare_stored

        tag = self._baseline_tag()
        regressions = 0
        for entry in self.entries:
            name = entry.record.info.name
            # the newest tagged run of this test from an earlier session (this session's runs
            # carry its branch tag too: on main, "git.branch=main" means the last main run)
            mine = f"assay.session={self.id}"
            found = next(
                (r for r in db.runs.list(limit=50, tag=tag, name=name) if mine not in r.info.tags),
                None,
            )
            if found is None:
                self.lines.append(
                    f"{name}: no baseline run tagged {tag!r} (record one with "
                    "--assay-update-baseline)"
                )
                continue
            entry.baseline = found
            entry.comparison = compare_stored(found.id, entry.record.id, store=db)
            failures = check_regressions(entry.comparison)
            regressions += len(failures)
            for failure in failures:
                self.lines.append(
                    f"REGRESSION {name} (run {entry.record.id[:8]} vs baseline "
                    f"{found.id[:8]}): {failure.reason}"
                )
            if not failures:
                self.lines.append(f"{name}: no significant regression vs baseline {found.id[:8]}")
        return regressions

    def _update_baselines(self, db: Store) -> None:
        tag = self._baseline_tag()
        for entry in self.entries:
            db.runs.move_tag(tag, entry.record.id, name=entry.record.info.name)
        self.lines.append(f"baseline {tag!r} is now this session's {len(self.entries)} run(s)")

    def _write_summary(self) -> None:
        from assay.operations.ci_summary import SummaryEntry, server_url_from_env, session_markdown

        assert self.summary_path is not None
        text = session_markdown(
            [SummaryEntry(e.record, e.baseline, e.comparison) for e in self.entries],
            server_url=server_url_from_env(),
            title=f"assay · pytest session {self.id}",
        )
        path = Path(self.summary_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.lines.append(f"wrote {path} ({len(text):,} characters)")

    def report(self, terminal: Any) -> None:
        """The session's lines in pytest's terminal summary."""
        if not self.lines:
            return
        terminal.write_sep("-", "assay")
        for line in self.lines:
            terminal.write_line(f"assay: {line}")

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def _scores_line(record: RunRecord) -> str:
    """``test: scorer mean [CI], ... · run id``: one stored run in the terminal summary."""
    parts = []
    for key, s in (record.summary.scorers if record.summary else {}).items():
        text = f"{key} {'none' if s.mean is None else format(s.mean, '.3g')}"
        if s.ci_low is not None and s.ci_high is not None:
            text += f" [{s.ci_low:.3g}, {s.ci_high:.3g}]"
        parts.append(text)
    return f"{record.info.name}: {', '.join(parts) or 'no scores'} · run {record.id[:8]}"


def git_tags(root: Path) -> list[str]:
    """``git.commit=SHA`` and ``git.branch=NAME`` of the checkout at ``root``: the CI's
    variables when set (GitHub Actions, GitLab CI), else ``git`` itself; none outside a
    repository or without ``git``."""
    env = os.environ
    commit = env.get("GITHUB_SHA") or env.get("CI_COMMIT_SHA")
    branch = (
        env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or env.get("CI_COMMIT_REF_NAME")
    )
    if commit is None:
        commit = _git(root, "rev-parse", "HEAD")
    if branch is None:
        branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
        if branch == "HEAD":  # detached
            branch = None
    tags = []
    for key, value in (("git.commit", commit), ("git.branch", branch)):
        clean = "".join(ch for ch in value or "" if ch.isprintable()).strip()
        if clean:  # a variable holding junk must not fail the session
            tags.append(f"{key}={clean[: 255 - len(key) - 1]}")
    return tags


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out and "\n" not in out else None
