"""What of a stored result the server shows its clients: errors capped and neutralised,
tracebacks left out.

Why: an item's error can quote the response body of whatever host a model call reached
(``HTTP 500 from ...: <body>``), and a target's error carries a traceback with the
server's file paths. Both stay whole in the store (``assay runs show``, the CLI's exports,
Python), where the operator reads them; an API or UI client gets at most
``MAX_ERROR_CHARS`` characters of a message, with control characters (terminal escapes,
NUL, bidirectional overrides) replaced, and no traceback.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from pydantic import BaseModel

from assay.optimize.feed import ErrorUpdate, LogLine, Scoreboard
from assay.types import ItemResult, ScoreResult

MAX_ERROR_CHARS = 300
MAX_LOG_CHARS = 1000
"""A log line or an optimization's failure may say more (still capped)."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe_text(text: str | None, limit: int = MAX_ERROR_CHARS) -> str | None:
    """``text`` with control and bidirectional-format characters replaced by U+FFFD and
    cut after ``limit`` characters (saying how many were left out)."""
    if text is None:
        return None
    cleaned = _CONTROL.sub("\ufffd", text)
    cleaned = "".join(
        "\ufffd" if unicodedata.category(c) == "Cf" and c not in "\u200d" else c for c in cleaned
    )
    if len(cleaned) > limit:
        left = len(cleaned) - limit
        cleaned = (
            f"{cleaned[:limit]}... [{left} more characters: see the run in the server's store]"
        )
    return cleaned


def score_for_client(score: ScoreResult) -> ScoreResult:
    """``score`` with its error message and its judge calls' errors made safe."""
    update: dict[str, Any] = {}
    if score.error is not None:
        update["error"] = score.error.model_copy(update={"message": safe_text(score.error.message)})
    if any(call.error for call in score.judge_calls):
        update["judge_calls"] = [
            call.model_copy(update={"error": safe_text(call.error)}) if call.error else call
            for call in score.judge_calls
        ]
    return score.model_copy(update=update) if update else score


def result_for_client(result: ItemResult) -> ItemResult:
    """``result`` as an API or UI client sees it: no traceback, errors made safe."""
    update: dict[str, Any] = {}
    if result.error is not None:
        update["error"] = result.error.model_copy(
            update={"message": safe_text(result.error.message), "traceback": None}
        )
    scores = {key: score_for_client(score) for key, score in result.scores.items()}
    if any(scores[key] is not score for key, score in result.scores.items()):
        update["scores"] = scores
    return result.model_copy(update=update) if update else result


def result_dict_for_client(result: dict[str, Any]) -> dict[str, Any]:
    """``result_for_client`` on a result's JSON dict (``ItemResult.model_dump(mode="json")``
    's shape, as a fast export reads it: ``store.result_export``); the same changes, so
    the line written is the same."""
    error = result["error"]
    scores = result["scores"]
    scores_change = any(
        s["error"] is not None or any(c["error"] for c in s["judge_calls"]) for s in scores.values()
    )
    if error is None and not scores_change:
        return result  # the usual result, unchanged: no copy per exported line
    changed = dict(result)
    if error is not None:
        changed["error"] = {**error, "message": safe_text(error["message"]), "traceback": None}
    if scores_change:
        changed["scores"] = {key: _score_dict_for_client(s) for key, s in scores.items()}
    return changed


def _score_dict_for_client(score: dict[str, Any]) -> dict[str, Any]:
    changed = dict(score)
    if score["error"] is not None:
        changed["error"] = {**score["error"], "message": safe_text(score["error"]["message"])}
    changed["judge_calls"] = [
        {**call, "error": safe_text(call["error"])} if call["error"] else call
        for call in score["judge_calls"]
    ]
    return changed


def event_for_client(event: BaseModel) -> BaseModel:
    """An optimization event (``optimize.feed``) with its errors made safe: a scoreboard
    row's error and its failed scorers' messages, an alert (a failed reflection), the
    optimization's failure."""
    if isinstance(event, Scoreboard):
        rows = [
            row.model_copy(
                update={
                    "error": safe_text(row.error),
                    "scorers": {
                        key: cell.model_copy(update={"reason": safe_text(cell.reason)})
                        if cell.status == "error"
                        else cell
                        for key, cell in row.scorers.items()
                    },
                }
            )
            for row in event.rows
        ]
        return event.model_copy(update={"rows": rows})
    if isinstance(event, ErrorUpdate) or (isinstance(event, LogLine) and event.channel == "alerts"):
        return event.model_copy(update={"message": safe_text(event.message, MAX_LOG_CHARS)})
    return event  # other log lines are the server's own words and the prompts' diffs
