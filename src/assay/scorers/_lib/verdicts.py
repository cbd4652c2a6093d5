"""Typed verdict labels and answer checks shared by the judge scorers.

Labels: every verdict field of a judge's answer is a ``Literal`` of exactly the labels its
prompt asks for, so the JSON Schema sent to the judge carries an ``enum`` and any other label
("definitely supported", "maybe") fails validation: one repair turn, then ``status="error"``,
never a silent "no". Where a scorer has always compared labels after lower-casing (and
trimming), ``LOWERED``/``TRIMMED_LOWERED`` normalise the answer before the check, so those
answers still count as before; elsewhere the comparison stays exact.

Checks: when a judge step judges items known before the call (the claims of the preprocess
step, the context passages, the tool calls, ...), ``one_per``/``each_once`` build the step's
``check`` (see ``assay.scoring.steps.JudgeStep``). A count that differs from the items is
then a validation failure with a message the repair turn shows the model, e.g.
``expected 3 entries in "verdicts", one per claim, got 1``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence, Sized
from typing import Any

from pydantic import BaseModel, BeforeValidator

from assay.scoring.context import StepContext
from assay.scoring.steps import AnswerCheck


def _lowered(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _trimmed_lowered(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


LOWERED = BeforeValidator(_lowered)
"""``Annotated[Literal[...], LOWERED]``: the label is lower-cased before the check."""

TRIMMED_LOWERED = BeforeValidator(_trimmed_lowered)
"""``Annotated[Literal[...], TRIMMED_LOWERED]``: trimmed and lower-cased before the check."""


def count_mismatch(expected: int | str, field: str, what: str, got: int) -> str:
    """The message of a count check: ``expected 3 entries in "verdicts", one per claim,
    got 1``."""
    noun = "entry" if expected == 1 else "entries"
    return f'expected {expected} {noun} in "{field}", one per {what}, got {got}'


def one_per(items_of: Callable[[StepContext], Sized | None], field: str, what: str) -> AnswerCheck:
    """A check that the answer's list ``field`` has exactly one entry per item of
    ``items_of(ctx)`` (``None``: nothing to check for this run)."""

    def check(ctx: StepContext, answer: BaseModel) -> None:
        items = items_of(ctx)
        if items is None:
            return
        entries: Sized = getattr(answer, field)
        if len(entries) != len(items):
            raise ValueError(count_mismatch(len(items), field, what, len(entries)))

    return check


def each_once(
    keys_of: Callable[[StepContext], Sequence[Hashable] | None],
    field: str,
    key: str,
    what: str,
) -> AnswerCheck:
    """A check that the answer's list ``field`` has exactly one entry per key of
    ``keys_of(ctx)``, each entry naming its key in ``key`` (any order); ``None``: nothing
    to check for this run."""

    def check(ctx: StepContext, answer: BaseModel) -> None:
        keys = keys_of(ctx)
        if keys is None:
            return
        entries: Sequence[Any] = getattr(answer, field)
        if len(entries) != len(keys):
            raise ValueError(count_mismatch(len(keys), field, what, len(entries)))
        got = Counter(getattr(entry, key) for entry in entries)
        if got == Counter(keys):
            return
        missing = [k for k in keys if k not in got]
        extra = [k for k, n in got.items() if n > 1 or k not in keys]
        raise ValueError(
            f'"{field}" needs exactly one entry per {what}, identified by "{key}": '
            f"none for {', '.join(map(repr, missing))}; "
            f"unexpected or repeated {', '.join(map(repr, extra))}"
        )

    return check
