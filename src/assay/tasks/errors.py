"""Errors of task configs and task docs, located by file and key path.

A task YAML is usually written by hand and often assembled from several files through
``include:``, so an error that only says "invalid value" is useless. Every problem carries the
file the key came from and its key path in the merged config (``filter_list[1].filter[0].
function``), and one error can carry several problems so a user fixes a file in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ConfigIssue:
    """One problem: where (file, key path) and what is wrong."""

    message: str
    key: str | None = None
    file: Path | str | None = None

    def render(self) -> str:
        parts = [str(p) for p in (self.file, self.key) if p not in (None, "")]
        parts.append(self.message)
        return ": ".join(parts)


class TaskConfigError(ValueError):
    """A task or group config cannot be used; ``issues`` lists every problem found."""

    def __init__(
        self,
        message: str | None = None,
        *,
        key: str | None = None,
        file: Path | str | None = None,
        issues: list[ConfigIssue] | None = None,
    ) -> None:
        found = list(issues or [])
        if message is not None:
            found.insert(0, ConfigIssue(message, key=key, file=file))
        if not found:
            found.append(ConfigIssue("invalid task config", file=file))
        self.issues = found
        super().__init__("\n".join(issue.render() for issue in found))

    @property
    def file(self) -> Path | str | None:
        """The file of the first problem."""
        return self.issues[0].file

    @property
    def key(self) -> str | None:
        """The key path of the first problem."""
        return self.issues[0].key


class TaskDocsError(TaskConfigError):
    """The docs of a task cannot be loaded or turned into prompts (names split, doc, field)."""


def key_path(parts: tuple[str | int, ...] | list[str | int]) -> str:
    """``("filter_list", 1, "filter", 0, "function")`` → ``filter_list[1].filter[0].function``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
