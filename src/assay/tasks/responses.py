"""A document's responses, in the one shape both the model path and recorded predictions use.

``responses`` for one doc is exactly what lm-eval's recorded outputs look like (and what
``assay tasks run --predictions`` reads), by output type:

* ``generate_until``: a string, or a list of strings (one per repeat);
* ``multiple_choice``: one ``[logprob, is_greedy]`` per choice, followed by one
  unconditional ``[logprob, is_greedy]`` per choice when the task asks for
  ``acc_mutual_info``;
* ``loglikelihood``: one ``[logprob, is_greedy]``;
* ``loglikelihood_rolling``: one logprob.

``instances`` turns that into lm-eval's *instances*: one list of repeats per request, the
input of every filter pipeline. Shapes are checked here, so a prediction file with the
wrong shape fails with the document it is about instead of producing a wrong number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any, Literal

OutputType = Literal["generate_until", "multiple_choice", "loglikelihood", "loglikelihood_rolling"]


class ResponseShapeError(ValueError):
    """A document's responses do not have the shape its task's output type needs."""


def _logprob(value: Any, where: str) -> float:
    """A log-probability: a real number, finite or minus infinity (never NaN or +inf)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ResponseShapeError(f"{where}: expected a log-probability (a number), got {value!r}")
    number = float(value)
    if math.isnan(number) or number == math.inf:
        raise ResponseShapeError(f"{where}: {number} is not a log-probability")
    return number


def loglikelihood_pair(value: Any, where: str) -> tuple[float, bool]:
    """``[logprob, is_greedy]`` checked and as a tuple."""
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, Sequence)
        or len(value) != 2
        or not isinstance(value[1], bool)
    ):
        raise ResponseShapeError(f"{where}: expected [logprob, is_greedy], got {value!r}")
    return (_logprob(value[0], where), value[1])


def instances(
    output_type: OutputType, responses: Any, *, choices: int = 0, mutual_info: bool = False
) -> list[list[Any]]:
    """The per-request lists of repeats for one document's ``responses``.

    ``choices`` is the number of answer choices (multiple choice only); with
    ``mutual_info`` the responses must also hold the unconditional log-likelihoods.
    """
    if output_type == "generate_until":
        if isinstance(responses, str):
            return [[responses]]
        if isinstance(responses, list) and responses and all(isinstance(r, str) for r in responses):
            return [list(responses)]
        raise ResponseShapeError(
            f"generate_until: expected a string or a non-empty list of strings, got {responses!r}"
        )
    if output_type == "loglikelihood":
        return [[loglikelihood_pair(responses, "loglikelihood")]]
    if output_type == "loglikelihood_rolling":
        return [[_logprob(responses, "loglikelihood_rolling")]]
    if output_type == "multiple_choice":
        expected = choices * (2 if mutual_info else 1)
        if not isinstance(responses, list) or len(responses) != expected:
            got = len(responses) if isinstance(responses, list) else type(responses).__name__
            what = " (conditional, then unconditional)" if mutual_info else ""
            raise ResponseShapeError(
                f"multiple_choice: expected {expected} [logprob, is_greedy] pairs{what} for "
                f"{choices} choices, got {got}"
            )
        return [
            [loglikelihood_pair(pair, f"multiple_choice response {i}")]
            for i, pair in enumerate(responses)
        ]
    raise ResponseShapeError(f"unknown output_type {output_type!r}")


def as_json(value: Any) -> Any:
    """Tuples as lists, recursively: how a filtered value looks once stored or printed."""
    if isinstance(value, (list, tuple)):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value
