"""``assert_score``: one case, one scorer, a limit; the assertion message says why it failed.

    from assay.testing import assert_score

    def test_refund_answer():
        assert_score("exact-match", output=bot("refund?"), expected_output="30 days", min=1)

A case runs through the same runner as every run (``run_evals`` over one item, the stored
output as target), so a scorer behaves exactly as in ``assay run``. Under pytest with the
plugin the case is also kept for the test's stored run and its numbers go into the JUnit XML
as properties (``assay.<scorer>.score``, ``.min``/``.max``, ``.reason``; with repeats
``.pass_all``, ``.pass_any``, ``.flipped``).

With ``repeats=k`` the case is sampled k times (the model cache is bypassed so the samples
are independent, unless ``reuse_cache=True``) and ``require`` declares the verdict: ``"all"``
(default: every repeat passes, pass^k), ``"any"`` (one does, pass@k) or ``"mean"`` (the mean
of the repeats passes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.analysis.repeats import Require, check_require
from assay.runner.api import run_evals_async
from assay.runner.options import RunOptions
from assay.runner.result import RunResult
from assay.scoring.sync import run_sync
from assay.types import Item, ScoreResult, TargetError


class CaseVerdict(BaseModel):
    """The outcome of ``assert_score`` (returned when it passes, in the message when not)."""

    model_config = ConfigDict(frozen=True)

    scorer_id: str
    scores: list[float | None]
    """One per repeat (``None``: the scorer erred or declined)."""
    min: float | None = None
    max: float | None = None
    require: Require = "all"
    passed_repeats: list[bool]
    reasons: list[str | None]
    errors: list[str | None]
    cache_reused: bool = False
    item_id: str | None = None
    compared: str | None = None
    """``output ... vs expected ...`` (shortened), said when the scorer gives no reason."""

    @property
    def repeats(self) -> int:
        return len(self.scores)

    @property
    def pass_all(self) -> bool:
        """pass^k: every repeat passed."""
        return all(self.passed_repeats)

    @property
    def pass_any(self) -> bool:
        """pass@k: at least one repeat passed."""
        return any(self.passed_repeats)

    @property
    def flipped(self) -> bool:
        """Some repeats passed and some failed."""
        return self.pass_any and not self.pass_all

    @property
    def mean(self) -> float | None:
        numbers = [s for s in self.scores if s is not None]
        return sum(numbers) / len(numbers) if numbers else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """95% bootstrap CI of the mean over the repeats (``None`` below two scores)."""
        import numpy as np

        from assay.summary.bootstrap import bootstrap_mean_ci

        numbers = [s for s in self.scores if s is not None]
        return bootstrap_mean_ci(np.asarray(numbers, dtype=np.float64)) if numbers else None

    @property
    def passed(self) -> bool:
        """The verdict under ``require``."""
        if self.require == "all":
            return self.pass_all
        if self.require == "any":
            return self.pass_any
        mean = self.mean
        return mean is not None and within(mean, self.min, self.max)

    def limit_text(self) -> str:
        parts = []
        if self.min is not None:
            parts.append(f"min {self.min:g}")
        if self.max is not None:
            parts.append(f"max {self.max:g}")
        return " and ".join(parts)

    def message(self) -> str:
        """Why the case failed (or passed): score, limit, rule and reason, on one line."""
        shown = [_fmt(s) for s in self.scores]
        if self.repeats == 1:
            head = f"{self.scorer_id}: score {shown[0]}, {self.limit_text()}"
        else:
            rule = {"all": "every repeat", "any": "one repeat", "mean": "the mean"}[self.require]
            head = (
                f"{self.scorer_id}: scores {', '.join(shown)} over {self.repeats} repeats, "
                f"{self.limit_text()}, require={self.require!r} ({rule} must pass); "
                f"pass^{self.repeats} {'yes' if self.pass_all else 'no'}, "
                f"pass@{self.repeats} {'yes' if self.pass_any else 'no'}"
                f"{', flipped' if self.flipped else ''}, mean {_fmt(self.mean)}{self._ci_text()}; "
                f"model cache {'reused' if self.cache_reused else 'bypassed'}"
            )
        worst = self._telling_repeat()
        why = self.errors[worst] or self.reasons[worst]
        if why:
            return head + f"; {'error' if self.errors[worst] else 'reason'}: {why}"
        return head + (f"; {self.compared}" if self.compared else "")

    def _ci_text(self) -> str:
        ci = self.ci
        return f" (95% CI {ci[0]:.4g}..{ci[1]:.4g})" if ci is not None else ""

    def _telling_repeat(self) -> int:
        """The repeat whose reason explains the verdict: the first failing one, else 0."""
        for index, ok in enumerate(self.passed_repeats):
            if not ok:
                return index
        return 0


def within(score: float, low: float | None, high: float | None) -> bool:
    return (low is None or score >= low) and (high is None or score <= high)


def _fmt(score: float | None) -> str:
    return "none" if score is None else f"{score:.4g}"


def assert_score(
    scorer_or_config: Any,
    *,
    input: Any = None,
    output: Any = None,
    expected_output: Any = None,
    context: Any = None,
    min: float | None = None,
    max: float | None = None,
    repeats: int = 1,
    require: Require = "all",
    reuse_cache: bool = False,
    metadata: dict[str, Any] | None = None,
    timeout_s: float | None = None,
) -> CaseVerdict:
    """Score one case and raise ``AssertionError`` unless the score is at least ``min``
    and/or at most ``max`` (on the scorer's own scale), under the ``require`` rule for
    repeats. ``scorer_or_config``: a scorer type id, a config dict, a ``ScorerConfig`` or a
    ``Scorer``. Returns the ``CaseVerdict``."""
    low, high = _limits(min, max)
    rule = check_require(require)
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1 (got {repeats})")
    item = Item(
        id="case",
        input=input,
        output=output,
        expected_output=expected_output,
        context=context,
        metadata=metadata or {},
    )
    fresh = repeats > 1 and not reuse_cache
    result = run_sync(lambda: _run_case(item, scorer_or_config, repeats, fresh, timeout_s))
    if len(result.info.scorers) != 1:
        raise ValueError(
            f"assert_score takes one scorer (got {len(result.info.scorers)}); "
            "call it once per scorer"
        )
    spec = result.info.scorers[0]
    outcomes = [_outcome(list(r.scores.values()), r.error) for r in result.results]
    verdict = CaseVerdict(
        scorer_id=spec.id,
        scores=[score for score, _, _ in outcomes],
        min=low,
        max=high,
        require=rule,
        passed_repeats=[n is not None and within(n, low, high) for n, _, _ in outcomes],
        reasons=[reason for _, reason, _ in outcomes],
        errors=[error for _, _, error in outcomes],
        cache_reused=repeats > 1 and reuse_cache,
        compared=_compared(output, expected_output),
    )
    verdict = _record(verdict, item, result)
    if not verdict.passed:
        raise AssertionError(verdict.message())
    return verdict


async def _run_case(
    item: Item, scorer: Any, repeats: int, fresh: bool, timeout_s: float | None
) -> RunResult:
    from assay.models.cache import fresh_samples

    options = RunOptions(
        concurrency=repeats, repeats=repeats, progress=False, timeout_s=timeout_s, gc_freeze=False
    )
    if not fresh:
        return await run_evals_async([item], None, [scorer], options=options)
    with fresh_samples():
        return await run_evals_async([item], None, [scorer], options=options)


def _limits(low: float | None, high: float | None) -> tuple[float | None, float | None]:
    if low is None and high is None:
        raise ValueError("assert_score needs min= and/or max= (the worst acceptable score)")
    for name, value in (("min", low), ("max", high)):
        if value is not None and (isinstance(value, bool) or not math.isfinite(float(value))):
            raise ValueError(f"assert_score {name}={value!r}: expected a finite number")
    if low is not None and high is not None and low > high:
        raise ValueError(f"assert_score: min {low:g} is above max {high:g}")
    return (None if low is None else float(low)), (None if high is None else float(high))


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compared(output: Any, expected: Any) -> str | None:
    if output is None:
        return None
    shown = f"output {_short(output)}"
    return shown + (f" vs expected {_short(expected)}" if expected is not None else "")


def _outcome(
    scores: Sequence[ScoreResult], target_error: TargetError | None
) -> tuple[float | None, str | None, str | None]:
    """(score, reason, error) of one repeat; an error or a declined score has no number."""
    if not scores:
        message = target_error.message if target_error is not None else "no score"
        return None, None, f"target error: {message}"
    score = scores[0]
    if score.status == "error":
        message = score.error.message if score.error is not None else "scorer error"
        return None, score.reason, message
    if score.status == "not_scorable":
        return None, score.reason, f"not scorable: {score.reason or 'the scorer declined'}"
    return score.score, score.reason, None


def _record(verdict: CaseVerdict, item: Item, result: RunResult) -> CaseVerdict:
    """Under pytest with the plugin: keep the case for the test's run and put its numbers
    into the test's JUnit properties."""
    from assay.testing.session import current_test, session_for

    node = current_test()
    if node is None:
        return verdict
    session = session_for(node.config)
    if session is None:
        return verdict
    case_id = session.record_case(
        node, item, result.results, list(result.info.scorers), result.info.target
    )
    verdict = verdict.model_copy(update={"item_id": case_id})
    add_properties(node, verdict)
    return verdict


def add_properties(node: Any, verdict: CaseVerdict) -> None:
    """``assay.<scorer>.<field>`` user properties (``#2`` after the scorer for a second
    case of the same scorer in one test)."""
    props: list[tuple[str, object]] = node.user_properties
    base = f"assay.{verdict.scorer_id}"
    taken = {name for name, _ in props}
    n = 1
    key = base
    while f"{key}.score" in taken:
        n += 1
        key = f"{base}#{n}"
    mean = verdict.mean
    props.append((f"{key}.score", "none" if mean is None else f"{mean:.6g}"))
    if verdict.min is not None:
        props.append((f"{key}.min", f"{verdict.min:g}"))
    if verdict.max is not None:
        props.append((f"{key}.max", f"{verdict.max:g}"))
    props.append((f"{key}.passed", str(verdict.passed).lower()))
    why = verdict.errors[verdict._telling_repeat()] or verdict.reasons[verdict._telling_repeat()]
    if why:
        props.append((f"{key}.reason", why[:1000]))
    if verdict.repeats > 1:
        props.append((f"{key}.repeats", str(verdict.repeats)))
        props.append((f"{key}.require", verdict.require))
        props.append((f"{key}.scores", ",".join(_fmt(s) for s in verdict.scores)))
        ci = verdict.ci
        if ci is not None:
            props.append((f"{key}.ci", f"{ci[0]:.4g}..{ci[1]:.4g}"))
        props.append((f"{key}.pass_all", str(verdict.pass_all).lower()))
        props.append((f"{key}.pass_any", str(verdict.pass_any).lower()))
        props.append((f"{key}.flipped", str(verdict.flipped).lower()))
        props.append((f"{key}.cache", "reused" if verdict.cache_reused else "bypassed"))
