"""A judge declaration that mypy checks (tests/scorers/_lib/test_judge_scorer_typing.py).

Each line marked ``# error: <code>`` must be reported by ``mypy --strict`` with that code,
and no other line may be: the typed ``View``/``Prompt`` make a wrong attribute of a step's
answer, a prompt answering with the wrong model, or a wrong getter a type error. This file
is data for that test, not imported by it. It imports what it declares from
``assay.scorers``, the documented public path, as a plugin outside this package would.
"""

from __future__ import annotations

from pydantic import BaseModel

from assay.scorers import (  # the public import a third-party judge uses
    JudgeScorer,
    Prompt,
    ReasonedJudgeParams,
    View,
    one_per_item,
    register_scorer,
)


class Params(ReasonedJudgeParams):
    strict: bool = False


class Claims(BaseModel):
    claims: list[str]


class Verdict(BaseModel):
    verdict: str


class Verdicts(BaseModel):
    verdicts: list[Verdict]


J = View[Params, Claims, Verdicts]


@register_scorer("typing-case", label="Typing case", params=Params)
class Typed(JudgeScorer[Params, Claims, Verdicts]):
    """A well-typed judge with a few deliberate mistakes."""

    instructions = "You judge."
    preprocess = Prompt("List the claims.", Claims, inputs={"response": lambda j: j.output})
    analyze = Prompt(
        "One verdict per claim.",
        Verdicts,
        inputs={
            "claims": lambda j: j.pre.claims,
            "typo": lambda j: j.pre.claimz,  # error: attr-defined
        },
        check=one_per_item(lambda j: j.pre.claims, "verdicts", "claim"),
    )

    def score(self, j: J) -> float:
        good = sum(v.verdict == "yes" for v in j.analysis.verdicts)
        if j.params.strict:
            return float(len(j.analysis.verdictz))  # error: attr-defined
        return good / max(len(j.pre.claims), 1)

    def reason(self, j: J) -> str:
        claims: list[int] = j.pre.claims  # error: assignment
        return str(claims)


@register_scorer("typing-case-2", label="Typing case 2", params=Params)
class WrongAnswer(JudgeScorer[Params, Claims, Verdicts]):
    """An analyze prompt that answers with the preprocess model."""

    instructions = "You judge."
    analyze = Prompt("One verdict per claim.", Claims)  # error: arg-type
